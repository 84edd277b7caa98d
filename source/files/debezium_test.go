package files_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
)

// dbzSchema is an envelope schema whose row images have an int32 id, a
// string name and a decimal(10,2) price.
const dbzSchema = `{"type":"struct","fields":[` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},` +
	`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"}],"optional":true,"field":"before"},` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},` +
	`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"}],"optional":true,"field":"after"},` +
	`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false}`

func TestReadDebezium(t *testing.T) {
	cases := []struct {
		name    string
		content string
		types   map[string]arrow.DataType
		want    map[string][]any
	}{
		{"without schema",
			`{"before":null,"after":{"id":1,"name":"Ann"},"source":{"lsn":100},"op":"r","ts_ms":1000}` + "\n" +
				"null\n\n" +
				`{"before":{"id":1,"name":"Ann"},"after":{"id":1,"name":"Bea"},"source":{"lsn":200},"op":"u","ts_ms":2000}` + "\n" +
				`{"before":{"id":1,"name":null},"after":null,"source":{"lsn":300},"op":"d","ts_ms":3000}` + "\n" +
				`{"before":null,"after":{"id":2,"name":"Cy"},"source":{"connector":"mysql"},"op":"c"}`,
			map[string]arrow.DataType{"id": arrow.PrimitiveTypes.Int64, "name": arrow.BinaryTypes.String},
			map[string][]any{
				"id": {int64(1), int64(1), int64(1), int64(2)}, "name": {"Ann", "Bea", nil, "Cy"},
				"__op": {"r", "u", "d", "c"}, "__source_lsn": {int64(100), int64(200), int64(300), nil},
				"__ts_ms": {int64(1000), int64(2000), int64(3000), nil},
			}},
		{"with schema",
			`{"schema":` + dbzSchema + `,"payload":{"before":null,"after":{"id":1,"name":"Ann","price":"MDk="},"op":"c","ts_ms":1000}}` + "\n" +
				`{"schema":null,"payload":null}` + "\n" +
				`{"schema":` + dbzSchema + `,"payload":{"before":{"id":1,"name":"Ann","price":"MDk="},"after":null,"source":{"lsn":7},"op":"d","ts_ms":2000}}` + "\n",
			map[string]arrow.DataType{"id": arrow.PrimitiveTypes.Int32, "name": arrow.BinaryTypes.String, "price": &arrow.Decimal128Type{Precision: 10, Scale: 2}},
			map[string][]any{
				"id": {"1", "1"}, "price": {"123.45", "123.45"},
				"__op": {"c", "d"}, "__source_lsn": {nil, int64(7)}, "__ts_ms": {int64(1000), int64(2000)},
			}},
		{"only tombstones", "null\n\nnull\n", nil, map[string][]any{"__op": nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			part, _ := onePart(t, config.Source{Format: "debezium-json"}, "f.json", tc.content)
			tb, err := readPart(t, part)
			if err != nil {
				t.Fatal(err)
			}
			names := fieldNames(tb.schema)
			if n := len(names); n < 3 || !slices.Equal(names[n-3:], []string{"__op", "__source_lsn", "__ts_ms"}) || n-3 != len(tc.types) {
				t.Fatalf("columns %v, want the row's %d then __op, __source_lsn, __ts_ms", names, len(tc.types))
			}
			for col, want := range tc.types {
				if f, ok := tb.schema.FieldsByName(col); !ok || !arrow.TypeEqual(f[0].Type, want) {
					t.Errorf("column %s: %v, want %v", col, f, want)
				}
			}
			for col, want := range tc.want {
				if got := tb.cols[col]; !slices.Equal(got, want) {
					t.Errorf("column %s: %q, want %q", col, got, want)
				}
			}
		})
	}
}

// A column the table has is read as the table's type where the values
// allow, as for JSON lines.
func TestReadDebeziumTableTypes(t *testing.T) {
	l := newLanding(t, config.Source{Format: "debezium-json"})
	l.write("f.json", `{"op":"c","after":{"id":1,"zip":501}}`+"\n")
	l.src.SetTableSchema(iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "zip", Type: iceberg.PrimitiveTypes.String}))
	parts := l.plan(all)
	tb, err := readPart(t, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.cols["zip"]; !slices.Equal(got, []any{"501"}) {
		t.Errorf("zip %q, want the text 501", got)
	}
}

func TestReadDebeziumBadFiles(t *testing.T) {
	ok := `{"op":"c","after":{"id":1}}` + "\n"
	cases := []struct{ name, content, want string }{
		{"truncate", ok + "\n" + `{"op":"t","source":{"lsn":5}}` + "\n", `line 3: op "t" truncates the source table, and floe does not apply truncates`},
		{"unknown op", ok + `{"op":"m","after":{"id":1}}` + "\n", `line 2: unknown op "m"`},
		{"delete without before", ok + `{"op":"d","before":null}` + "\n", `line 2: op "d" has no "before" row image`},
		{"update without after", `{"op":"u","before":{"id":1}}` + "\n", `line 1: op "u" has no "after" row image`},
		{"malformed", ok + ok + `{"op":"c","after":` + "\n", "line 3: malformed JSON"},
		{"two kinds in a column", ok + `{"op":"c","after":{"id":"x"}}` + "\n", "line 2: field id holds both number and string values; write the events with their schema"},
		{"schema on some lines only", ok + `{"schema":` + dbzSchema + `,"payload":{"op":"c","after":{"id":1}}}` + "\n", "line 2: the events of one input must all come with their schema or all without (line 1 differs)"},
		{"a type that changes", `{"schema":` + dbzSchema + `,"payload":{"op":"c","after":{"id":1}}}` + "\n" +
			`{"schema":` + strings.ReplaceAll(dbzSchema, `"int32"`, `"int64"`) + `,"payload":{"op":"c","after":{"id":1}}}` + "\n",
			`line 2: column "id" is int64 here but int32`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, config.Source{Format: "debezium-json"})
			path := l.writeAged("f.json", tc.content, time.Hour)
			_, err := readPart(t, l.plan(all)[0])
			if bf := badFile(t, err, path); !strings.Contains(bf.Err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
		})
	}
}
