package conform

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
)

// nameIndex finds want among the names of items: an exact match first,
// else one that differs only in case, as Spark resolves columns by
// default. It returns -1 when there is neither.
func nameIndex[T any](items []T, name func(T) string, want string) int {
	for i, it := range items {
		if name(it) == want {
			return i
		}
	}
	for i, it := range items {
		if strings.EqualFold(name(it), want) {
			return i
		}
	}
	return -1
}

func arrowName(f arrow.Field) string           { return f.Name }
func icebergName(f iceberg.NestedField) string { return f.Name }

// fieldIndex finds a column of an Arrow schema or struct by name.
func FieldIndex(fields []arrow.Field, name string) int { return nameIndex(fields, arrowName, name) }

func structFieldIndex(st *arrow.StructType, name string) int { return FieldIndex(st.Fields(), name) }

func IcebergFieldIndex(fields []iceberg.NestedField, name string) int {
	return nameIndex(fields, icebergName, name)
}
