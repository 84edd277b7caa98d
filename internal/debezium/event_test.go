package debezium_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/debezium"
)

// A PostgreSQL connector's source block, and MySQL's, which has no lsn.
const (
	pgSource    = `{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000000,"snapshot":"false","db":"shop","schema":"public","table":"customers","txId":771,"lsn":24023128,"xmin":null}`
	mysqlSource = `{"version":"2.7.0.Final","connector":"mysql","name":"my","ts_ms":1700000000000,"db":"shop","table":"customers","server_id":1,"file":"binlog.000003","pos":154,"row":0}`
)

func envelope(op, before, after, source, ts string) string {
	return `{"before":` + before + `,"after":` + after + `,"source":` + source + `,"op":"` + op + `","ts_ms":` + ts + `,"transaction":null}`
}

// flat decodes the event's flat row back into a map for comparison.
func flat(t *testing.T, ev debezium.Event) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(ev.Flat())))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("Flat() = %s: %v", ev.Flat(), err)
	}
	out := map[string]any{}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			v = n.String()
		}
		out[k] = v
	}
	return out
}

func TestDecodeOps(t *testing.T) {
	row1 := `{"id":1,"name":"Ann"}`
	row2 := `{"id":1,"name":"Bea"}`
	for _, tc := range []struct {
		name, line string
		want       map[string]any
	}{
		{"create", envelope("c", "null", row1, pgSource, "1700000000100"),
			map[string]any{"id": "1", "name": "Ann", "__op": "c", "__source_lsn": "24023128", "__ts_ms": "1700000000100"}},
		{"snapshot read", envelope("r", "null", row1, pgSource, "1700000000100"),
			map[string]any{"id": "1", "name": "Ann", "__op": "r", "__source_lsn": "24023128", "__ts_ms": "1700000000100"}},
		{"update takes after", envelope("u", row1, row2, pgSource, "1700000000200"),
			map[string]any{"id": "1", "name": "Bea", "__op": "u", "__source_lsn": "24023128", "__ts_ms": "1700000000200"}},
		{"delete takes before", envelope("d", row2, "null", pgSource, "1700000000300"),
			map[string]any{"id": "1", "name": "Bea", "__op": "d", "__source_lsn": "24023128", "__ts_ms": "1700000000300"}},
		{"delete with only the key", envelope("d", `{"id":1,"name":null}`, "null", pgSource, "1700000000300"),
			map[string]any{"id": "1", "name": nil, "__op": "d", "__source_lsn": "24023128", "__ts_ms": "1700000000300"}},
		{"delete whose before lists only the key", envelope("d", `{"id":1}`, "null", pgSource, "1700000000300"),
			map[string]any{"id": "1", "__op": "d", "__source_lsn": "24023128", "__ts_ms": "1700000000300"}},
		{"mysql has no lsn", envelope("c", "null", row1, mysqlSource, "1700000000100"),
			map[string]any{"id": "1", "name": "Ann", "__op": "c", "__source_lsn": nil, "__ts_ms": "1700000000100"}},
		{"no ts_ms, no source", `{"op":"c","after":{"id":1}}`,
			map[string]any{"id": "1", "__op": "c", "__source_lsn": nil, "__ts_ms": nil}},
		{"lsn as a string", `{"op":"c","after":{"id":1},"source":{"lsn":"42"},"ts_ms":"7"}`,
			map[string]any{"id": "1", "__op": "c", "__source_lsn": "42", "__ts_ms": "7"}},
		{"empty row image", `{"op":"c","after":{},"ts_ms":1}`,
			map[string]any{"__op": "c", "__source_lsn": nil, "__ts_ms": "1"}},
		{"wrapper without schema", `{"schema":null,"payload":` + envelope("c", "null", row1, pgSource, "5") + `}`,
			map[string]any{"id": "1", "name": "Ann", "__op": "c", "__source_lsn": "24023128", "__ts_ms": "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := debezium.NewDecoder().Decode([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if ev.Fields != nil {
				t.Errorf("an event without a schema has fields %v", ev.Fields)
			}
			got := flat(t, ev)
			if len(got) != len(tc.want) {
				t.Errorf("flat row %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if g, ok := got[k]; !ok || g != w {
					t.Errorf("%s = %v (present %v), want %v; row %s", k, g, ok, w, ev.Flat())
				}
			}
		})
	}
}

func TestDecodeTombstones(t *testing.T) {
	for _, line := range []string{"", "  ", "null", " null \r", `{"schema":null,"payload":null}`, `{"schema":{"type":"struct"},"payload":null}`} {
		if _, err := debezium.NewDecoder().Decode([]byte(line)); !errors.Is(err, debezium.ErrTombstone) {
			t.Errorf("Decode(%q) = %v, want ErrTombstone", line, err)
		}
	}
}

func TestDecodeBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"unknown op", envelope("x", "null", `{"id":1}`, pgSource, "1"),
			[]string{`unknown op "x"`, "c (create), r (read), u (update), d (delete) or t (truncate"}},
		{"op not a string", `{"op":1,"after":{"id":1}}`, []string{"op 1 is not a string", "c (create)"}},
		{"no op", `{"id":1,"name":"Ann"}`, []string{`no "op" field`, "format json"}},
		{"create without after", envelope("c", "null", "null", pgSource, "1"), []string{`op "c" has no "after" row image`, "quarantine"}},
		{"read without after", `{"op":"r","before":null}`, []string{`op "r" has no "after" row image`}},
		{"update without after", envelope("u", `{"id":1}`, "null", pgSource, "1"), []string{`op "u" has no "after" row image`}},
		{"delete without before", envelope("d", "null", "null", pgSource, "1"), []string{`op "d" has no "before" row image`, "REPLICA IDENTITY", "quarantine"}},
		{"truncate", `{"before":null,"after":null,"source":` + pgSource + `,"op":"t","ts_ms":1}`,
			[]string{`op "t" truncates`, "floe does not apply truncates", "quarantine the file"}},
		{"malformed", `{"op":"c","after":{"id":1}`, []string{"malformed JSON"}},
		{"not an object", `[1,2]`, []string{"malformed JSON", "JSON object"}},
		{"after not an object", `{"op":"c","after":[1]}`, []string{`"after" is [1], not an object`}},
		{"lsn not an integer", `{"op":"c","after":{"id":1},"source":{"lsn":"0/16B3748"}}`, []string{`source.lsn "0/16B3748" is not an integer`}},
		{"ts_ms not an integer", `{"op":"c","after":{"id":1},"ts_ms":1.5}`, []string{"ts_ms 1.5 is not an integer"}},
		{"a column named like the metadata", `{"op":"c","after":{"id":1,"__op":"x"}}`, []string{`column "__op"`, "rename"}},
		{"a schema column named like the metadata", `{"schema":` + schemaOf(`{"type":"int64","optional":true,"field":"__ts_ms"}`) + `,"payload":{"op":"c","after":{"__ts_ms":1}}}`,
			[]string{`column "__ts_ms"`, "rename"}},
		{"a row column named like the metadata, not in the schema", `{"schema":` + schemaOf(`{"type":"int64","optional":true,"field":"id"}`) + `,"payload":{"op":"c","after":{"id":1,"__source_lsn":2}}}`,
			[]string{`column "__source_lsn"`, "rename"}},
		{"a schema without after", `{"schema":{"type":"struct","fields":[]},"payload":{"op":"c","after":{"id":1}}}`,
			[]string{`no struct field "after"`, "schemas.enable=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := debezium.NewDecoder().Decode([]byte(tc.line))
			if err == nil || errors.Is(err, debezium.ErrTombstone) {
				t.Fatalf("Decode = %v, want an error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// schemaOf is an envelope schema whose before and after have the fields.
func schemaOf(fields string) string {
	value := func(name string) string {
		return `{"type":"struct","fields":[` + fields + `],"optional":true,"name":"pg.public.t.Value","field":"` + name + `"}`
	}
	return `{"type":"struct","fields":[` + value("before") + `,` + value("after") + `,` +
		`{"type":"struct","fields":[{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},` +
		`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],` +
		`"optional":false,"name":"pg.public.t.Envelope","version":2}`
}

const typedFields = `{"type":"int32","optional":false,"field":"id"},` +
	`{"type":"int16","optional":true,"field":"small"},` +
	`{"type":"int64","optional":true,"field":"big"},` +
	`{"type":"float32","optional":true,"field":"f"},` +
	`{"type":"float64","optional":true,"field":"d"},` +
	`{"type":"boolean","optional":true,"field":"ok"},` +
	`{"type":"string","optional":true,"field":"name"},` +
	`{"type":"bytes","optional":true,"field":"raw"},` +
	`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"},` +
	`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"0"},"field":"count"},` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","field":"num"},` +
	`{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"born"},` +
	`{"type":"int64","optional":true,"name":"io.debezium.time.MicroTime","version":1,"field":"at_time"},` +
	`{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"ts"},` +
	`{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"ts_us"},` +
	`{"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1,"field":"ts_ns"},` +
	`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"tstz"},` +
	`{"type":"string","optional":true,"name":"io.debezium.data.Uuid","version":1,"field":"uid"},` +
	`{"type":"int32","optional":true,"name":"io.debezium.time.Year","version":1,"field":"yr"},` +
	`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"tags"}`

func TestDecodeWithSchema(t *testing.T) {
	after := `{"id":7,"small":3,"big":9000000000,"f":1.5,"d":2.25,"ok":true,"name":"Ann","raw":"AQI=",` +
		`"price":"MDk=","count":"/w==","num":{"scale":3,"value":"56c="},"born":19723,"at_time":45296000000,` +
		`"ts":1704164645123,"ts_us":1704164645123456,"ts_ns":1704164645123456000,"tstz":"2024-01-02T05:04:05.123456+02:00",` +
		`"uid":"b6a1c5a2-6c1d-4a43-9d49-0f2a5b2b1e11","yr":2024,"tags":["a","b"]}`
	line := `{"schema":` + schemaOf(typedFields) + `,"payload":` + envelope("c", "null", after, pgSource, "1700000000100") + `}`
	dec := debezium.NewDecoder()
	ev, err := dec.Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]arrow.DataType{
		"id": arrow.PrimitiveTypes.Int32, "small": arrow.PrimitiveTypes.Int32, "big": arrow.PrimitiveTypes.Int64,
		"f": arrow.PrimitiveTypes.Float32, "d": arrow.PrimitiveTypes.Float64, "ok": arrow.FixedWidthTypes.Boolean,
		"name": arrow.BinaryTypes.String, "raw": arrow.BinaryTypes.Binary,
		"price": &arrow.Decimal128Type{Precision: 10, Scale: 2}, "count": &arrow.Decimal128Type{Precision: 38, Scale: 0},
		"num": arrow.BinaryTypes.String, "born": arrow.FixedWidthTypes.Date32, "at_time": arrow.FixedWidthTypes.Time64us,
		"ts": &arrow.TimestampType{Unit: arrow.Millisecond}, "ts_us": &arrow.TimestampType{Unit: arrow.Microsecond},
		"ts_ns":  &arrow.TimestampType{Unit: arrow.Nanosecond},
		"tstz":   &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		"uid":    arrow.BinaryTypes.String,
		"yr":     arrow.PrimitiveTypes.Int32,
		"tags":   arrow.BinaryTypes.String,
		"__op":   nil, // not a row column
		"absent": nil,
	}
	if len(ev.Fields) != 20 {
		t.Errorf("%d fields, want 20: %v", len(ev.Fields), ev.Fields)
	}
	for i, f := range ev.Fields {
		if !f.Nullable {
			t.Errorf("field %s is required; every column must be optional", f.Name)
		}
		if want := wantTypes[f.Name]; want == nil || !arrow.TypeEqual(f.Type, want) {
			t.Errorf("field %d %s is %v, want %v", i, f.Name, f.Type, want)
		}
	}
	got := flat(t, ev)
	for k, w := range map[string]any{
		"id": "7", "price": "123.45", "count": "-1", "num": "-6.233", "born": "19723",
		"tstz": "1704164645123456", "tags": `["a","b"]`, "raw": "AQI=", "ts_ns": "1704164645123456000",
		"__op": "c", "__source_lsn": "24023128", "__ts_ms": "1700000000100",
	} {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	// The schema is parsed once and its fields shared by later events.
	ev2, err := dec.Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if &ev2.Fields[0] != &ev.Fields[0] {
		t.Error("the same schema was parsed twice")
	}
}

func TestDecodeWithSchemaBadValues(t *testing.T) {
	for _, tc := range []struct{ field, value, want string }{
		{`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"p"}`, `"not base64!"`, `column "p": "not base64!" is not a Connect decimal`},
		{`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"p"}`, `12.5`, `column "p": 12.5 is not a Connect decimal`},
		{`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","field":"z"}`, `"yesterday"`, `column "z": "yesterday" is not a ZonedTimestamp`},
		{`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","field":"z"}`, `"2024-01-02T03:04:05.123456789Z"`, "finer than the microseconds"},
		{`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{},"field":"p"}`, `"AQ=="`, `decimal field "p" has no valid scale`},
		{`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"3"},"field":"p"}`, `"MDk="`, `column "p": 123.45 has 5 digits, more than the column's precision of 3`},
		{`{"type":"uint8","optional":true,"field":"u"}`, `1`, `field "u" has Connect type "uint8"`},
	} {
		line := `{"schema":` + schemaOf(tc.field) + `,"payload":{"op":"c","after":{"p":` + tc.value + `,"z":` + tc.value + `,"u":1}}}`
		_, err := debezium.NewDecoder().Decode([]byte(line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %s: error %v, want %q", tc.field, tc.value, err, tc.want)
		}
	}
}

// Decimals wider than Iceberg's 38 digits are read as their text.
func TestDecodeWideDecimal(t *testing.T) {
	field := `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1","connect.decimal.precision":"40"},"field":"p"}`
	line := `{"schema":` + schemaOf(field) + `,"payload":{"op":"d","before":{"p":"AQ=="}}}`
	ev, err := debezium.NewDecoder().Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(ev.Fields[0].Type, arrow.BinaryTypes.String) {
		t.Errorf("type %v, want utf8", ev.Fields[0].Type)
	}
	if got := flat(t, ev)["p"]; got != "0.1" {
		t.Errorf("p = %v, want 0.1", got)
	}
}
