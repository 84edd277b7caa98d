package avrorows_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/avro"

	"github.com/floe-io/floe/internal/avrorows"
)

// A Debezium envelope as Confluent's Avro converter writes it for a
// PostgreSQL table with Debezium's time types.
const dbzEnvelope = `{"type":"record","name":"Envelope","namespace":"pg.public.t","fields":[
	{"name":"before","type":["null",{"type":"record","name":"Value","fields":[
		{"name":"id","type":"long"},
		{"name":"at","type":["null",{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}],"default":null},
		{"name":"zat","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.time.ZonedTimestamp"}],"default":null},
		{"name":"day","type":["null",{"type":"int","connect.version":1,"connect.name":"io.debezium.time.Date"}],"default":null}]}],"default":null},
	{"name":"after","type":["null","Value"],"default":null},
	{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
		{"name":"lsn","type":["null","long"],"default":null}]}},
	{"name":"op","type":"string"},
	{"name":"ts_ms","type":["null","long"],"default":null}]}`

// Events become their row image and the three metadata columns, with
// Debezium's time types mapped as debezium-json maps them; a truncate and
// a delete without its before image are refused as debezium-json refuses
// them.
func TestParseDebezium(t *testing.T) {
	env, err := avrorows.ParseDebezium(dbzEnvelope, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := env.Arrow().String(), "schema:\n  fields: 7\n    - id: type=int64, nullable\n    - at: type=timestamp[us], nullable\n"+
		"    - zat: type=timestamp[us, tz=UTC], nullable\n    - day: type=date32, nullable\n    - __op: type=utf8, nullable\n"+
		"    - __source_lsn: type=int64, nullable\n    - __ts_ms: type=int64, nullable"; got != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}
	enc := avro.MustParse(dbzEnvelope)
	row := map[string]any{"id": int64(7), "at": int64(1_704_164_645_000_001), "zat": "2024-01-02T03:04:05.000002+01:00", "day": int32(19724)}
	b := array.NewRecordBuilder(memory.DefaultAllocator, env.Arrow())
	defer b.Release()
	for _, ev := range []map[string]any{
		{"before": nil, "after": row, "source": map[string]any{"lsn": int64(42)}, "op": "c", "ts_ms": int64(5)},
		{"before": map[string]any{"id": int64(8), "at": nil, "zat": nil, "day": nil}, "after": nil, "source": map[string]any{"lsn": nil}, "op": "d", "ts_ms": nil},
	} {
		body, err := enc.AppendEncode(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Append(b, body); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	if err := array.RecordToJSON(rec, &out); err != nil {
		t.Fatal(err)
	}
	want := `{"__op":"c","__source_lsn":42,"__ts_ms":5,"at":"2024-01-02T03:04:05.000001","day":"2024-01-02","id":7,"zat":"2024-01-02T02:04:05.000002Z"}` + "\n" +
		`{"__op":"d","__source_lsn":null,"__ts_ms":null,"at":null,"day":null,"id":8,"zat":null}` + "\n"
	if out.String() != want {
		t.Fatalf("rows\n%s\nwant\n%s", out.String(), want)
	}
	for _, c := range []struct {
		ev   map[string]any
		want string
	}{
		{map[string]any{"before": nil, "after": nil, "source": map[string]any{"lsn": nil}, "op": "t", "ts_ms": nil}, "truncate"},
		{map[string]any{"before": nil, "after": nil, "source": map[string]any{"lsn": nil}, "op": "d", "ts_ms": nil}, "REPLICA IDENTITY"},
	} {
		body, err := enc.AppendEncode(nil, c.ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Append(b, body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("op %s: got %v, want an error naming %q", c.ev["op"], err, c.want)
		}
	}
	if _, err := avrorows.ParseDebezium(`{"type":"record","name":"Row","fields":[{"name":"id","type":"long"}]}`, nil); err == nil || !strings.Contains(err.Error(), "source.format avro") {
		t.Fatalf("a schema of rows: got %v, want it refused naming format avro", err)
	}
}
