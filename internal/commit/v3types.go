package commit

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

// v3Type names the first column of fields whose type only format-version 3
// tables hold (timestamp_ns, timestamptz_ns, variant), with that type.
func v3Type(path string, fields []iceberg.NestedField) (string, iceberg.Type, bool) {
	for _, f := range fields {
		name := f.Name
		if path != "" {
			name = path + "." + f.Name
		}
		switch t := f.Type.(type) {
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.VariantType:
			return name, t, true
		case *iceberg.StructType:
			if n, tt, ok := v3Type(name, t.FieldList); ok {
				return n, tt, true
			}
		case *iceberg.ListType:
			if n, tt, ok := v3Type(name, []iceberg.NestedField{t.ElementField()}); ok {
				return n, tt, true
			}
		case *iceberg.MapType:
			if n, tt, ok := v3Type(name, []iceberg.NestedField{t.KeyField(), t.ValueField()}); ok {
				return n, tt, true
			}
		}
	}
	return "", nil, false
}

// checkFormatVersion refuses a schema with a format-version 3 type for a
// table of an older version, naming the column and both ways on: the
// version (fix) or a conversion upstream. Nanoseconds are never truncated
// to fit: Spark and Iceberg lose precision only when told to.
func checkFormatVersion(tableName string, sc *iceberg.Schema, version int, fix string) error {
	if version >= 3 {
		return nil
	}
	name, t, ok := v3Type("", sc.Fields())
	if !ok {
		return nil
	}
	other := "convert it before floe reads it"
	switch t.(type) {
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		other = "cast it to microseconds before floe reads it, or write it to an existing table's microsecond timestamp column, which takes values of whole microseconds"
	case iceberg.VariantType:
		other = "turn it into a string of JSON before floe reads it"
	}
	return fmt.Errorf("%w: column %q is %s, which Iceberg stores only in format-version 3 tables, and table %s is format-version %d; %s, or %s", ingest.ErrSchemaMismatch, name, t, tableName, version, fix, other)
}

// fitsCreated checks that rows of schema in can be written to a table of
// schema sc, as the writer will map them: otherwise the batch would fail
// after creating the table.
func fitsCreated(tableName string, in *arrow.Schema, sc *iceberg.Schema) error {
	out, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return fmt.Errorf("%w: cannot create table %s from the input schema: %v", ingest.ErrSchemaMismatch, tableName, err)
	}
	if _, err := conform.NewConformer(tableName, in, out, conform.Options{AllowNullable: true, AllowReorder: true}); err != nil {
		return fmt.Errorf("create table %s: %w", tableName, err)
	}
	return nil
}
