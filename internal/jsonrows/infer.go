// Package jsonrows reads JSON objects, one a line, as Arrow rows: the
// columns inferred from every value, the destination table's types taken
// where the values allow, and the reader that builds the records. The file
// source reads JSON-lines and Debezium files with it, the Kafka source
// message values.
package jsonrows

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// Kind is the columns inferred from JSON lines, one object a line: Rows
// keeping no values.
type Kind struct{ rows *Rows }

// NewObject returns the kind of no line yet.
func NewObject() *Kind {
	r := NewRows()
	r.discard = true
	return &Kind{rows: r}
}

// NewObjectWith is NewObject for files whose columns of given (by name)
// take any JSON value as that type, a variant column of the table: they
// are not inferred, so objects in one line and numbers in the next do not
// conflict. They keep their place among the keys as first seen.
func NewObjectWith(given *arrow.Schema) *Kind {
	k := NewObject()
	if given != nil && given.NumFields() > 0 {
		k.rows.given = map[string]arrow.DataType{}
		for _, f := range given.Fields() {
			k.rows.given[f.Name] = f.Type
		}
	}
	return k
}

// ObserveLine widens the columns by one line's JSON object.
func (k *Kind) ObserveLine(b []byte) error { return k.rows.Append(b) }

// Empty reports whether no key was seen.
func (k *Kind) Empty() bool { return k.rows.Empty() }

// Schema is the columns, the top level's in first-seen key order (JSON
// objects are unordered, but users expect the table's columns in the
// order of their data) and nested objects' keys sorted.
func (k *Kind) Schema() *arrow.Schema { return k.rows.Schema() }

// KindConflict is a JSON field holding two kinds of value, which no
// inferred type holds.
type KindConflict struct{ Path, Was, Is string }

func (e *KindConflict) Error() string {
	return fmt.Sprintf("field %s holds both %s and %s values; give the column a type in source.schema", e.Path, e.Was, e.Is)
}

func jsonWord(kind string) string {
	switch kind {
	case "int", "float":
		return "number"
	case "bool":
		return "boolean"
	}
	return kind
}

// ColumnType maps an Iceberg primitive type name from source.schema to the
// Arrow type the readers produce for it.
func ColumnType(name string) (arrow.DataType, error) {
	switch name {
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, nil
	case "int":
		return arrow.PrimitiveTypes.Int32, nil
	case "long":
		return arrow.PrimitiveTypes.Int64, nil
	case "float":
		return arrow.PrimitiveTypes.Float32, nil
	case "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	case "time":
		return arrow.FixedWidthTypes.Time64us, nil
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case "timestamptz":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case "timestamp_ns":
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, nil
	case "timestamptz_ns":
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, nil
	case "variant":
		// Any JSON value, kept as it is: objects, arrays and scalars alike.
		return extensions.NewDefaultVariantType(), nil
	case "string", "uuid":
		return arrow.BinaryTypes.String, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	}
	var p, s int32
	if _, err := fmt.Sscanf(strings.ReplaceAll(name, " ", ""), "decimal(%d,%d)", &p, &s); err == nil {
		return &arrow.Decimal128Type{Precision: p, Scale: s}, nil
	}
	return nil, fmt.Errorf("type %q is not supported; use boolean, int, long, float, double, date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, string, uuid, binary, variant or decimal(P,S)", name)
}
