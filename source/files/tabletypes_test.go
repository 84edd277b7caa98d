package files_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
)

// tablePart lands one file and returns its part, read with the table's
// columns handed to the source first, as the pipeline does.
func tablePart(t *testing.T, format string, table *iceberg.Schema, name, content string) source.Part {
	t.Helper()
	l := newLanding(t, config.Source{Format: format})
	l.write(name, content)
	l.src.SetTableSchema(table)
	parts := l.plan(all)
	if len(parts) != 1 {
		t.Fatalf("planned %d parts for one file", len(parts))
	}
	return parts[0]
}

// A column the table has is read as the table's type where its values
// allow; the others keep their inferred types, for conform to match.
func TestTableTypes(t *testing.T) {
	table := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "zip", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "ratio", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
	)
	cases := []struct {
		name, format, content string
		types                 map[string]arrow.DataType
		values                map[string]string // column -> its values as fmt prints them
	}{
		{"csv", "csv", "ZIP,ratio,amount,day,n,other\n00501,1,2.5,2024-01-31,7,x\n02134,0.5,3,2024-02-01,8,y\n",
			map[string]arrow.DataType{"ZIP": arrow.BinaryTypes.String, "ratio": arrow.PrimitiveTypes.Float32,
				"amount": &arrow.Decimal128Type{Precision: 10, Scale: 2}, "day": arrow.FixedWidthTypes.Date32,
				"n": arrow.PrimitiveTypes.Int64, "other": arrow.BinaryTypes.String},
			map[string]string{"ZIP": "[00501 02134]", "ratio": "[1 0.5]", "amount": "[2.5 3]"}},
		{"csv keeps what does not fit", "csv", "zip,n\n1,AB12\n",
			map[string]arrow.DataType{"zip": arrow.BinaryTypes.String, "n": arrow.BinaryTypes.String}, nil},
		{"json", "json", `{"zip":501,"ratio":1,"amount":"2.5","day":"2024-01-31","n":7}` + "\n" + `{"zip":null,"ratio":0.5,"amount":"3","day":null,"n":null}` + "\n",
			map[string]arrow.DataType{"zip": arrow.BinaryTypes.String, "ratio": arrow.PrimitiveTypes.Float32,
				"amount": &arrow.Decimal128Type{Precision: 10, Scale: 2}, "day": arrow.FixedWidthTypes.Date32, "n": arrow.PrimitiveTypes.Int64},
			map[string]string{"zip": "[501 <nil>]", "ratio": "[1 0.5]", "amount": "[2.5 3]"}},
		{"json booleans as text", "json", `{"zip":true}` + "\n",
			map[string]arrow.DataType{"zip": arrow.BinaryTypes.String}, map[string]string{"zip": "[true]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb, err := readPart(t, tablePart(t, tc.format, table, "f."+tc.format, tc.content))
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range tc.types {
				i := tb.schema.FieldIndices(col)
				if len(i) == 0 || !arrow.TypeEqual(tb.schema.Field(i[0]).Type, want) {
					t.Errorf("column %s: schema %v, want type %v", col, tb.schema, want)
				}
			}
			for col, want := range tc.values {
				if got := fmt.Sprint(tb.cols[col]); got != want {
					t.Errorf("column %s: %s, want %s", col, got, want)
				}
			}
		})
	}
}

// A UTF-8 byte order mark is skipped: the first column is "id", in CSV
// (with a header, inferred or matched to source.schema) and JSON lines.
func TestByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	cases := []struct {
		name    string
		cfg     config.Source
		file    string
		content string
	}{
		{"csv", config.Source{Format: "csv"}, "f.csv", bom + "id,v\n1,a\n"},
		{"csv with a schema", config.Source{Format: "csv", Schema: []config.Column{{Name: "id", Type: "long"}, {Name: "v", Type: "string"}}}, "f.csv", bom + "id,v\n1,a\n"},
		{"json", config.Source{Format: "json"}, "f.json", bom + `{"id":1,"v":"a"}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			part, _ := onePart(t, tc.cfg, tc.file, tc.content)
			tb, err := readPart(t, part)
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldNames(tb.schema); !slices.Equal(got, []string{"id", "v"}) {
				t.Fatalf("columns %q, want id and v", got)
			}
			if got := tb.cols["id"]; !slices.Equal(got, []any{int64(1)}) {
				t.Fatalf("id %v", got)
			}
		})
	}
}
