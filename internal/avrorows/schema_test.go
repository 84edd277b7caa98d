package avrorows_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/avro"

	"github.com/floe-io/floe/internal/avrorows"
)

const everyType = `{"type": "record", "name": "Event", "namespace": "ex", "fields": [
	{"name": "b", "type": "boolean"},
	{"name": "i", "type": "int"},
	{"name": "l", "type": "long"},
	{"name": "f", "type": "float"},
	{"name": "d", "type": "double"},
	{"name": "raw", "type": "bytes"},
	{"name": "s", "type": ["null", "string"]},
	{"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
	{"name": "fx", "type": {"type": "fixed", "name": "Two", "size": 2}},
	{"name": "tags", "type": {"type": "array", "items": "string"}},
	{"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
	{"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "Two"}]}]},
	{"name": "day", "type": {"type": "int", "logicalType": "date"}},
	{"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
	{"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
	{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
	{"name": "ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}}
]}`

// Every supported Avro type decodes to the Arrow value Spark's from_avro
// gives it; nulls come from unions with null.
func TestAvroEveryType(t *testing.T) {
	s, err := avrorows.Parse(everyType)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := "b: bool, i: int32, l: int64, f: float32, d: float64, raw: binary, s: utf8, e: utf8, fx: binary, " +
		"tags: list<element: utf8>, attrs: map<utf8, int64, items_nullable>, inner: struct<x: binary>, " +
		"day: date32, ms: timestamp[us, tz=UTC], us: timestamp[us, tz=UTC], amount: decimal(9, 2), ns: int64"
	var got []string
	for _, f := range s.Arrow().Fields() {
		got = append(got, f.Name+": "+f.Type.String())
	}
	if strings.Join(got, ", ") != wantTypes {
		t.Fatalf("columns\n %s\nwant\n %s", strings.Join(got, ", "), wantTypes)
	}
	if !s.Arrow().Field(6).Nullable || s.Arrow().Field(0).Nullable || !s.Arrow().Field(11).Nullable {
		t.Fatalf("nullability: only unions with null are nullable: %s", s.Arrow())
	}
	w := avro.MustParse(everyType)
	rows := []map[string]any{
		{"b": true, "i": int32(-7), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25, "raw": []byte{0, 1},
			"s": "hi", "e": "GREEN", "fx": []byte("ab"), "tags": []any{"x", "y"}, "attrs": map[string]any{"k": int64(3)},
			"inner": map[string]any{"x": []byte("cd")}, "day": int32(19000), "ms": int64(1_700_000_000_123),
			"us": int64(1_700_000_000_123_456), "amount": []byte{0xff, 0x85}, "ns": int64(5)}, // -123 unscaled
		{"b": false, "i": int32(0), "l": int64(0), "f": float32(0), "d": 0.0, "raw": []byte{},
			"s": nil, "e": "RED", "fx": []byte("zz"), "tags": []any{}, "attrs": map[string]any{"n": nil},
			"inner": nil, "day": int32(0), "ms": int64(0), "us": int64(0), "amount": []byte{0x30, 0x39}, "ns": int64(6)}, // 12345
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.Arrow())
	defer b.Release()
	for _, r := range rows {
		body, err := w.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Append(b, body); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	want := [][]string{
		{"true", "-7", "1099511627776", "1.5", "2.25", "AAE=", "hi", "GREEN", "YWI=", `["x","y"]`, `[{"key":"k","value":3}]`, `{"x":"Y2Q="}`,
			"2022-01-08", "2023-11-14T22:13:20.123Z", "2023-11-14T22:13:20.123456Z", "-1.23", "5"},
		{"false", "0", "0", "0", "0", "", "(null)", "RED", "eno=", "[]", `[{"key":"n","value":null}]`, "(null)",
			"1970-01-01", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "123.45", "6"},
	}
	for r := range want {
		for c, w := range want[r] {
			col := rec.Column(c)
			got := col.ValueStr(r)
			if col.IsNull(r) {
				got = "(null)"
			}
			if a, ok := col.(*array.Map); ok && !a.IsNull(r) {
				js, _ := json.Marshal(a.GetOneForMarshal(r))
				got = string(js)
			}
			if a, ok := col.(*array.Struct); ok && !a.IsNull(r) {
				js, _ := json.Marshal(a.GetOneForMarshal(r))
				got = string(js)
			}
			if got != w {
				t.Errorf("row %d %s = %s, want %s", r, rec.ColumnName(c), got, w)
			}
		}
	}
}

// Schemas floe cannot hold as a table are refused naming the field.
func TestAvroUnsupported(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"record","name":"r","fields":[{"name":"u","type":["int","string"]}]}`:                                                  "u: a union of 2 types",
		`{"type":"record","name":"r","fields":[{"name":"next","type":["null","r"]}]}`:                                                   "next: record r contains itself",
		`{"type":"record","name":"r","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":40,"scale":0}}]}`: "d: decimal precision 40",
		`{"type":"record","name":"r","fields":[{"name":"n","type":"null"}]}`:                                                            "n: a column of type null",
		`{"type": "nope"}`: "does not parse",
	} {
		if _, err := avrorows.Parse(schema); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", schema, err, want)
		}
	}
}

// A schema that is not a record is one column "value".
func TestAvroNotARecord(t *testing.T) {
	s, err := avrorows.Parse(`"string"`)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.Arrow())
	defer b.Release()
	body, _ := avro.MustParse(`"string"`).Encode("hello")
	if err := s.Append(b, body); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if rec.ColumnName(0) != "value" || rec.Column(0).ValueStr(0) != "hello" {
		t.Fatalf("got %v", rec)
	}
}

// A body that is not its schema's record is refused, not read as garbage.
func TestAvroBodyMismatch(t *testing.T) {
	s, err := avrorows.Parse(`{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.Arrow())
	defer b.Release()
	if err := s.Append(b, []byte{2, 4, 6}); err == nil || !strings.Contains(err.Error(), "bytes are left") {
		t.Fatalf("trailing bytes: got %v", err)
	}
	if err := s.Append(b, []byte{0x80}); err == nil || !strings.Contains(err.Error(), "does not match its schema") {
		t.Fatalf("a truncated body: got %v", err)
	}
}
