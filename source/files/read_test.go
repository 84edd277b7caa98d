package files_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
)

func TestReadParquet(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{Format: "parquet"})
	rec := fixture.IDRecord(0, 100)
	defer rec.Release()
	rec2 := fixture.IDRecord(100, 50)
	defer rec2.Release()
	if err := fixture.WriteParquet(l.dir+"/a.parquet", rec, rec2); err != nil {
		t.Fatal(err)
	}
	parts := l.plan(all)
	if len(parts) != 1 {
		t.Fatalf("%d parts", len(parts))
	}
	tb, err := readPart(t, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	// Field metadata (the Parquet field ids) aside.
	if got := fieldNames(tb.schema); !slices.Equal(got, []string{"id", "v"}) ||
		!arrow.TypeEqual(tb.schema.Field(0).Type, arrow.PrimitiveTypes.Int64) || !arrow.TypeEqual(tb.schema.Field(1).Type, arrow.BinaryTypes.String) {
		t.Fatalf("schema %v, want %v", tb.schema, fixture.IDSchema)
	}
	if ids := tb.cols["id"]; len(ids) != 150 || ids[0] != int64(0) || ids[149] != int64(149) || tb.cols["v"][149] != "v149" {
		t.Fatalf("read %d rows: ids %v..., v %v...", len(ids), ids[:min(3, len(ids))], tb.cols["v"][:min(3, len(ids))])
	}
}

func TestReadCSV(t *testing.T) {
	no := false
	idV := []config.Column{{Name: "id", Type: "long"}, {Name: "v", Type: "string"}}
	cases := []struct {
		name    string
		cfg     config.Source
		content string
		want    map[string][]any
		order   []string // the reader's columns
	}{
		{"header", config.Source{}, "id,v\n1,a\n2,b\n",
			map[string][]any{"id": {int64(1), int64(2)}, "v": {"a", "b"}}, []string{"id", "v"}},
		{"headerless", config.Source{CSV: config.CSVOptions{Header: &no}}, "1,a\n2,b\n",
			map[string][]any{"f0": {int64(1), int64(2)}, "f1": {"a", "b"}}, []string{"f0", "f1"}},
		{"semicolons", config.Source{CSV: config.CSVOptions{Delimiter: ";"}}, "id;v\n1;a,b\n",
			map[string][]any{"id": {int64(1)}, "v": {"a,b"}}, []string{"id", "v"}},
		{"tabs", config.Source{CSV: config.CSVOptions{Delimiter: "\t"}}, "id\tv\n1\ta b\n",
			map[string][]any{"id": {int64(1)}, "v": {"a b"}}, []string{"id", "v"}},
		{"quoted newline", config.Source{}, "id,v\n1,\"a\nb\"\n2,c\n",
			map[string][]any{"id": {int64(1), int64(2)}, "v": {"a\nb", "c"}}, []string{"id", "v"}},
		{"empty cells", config.Source{}, "id,v,w\n1,,\n,b,\n",
			map[string][]any{"id": {int64(1), nil}, "v": {nil, "b"}, "w": {nil, nil}}, []string{"id", "v", "w"}},
		{"schema, header in another order", config.Source{Schema: idV}, "v,id\na,1\nb,2\n",
			map[string][]any{"id": {int64(1), int64(2)}, "v": {"a", "b"}}, []string{"id", "v"}},
		{"schema, header names differ in case", config.Source{Schema: idV}, "ID,V\n1,a\n",
			map[string][]any{"id": {int64(1)}, "v": {"a"}}, []string{"id", "v"}},
		{"schema, nullable column missing", config.Source{Schema: append(idV, config.Column{Name: "extra", Type: "string"})}, "id,v\n1,a\n",
			map[string][]any{"id": {int64(1)}, "v": {"a"}, "extra": {nil}}, []string{"id", "v", "extra"}},
		{"schema, headerless", config.Source{Schema: idV, CSV: config.CSVOptions{Header: &no}}, "1,a\n2,b\n",
			map[string][]any{"id": {int64(1), int64(2)}, "v": {"a", "b"}}, []string{"id", "v"}},
		{"schema types", config.Source{Schema: []config.Column{{Name: "t", Type: "time"}, {Name: "d", Type: "date"}, {Name: "z", Type: "string"}}},
			"t,d,z\n10:00:01,2024-01-31,007\n,,\n",
			map[string][]any{"t": {"10:00:01.000000", nil}, "d": {"2024-01-31", nil}, "z": {"007", nil}}, []string{"t", "d", "z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Format = "csv"
			part, _ := onePart(t, tc.cfg, "f.csv", tc.content)
			tb, err := readPart(t, part)
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldNames(tb.schema); !slices.Equal(got, tc.order) {
				t.Fatalf("columns %v, want %v", got, tc.order)
			}
			for col, want := range tc.want {
				if got := tb.cols[col]; !slices.Equal(got, want) {
					t.Fatalf("column %s: %q, want %q", col, got, want)
				}
			}
		})
	}
}

