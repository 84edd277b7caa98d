package jsonrows

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/floe-io/floe/config"
)

// AsTable reads a column the destination table has as the table's type
// instead of the type inferred from one file, where the file's values can
// be read so; other columns keep their inferred types, which conform then
// matches to the table as before. Reading as the table's type is what
// makes a later file fit the table that earlier files made:
//   - a string column takes any values as text: CSV numbers keep their
//     leading zeros, and a JSON number or boolean is read as its JSON text,
//     as Spark reads a JSON value into a string column (the column names
//     are returned, for the JSON reader);
//   - float and decimal columns take numbers (a JSON decimal also a
//     string), which would otherwise be inferred as double or long;
//   - date, time and timestamp columns take JSON strings, which inference
//     never reads as dates;
//   - a variant column takes any JSON value, objects and arrays too.
//
// A column matches the table's by name, exactly or else ignoring case, as
// the table's columns are matched.
func AsTable(inferred, table *arrow.Schema, json bool) (*arrow.Schema, []string) {
	if table == nil {
		return inferred, nil
	}
	fields := inferred.Fields()
	var asText []string
	for i, f := range fields {
		j := FieldIndex(table, f.Name)
		if j < 0 {
			continue
		}
		want, from := table.Field(j).Type, f.Type.ID()
		number := from == arrow.INT64 || from == arrow.FLOAT64
		ok := false
		switch want.ID() {
		case arrow.STRING:
			if json {
				ok = number || from == arrow.BOOL
				if ok {
					asText = append(asText, f.Name)
				}
			} else {
				ok = from != arrow.STRING && from != arrow.NULL
			}
		case arrow.FLOAT32:
			ok = number
		case arrow.DECIMAL128:
			ok = number || (json && from == arrow.STRING)
		case arrow.DATE32, arrow.TIMESTAMP, arrow.TIME64:
			ok = json && from == arrow.STRING
		case arrow.EXTENSION:
			// A variant column takes any JSON value as it is.
			ok = json && isVariant(want)
		}
		if ok {
			fields[i].Type = want
		}
	}
	return arrow.NewSchema(fields, nil), asText
}

// Variants are the variant columns of a table's schema (nil for none),
// which JSON values of any kind are read into as they are.
func Variants(table *arrow.Schema) *arrow.Schema {
	if table == nil {
		return nil
	}
	var fields []arrow.Field
	for _, f := range table.Fields() {
		if isVariant(f.Type) {
			fields = append(fields, f)
		}
	}
	return arrow.NewSchema(fields, nil)
}

func isVariant(t arrow.DataType) bool {
	et, ok := t.(arrow.ExtensionType)
	return ok && extensions.IsVariantExtensionName(et.ExtensionName())
}

// FieldIndex finds a column by name, exactly or else ignoring case, as the
// table's columns are matched.
func FieldIndex(schema *arrow.Schema, name string) int {
	if idx := schema.FieldIndices(name); len(idx) > 0 {
		return idx[0]
	}
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// Explicit turns the configured columns into an Arrow schema, or nil
// when none are configured.
func Explicit(cols []config.Column) (*arrow.Schema, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := ColumnType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("source.schema[%d] %s: %w", i, c.Name, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: !c.Required}
	}
	return arrow.NewSchema(fields, nil), nil
}
