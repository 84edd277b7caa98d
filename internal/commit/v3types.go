package commit

import (
	"fmt"
	"slices"

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

// withDefaults gives the top-level columns of sc that defaults name
// (sink.column-defaults) their value as write-default and initial-default.
func withDefaults(tableName string, sc *iceberg.Schema, defaults map[string]string, version int) (*iceberg.Schema, error) {
	if len(defaults) == 0 {
		return sc, nil
	}
	fields := slices.Clone(sc.Fields())
	changed := false
	for i, f := range fields {
		v, ok := defaults[f.Name]
		if !ok {
			continue
		}
		lit, err := defaultLiteral(tableName, f.Name, v, f.Type, version)
		if err != nil {
			return nil, err
		}
		fields[i].InitialDefault, fields[i].WriteDefault = lit.Any(), lit.Any()
		changed = true
	}
	if !changed {
		return sc, nil
	}
	return iceberg.NewSchemaWithIdentifiers(sc.ID, sc.IdentifierFieldIDs, fields...), nil
}

// defaultLiteral reads a column's configured default as its type. Default
// values are a format-version 3 feature.
func defaultLiteral(tableName, column, value string, t iceberg.Type, version int) (iceberg.Literal, error) {
	if version < 3 {
		return nil, fmt.Errorf("%w: sink.column-defaults gives column %q of table %s a default, but default values need a format-version 3 table and it is format-version %d; set sink.format-version: 3 for a new table, or upgrade this one", ingest.ErrConfig, column, tableName, version)
	}
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type, iceberg.StringType:
	default:
		// iceberg-go v0.7.0 writes other types' defaults in a JSON form
		// that Iceberg's Java readers refuse (a date as a number).
		return nil, fmt.Errorf("%w: sink.column-defaults gives column %q of table %s a default, but it is %s; floe sets defaults of boolean, int, long, float, double and string columns; remove it", ingest.ErrConfig, column, tableName, t)
	}
	lit, err := iceberg.NewLiteral(value).To(t)
	if err != nil {
		return nil, fmt.Errorf("%w: sink.column-defaults: %q is no %s for column %q of table %s (%v); write it as Iceberg writes such a value as text, e.g. %s", ingest.ErrConfig, value, t, column, tableName, err, defaultExample(t))
	}
	return lit, nil
}

func defaultExample(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.BooleanType:
		return "true"
	case iceberg.Int32Type, iceberg.Int64Type:
		return "0"
	}
	return "0.5"
}