func TestReadJSON(t *testing.T) {
	cases := []struct {
		name    string
		cfg     config.Source
		content string
		want    map[string][]any
	}{
		{"lines", config.Source{}, "{\"id\":1,\"v\":\"a\"}\n\n{\"v\":\"b\",\"id\":2}\n{\"id\":3}",
			map[string][]any{"id": {int64(1), int64(2), int64(3)}, "v": {"a", "b", nil}}},
		{"nested", config.Source{}, `{"o":{"k":1},"l":[1,2]}` + "\n" + `{"o":null,"l":null}` + "\n",
			map[string][]any{"o": {`{"k":1}`, nil}, "l": {"[1,2]", nil}}},
		{"schema", config.Source{Schema: []config.Column{{Name: "id", Type: "long"}, {Name: "when", Type: "date"}}},
			`{"id":1,"when":"2024-01-31","ignored":true}` + "\n",
			map[string][]any{"id": {int64(1)}, "when": {"2024-01-31"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Format = "json"
			part, _ := onePart(t, tc.cfg, "f.json", tc.content)
			tb, err := readPart(t, part)
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range tc.want {
				if got := tb.cols[col]; !slices.Equal(got, want) {
					t.Fatalf("column %s: %q, want %q", col, got, want)
				}
			}
		})
	}
}

// Input that cannot be ingested is a *source.BadFileError naming the file and
// what is wrong with it, whether Open or the reading finds out.
func TestReadBadFiles(t *testing.T) {
	idLong := []config.Column{{Name: "id", Type: "long"}}
	cases := []struct {
		name    string
		cfg     config.Source
		content string
		want    string
	}{
		{"empty csv", config.Source{Format: "csv"}, "", "empty (0 bytes)"},
		{"empty json", config.Source{Format: "json"}, "", "empty (0 bytes)"},
		{"corrupt parquet", config.Source{Format: "parquet"}, "PAR1 not really Parquet PAR1", "not a readable Parquet file"},
		{"csv short row", config.Source{Format: "csv"}, "id,v\n1,a\n2\n", "line 3 has 1 columns"},
		{"csv short row under a schema", config.Source{Format: "csv", Schema: []config.Column{{Name: "id", Type: "long"}, {Name: "v", Type: "string"}}},
			"id,v\n1,a\n2\n", "wrong number of fields"},
		{"csv column not in the schema", config.Source{Format: "csv", Schema: idLong}, "id,other\n1,a\n", `column "other" of the header is not in source.schema`},
		{"csv column twice", config.Source{Format: "csv", Schema: idLong}, "id,ID\n1,2\n", `names column "ID" twice`},
		{"csv required column missing", config.Source{Format: "csv", Schema: []config.Column{{Name: "id", Type: "long"}, {Name: "k", Type: "string", Required: true}}},
			"id\n1\n", `required column "k"`},
		{"csv value of another type", config.Source{Format: "csv", Schema: idLong}, "id\n1\nx\n", `line 3: column "id" is declared long in source.schema, but the value "x" cannot be read as long`},
		{"csv time of day", config.Source{Format: "csv", Schema: []config.Column{{Name: "t", Type: "time"}}}, "t\n10:00:00\n25:99:00\n", "row 2"},
		{"csv without a header", config.Source{Format: "csv", Schema: idLong}, "\n", "no header row"},
		{"json malformed", config.Source{Format: "json"}, "{\"a\":1}\n{\"a\":\n", "line 2: malformed JSON"},
		{"json value of another type", config.Source{Format: "json", Schema: idLong}, "{\"id\":1}\n{\"id\":\"x\"}\n", `line 2: column "id" is declared long in source.schema, but the value "x" cannot be read as long`},
		{"schema type", config.Source{Format: "json", Schema: []config.Column{{Name: "id", Type: "varchar"}}}, "{\"id\":1}\n", `type "varchar" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, tc.cfg)
			// Old enough for a Parquet file without a footer to be planned.
			path := l.writeAged("f", tc.content, time.Hour)
			parts := l.plan(all)
			if len(parts) != 1 {
				t.Fatalf("%d parts", len(parts))
			}
			_, err := readPart(t, parts[0])
			if bf := badFile(t, err, path); !strings.Contains(bf.Err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A file removed after it was planned is named as unreadable.
func TestReadRemovedFile(t *testing.T) {
	t.Parallel()
	part, path := onePart(t, config.Source{Format: "csv"}, "f.csv", "id\n1\n")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err := part.Open(t.Context())
	if bf := badFile(t, err, path); !strings.Contains(bf.Err.Error(), "cannot read the file") {
		t.Fatalf("got %v", err)
	}
}

// A file that changes after it was planned, before or while it is read, is
// a *source.UnstableFileError: it is still being written, and left for later.
func TestReadUnstableFiles(t *testing.T) {
	formats := []struct {
		name, format, content, more string
	}{
		{"csv", "csv", string(fixture.IDCSV(0, 10, ',', true)), "10,v10\n"},
		{"csv torn row", "csv", string(fixture.IDCSV(0, 10, ',', true)), "10,v10,extra\n"},
		{"json", "json", string(fixture.IDJSON(0, 10)), string(fixture.IDJSON(10, 1))},
		{"json torn line", "json", string(fixture.IDJSON(0, 10)), "{\"id\":"},
		{"parquet", "parquet", "", "garbage"},
	}
	type change struct {
		name string
		do   func(t *testing.T, path, more string)
	}
	grow := change{"grows", func(t *testing.T, path, more string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(more); err != nil {
			t.Fatal(err)
		}
	}}
	touch := change{"is touched", func(t *testing.T, path, _ string) { setAge(t, path, -time.Minute) }}
	for _, f := range formats {
		for _, ch := range []change{grow, touch} {
			for _, when := range []string{"before Schema", "before Open", "while read"} {
				t.Run(f.name+"/"+ch.name+"/"+when, func(t *testing.T) {
					t.Parallel()
					l := newLanding(t, config.Source{Format: f.format})
					path := l.dir + "/f"
					if f.format == "parquet" {
						if err := fixture.WriteIDFile(path, 0, 10); err != nil {
							t.Fatal(err)
						}
					} else {
						l.write("f", f.content)
					}
					parts := l.plan(all)
					if len(parts) != 1 {
						t.Fatalf("%d parts", len(parts))
					}
					p := parts[0]
					var err error
					switch when {
					case "before Schema":
						ch.do(t, path, f.more)
						_, err = p.(schemaPart).Schema(t.Context())
					case "before Open":
						ch.do(t, path, f.more)
						_, err = p.Open(t.Context())
					case "while read":
						rdr, oerr := p.Open(t.Context())
						if oerr != nil {
							t.Fatal(oerr)
						}
						ch.do(t, path, f.more)
						for rdr.Next() {
						}
						err = rdr.Err()
						rdr.Release()
					}
					var uf *source.UnstableFileError
					if !errors.As(err, &uf) || uf.Path != path || !errors.Is(err, floe.ErrUnstableFile) {
						t.Fatalf("got %v (%T), want a *source.UnstableFileError naming %s", err, err, path)
					}
				})
			}
		}
	}
}

// The columns' types as the readers produce them for the configured
// Iceberg types.
func TestReadSchemaTypes(t *testing.T) {
	t.Parallel()
	cols := []config.Column{
		{Name: "b", Type: "boolean"}, {Name: "i", Type: "int"}, {Name: "l", Type: "long", Required: true},
		{Name: "f", Type: "float"}, {Name: "d", Type: "double"}, {Name: "dt", Type: "date"}, {Name: "t", Type: "time"},
		{Name: "ts", Type: "timestamp"}, {Name: "tz", Type: "timestamptz"}, {Name: "s", Type: "string"},
		{Name: "u", Type: "uuid"}, {Name: "x", Type: "binary"}, {Name: "m", Type: "decimal(10, 2)"},
	}
	s, _, err := inferred(t, config.Source{Format: "json", Schema: cols}, "f.json", `{"l":1}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []arrow.DataType{arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Time64us,
		tsType, tstzType, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		&arrow.Decimal128Type{Precision: 10, Scale: 2}}
	for i, f := range s.Fields() {
		if !arrow.TypeEqual(f.Type, want[i]) || f.Nullable == cols[i].Required {
			t.Fatalf("column %s %s: %v (nullable %v), want %v (nullable %v)", f.Name, cols[i].Type, f.Type, f.Nullable, want[i], !cols[i].Required)
		}
	}
}
