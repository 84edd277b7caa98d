package files_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/config"
)

// schemaPart is the capability the pipeline uses to learn a part's schema
// before reading it.
type schemaPart interface {
	Schema(ctx context.Context) (*arrow.Schema, error)
}

// inferred lands one file and returns the schema its part reports, after
// checking it is the one its reader reports.
func inferred(t *testing.T, cfg config.Source, name, content string) (*arrow.Schema, string, error) {
	t.Helper()
	part, path := onePart(t, cfg, name, content)
	s, err := part.(schemaPart).Schema(t.Context())
	if err != nil {
		return nil, path, err
	}
	rdr, err := part.Open(t.Context())
	if err != nil {
		t.Fatalf("Schema worked and Open failed: %v", err)
	}
	defer rdr.Release()
	if !rdr.Schema().Equal(s) {
		t.Fatalf("Schema %v, the reader's %v", s, rdr.Schema())
	}
	return s, path, nil
}

var (
	tsType   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tstzType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// Every value of a CSV column decides its type: the narrowest type all
// non-empty values parse as, as the reader will parse them.
func TestInferCSVTypes(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   arrow.DataType
	}{
		{"ints", []string{"1", "-2", "+3", "9223372036854775807"}, arrow.PrimitiveTypes.Int64},
		{"ints beyond int64", []string{"1", "9223372036854775808"}, arrow.PrimitiveTypes.Float64},
		{"floats", []string{"1.5", "-2", "3e2", ".5"}, arrow.PrimitiveTypes.Float64},
		{"booleans", []string{"true", "False", "TRUE"}, arrow.FixedWidthTypes.Boolean},
		{"yes and no are strings", []string{"yes", "no"}, arrow.BinaryTypes.String},
		{"ones and zeros are ints", []string{"1", "0"}, arrow.PrimitiveTypes.Int64},
		{"dates", []string{"2024-01-31", "2023-12-01"}, arrow.FixedWidthTypes.Date32},
		{"an impossible date makes strings", []string{"2024-01-31", "2024-02-30"}, arrow.BinaryTypes.String},
		{"timestamps", []string{"2024-01-31 10:00:00", "2024-01-31T10:00:00.123456", "2024-01-31T10:00"}, tsType},
		{"timestamps with zones", []string{"2024-01-31T10:00:00Z", "2024-01-31 10:00:00+02:00"}, tstzType},
		{"timestamps with and without zones", []string{"2024-01-31T10:00:00Z", "2024-01-31 10:00:00"}, arrow.BinaryTypes.String},
		{"times", []string{"10:00:00", "23:59:59.5"}, arrow.FixedWidthTypes.Time64us},
		{"an impossible time makes strings", []string{"10:00:00", "25:00:00"}, arrow.BinaryTypes.String},
		// Unlike Spark's inferSchema, and as DuckDB's sniffer: zero-padded
		// digits are codes (zip codes, account numbers), whose zeros a
		// number column would drop for good.
		{"zero-padded integers are strings", []string{"02134", "10001"}, arrow.BinaryTypes.String},
		{"zero-padded negative integers are strings", []string{"-01", "5"}, arrow.BinaryTypes.String},
		{"zero-padded floats are strings", []string{"01.5", "2.5"}, arrow.BinaryTypes.String},
		{"zero itself is an int", []string{"0", "-0", "10"}, arrow.PrimitiveTypes.Int64},
		{"zero fractions are floats", []string{"0.5", "-0.25", "0e1"}, arrow.PrimitiveTypes.Float64},
		{"empty cells are nulls", []string{"", "5", ""}, arrow.PrimitiveTypes.Int64},
		{"only empty cells", []string{"", ""}, arrow.Null},
		{"a string late in the file", []string{"1", "2", "3", "n/a"}, arrow.BinaryTypes.String},
		{"strings", []string{"a", "b c", "\"quoted, with a comma\""}, arrow.BinaryTypes.String},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			content := "c,other\n" + strings.Join(tc.values, ",x\n") + ",x\n"
			s, _, err := inferred(t, config.Source{Format: "csv"}, "f.csv", content)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Field(0).Type; !arrow.TypeEqual(got, tc.want) || !s.Field(0).Nullable {
				t.Fatalf("values %q: column type %v (nullable %v), want nullable %v", tc.values, got, s.Field(0).Nullable, tc.want)
			}
		})
	}
}

// Values read as inferred: strings as written, empty cells null.
func TestInferCSVValues(t *testing.T) {
	t.Parallel()
	part, _ := onePart(t, config.Source{Format: "csv"}, "f.csv",
		"zip,n,when,ok\nMA-02134,1,2024-01-31,true\nNY-10001,,2024-02-01,\n")
	tb, err := readPart(t, part)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.cols["zip"]; !slices.Equal(got, []any{"MA-02134", "NY-10001"}) {
		t.Fatalf("zip %v", got)
	}
	if got := tb.cols["n"]; !slices.Equal(got, []any{int64(1), nil}) {
		t.Fatalf("n %v", got)
	}
	if got := tb.cols["when"]; !slices.Equal(got, []any{"2024-01-31", "2024-02-01"}) {
		t.Fatalf("when %v", got)
	}
	if got := tb.cols["ok"]; !slices.Equal(got, []any{true, nil}) {
		t.Fatalf("ok %v", got)
	}
}

// A headerless file's columns are named f0, f1, ...; a header names them,
// trimmed, and a header cell without a name is an error.
func TestInferCSVNames(t *testing.T) {
	no := false
	cases := []struct {
		name    string
		cfg     config.Source
		content string
		want    []string
		err     string
	}{
		{"header", config.Source{Format: "csv"}, " id , name\n1,a\n", []string{"id", "name"}, ""},
		{"headerless", config.Source{Format: "csv", CSV: config.CSVOptions{Header: &no}}, "1,a\n2,b\n", []string{"f0", "f1"}, ""},
		{"semicolons", config.Source{Format: "csv", CSV: config.CSVOptions{Delimiter: ";"}}, "a;b,c\n1;x,y\n", []string{"a", "b,c"}, ""},
		{"header only", config.Source{Format: "csv"}, "id,name\n", []string{"id", "name"}, ""},
		{"a nameless column", config.Source{Format: "csv"}, "id,,name\n1,2,3\n", nil, "column 2 of the header has no name"},
		{"a short row", config.Source{Format: "csv"}, "id,name\n1,a\n2\n", nil, "line 3 has 1 columns, the header has 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, path, err := inferred(t, tc.cfg, "f.csv", tc.content)
			if tc.err != "" {
				if bf := badFile(t, err, path); !strings.Contains(bf.Err.Error(), tc.err) {
					t.Fatalf("got %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldNames(s); !slices.Equal(got, tc.want) {
				t.Fatalf("columns %v, want %v", got, tc.want)
			}
		})
	}
}

// JSON lines: top-level columns in the order keys first appear, nested
// objects as structs (their fields sorted by name), arrays as lists,
// integers widened to floats where both appear, nulls typeless until a
// value comes.
func TestInferJSON(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  []arrow.Field
	}{
		{"scalars", []string{`{"a":1,"b":2.5,"c":"x","d":true}`}, []arrow.Field{
			{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Float64},
			{Name: "c", Type: arrow.BinaryTypes.String}, {Name: "d", Type: arrow.FixedWidthTypes.Boolean}}},
		{"key order of the document", []string{`{"b":1,"a":2}`, `{"c":3,"a":1}`}, []arrow.Field{
			{Name: "b", Type: arrow.PrimitiveTypes.Int64}, {Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: arrow.PrimitiveTypes.Int64}}},
		{"ints then floats", []string{`{"n":1}`, `{"n":2.5}`, `{"n":3}`}, []arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Float64}}},
		{"nested objects", []string{`{"o":{"y":1,"x":"s"}}`, `{"o":{"z":{"deep":true}}}`}, []arrow.Field{
			{Name: "o", Type: arrow.StructOf(
				arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true},
				arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				arrow.Field{Name: "z", Type: arrow.StructOf(arrow.Field{Name: "deep", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
			)}}},
		{"arrays", []string{`{"l":[1,2],"e":[],"o":[{"k":1}]}`, `{"l":[3.5],"e":[]}`}, []arrow.Field{
			{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
			{Name: "e", Type: arrow.ListOf(arrow.Null)},
			{Name: "o", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))}}},
		{"nulls", []string{`{"n":null,"m":null}`, `{"n":3}`}, []arrow.Field{
			{Name: "n", Type: arrow.PrimitiveTypes.Int64}, {Name: "m", Type: arrow.Null}}},
		{"blank lines", []string{`{"a":1}`, ``, `  `, `{"a":2}`}, []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := inferred(t, config.Source{Format: "json"}, "f.json", strings.Join(tc.lines, "\n")+"\n")
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].Nullable = true
			}
			if want := arrow.NewSchema(tc.want, nil); !s.Equal(want) {
				t.Fatalf("schema\n%v\nwant\n%v", s, want)
			}
		})
	}
}

// JSON a column cannot hold is named by line and field, in a bad-file
// error.
func TestInferJSONErrors(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"mixed types", []string{`{"m":1}`, `{"m":"x"}`}, "line 2: field m holds both number and string values"},
		{"mixed nested types", []string{`{"o":{"k":[1]}}`, `{"o":{"k":[true]}}`}, "field o.k[] holds both number and boolean values"},
		{"malformed", []string{`{"a":1}`, `{"a":`}, "line 2: malformed JSON"},
		{"not an object", []string{`[1,2]`}, "a line must hold one object"},
		{"two values", []string{`{"a":1} {"a":2}`}, "more than one value"},
		{"no objects", []string{``, ``}, "no JSON objects"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			part, path := onePart(t, config.Source{Format: "json"}, "f.json", strings.Join(tc.lines, "\n")+"\n")
			_, err := part.(schemaPart).Schema(t.Context())
			if bf := badFile(t, err, path); !strings.Contains(bf.Err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
			_, err = part.Open(t.Context())
			badFile(t, err, path)
		})
	}
}
