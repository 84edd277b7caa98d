package main_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// change is one change to key id: op c, u or d; v the row's value after
// it (before it, for a delete).
type change struct {
	op  string
	id  int64
	v   string
	lsn int64
}

// changeStream makes n random changes to keys 0..keys-1 (inserts of
// absent keys, updates and deletes of present ones, keys changed several
// times in a row) and applies them to oracle.
func changeStream(rng *rand.Rand, oracle map[int64]string, keys int64, n int, lsn *int64) []change {
	out := make([]change, 0, n)
	for range n {
		id := rng.Int64N(keys)
		*lsn++
		old, present := oracle[id]
		c := change{op: "c", id: id, v: fmt.Sprintf("v%d", *lsn), lsn: *lsn}
		switch {
		case present && rng.IntN(3) == 0:
			c.op, c.v = "d", old
			delete(oracle, id)
		case present:
			c.op = "u"
		}
		if c.op != "d" {
			oracle[id] = c.v
		}
		out = append(out, c)
	}
	return out
}

// The Debezium envelope in Avro, as Confluent's Avro converter writes it
// for a table of id bigint and v text, and its key.
const (
	dbzAvroValue = `{"type":"record","name":"Envelope","namespace":"pg.public.t","fields":[
		{"name":"before","type":["null",{"type":"record","name":"Value","fields":[
			{"name":"id","type":"long"},{"name":"v","type":["null","string"],"default":null}]}],"default":null},
		{"name":"after","type":["null","Value"],"default":null},
		{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
			{"name":"connector","type":"string"},{"name":"lsn","type":["null","long"],"default":null}]}},
		{"name":"op","type":"string"},
		{"name":"ts_ms","type":["null","long"],"default":null}]}`
	rowKeyAvro  = `{"type":"record","name":"Key","namespace":"pg.public.t","fields":[{"name":"id","type":"long"}]}`
	rowJSONSchm = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Row","type":"object",
		"properties":{"id":{"type":"integer"},"v":{"type":["string","null"]}},"required":["id"]}`
)

// rowProto is message Row { int64 id = 1; string v = 2; } as the
// registry serves it, a serialized FileDescriptorProto.
func rowProto() string {
	// FileDescriptorProto{name: "row.proto", package: "ex", syntax: "proto3",
	// message_type: [{name: "Row", field: [id int64 = 1, v string = 2]}]},
	// encoded field by field so that the test shares no code with floe's
	// decoding.
	fieldProto := func(name string, num int, typ int) []byte {
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, name)
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(num))
		b = protowire.AppendTag(b, 4, protowire.VarintType) // label optional
		b = protowire.AppendVarint(b, 1)
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(typ))
	}
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendString(msg, "Row")
	msg = protowire.AppendTag(msg, 2, protowire.BytesType)
	msg = protowire.AppendBytes(msg, fieldProto("id", 1, 3)) // TYPE_INT64
	msg = protowire.AppendTag(msg, 2, protowire.BytesType)
	msg = protowire.AppendBytes(msg, fieldProto("v", 2, 9)) // TYPE_STRING
	var file []byte
	file = protowire.AppendTag(file, 1, protowire.BytesType)
	file = protowire.AppendString(file, "row.proto")
	file = protowire.AppendTag(file, 2, protowire.BytesType)
	file = protowire.AppendString(file, "ex")
	file = protowire.AppendTag(file, 4, protowire.BytesType)
	file = protowire.AppendBytes(file, msg)
	file = protowire.AppendTag(file, 12, protowire.BytesType)
	file = protowire.AppendString(file, "proto3")
	return base64.StdEncoding.EncodeToString(file)
}

// rowProtoBody is Row{id, v} in Protobuf's binary encoding.
func rowProtoBody(id int64, v string) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// registryTopics are the four topics of one change stream and how each
// message of a change is written.
type registryTopics struct {
	c   *kafkatest.Cluster
	reg *fixture.Registry
	ids map[string]int // schema ids by subject
}

func newRegistryTopics(t *testing.T) *registryTopics {
	t.Helper()
	c := kafkatest.Start(t, "dbzjson", 2)
	for _, topic := range []string{"dbzavro", "proto", "jsonschema"} {
		c.CreateTopic(t, c.Name(topic), 2)
	}
	reg := fixture.NewRegistry(t)
	rt := &registryTopics{c: c, reg: reg, ids: map[string]int{}}
	rt.ids["dbzavro-value"] = reg.Register("dbzavro-value", sr.Schema{Schema: dbzAvroValue})
	rt.ids["dbzavro-key"] = reg.Register("dbzavro-key", sr.Schema{Schema: rowKeyAvro})
	rt.ids["proto-value"] = reg.Register("proto-value", sr.Schema{Type: sr.TypeProtobuf, Schema: rowProto()})
	rt.ids["jsonschema-value"] = reg.Register("jsonschema-value", sr.Schema{Type: sr.TypeJSON, Schema: rowJSONSchm})
	rt.ids["jsonschema-key"] = reg.Register("jsonschema-key", sr.Schema{Schema: rowKeyAvro})
	return rt
}

func avroBody(t *testing.T, schema string, v any) []byte {
	t.Helper()
	b, err := avro.MustParse(schema).AppendEncode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// produce writes the changes to the four topics, a key's messages to
// partition id%2: Debezium's envelopes, each delete followed by its
// tombstone (JSON keys, Avro keys), and rows of Protobuf (plain string
// keys) and JSON Schema (Avro keys) whose deletes are tombstones only, as
// Debezium's ExtractNewRecordState writes them.
func (rt *registryTopics) produce(t *testing.T, changes []change) {
	t.Helper()
	var recs []*kgo.Record
	add := func(topic string, id int64, key, value []byte) {
		recs = append(recs, &kgo.Record{Topic: rt.c.Name(topic), Partition: int32(id % 2), Key: key, Value: value})
	}
	for _, ch := range changes {
		jsonKey := fmt.Appendf(nil, `{"id":%d}`, ch.id)
		avroKey := func(subject string) []byte {
			return fixture.Wire(rt.ids[subject], nil, avroBody(t, rowKeyAvro, map[string]any{"id": ch.id}))
		}
		row := map[string]any{"id": ch.id, "v": ch.v}
		var before, after any
		beforeJSON, afterJSON := "null", fmt.Sprintf(`{"id":%d,"v":%q}`, ch.id, ch.v)
		switch ch.op {
		case "u":
			before, after = map[string]any{"id": ch.id, "v": nil}, row
			beforeJSON = fmt.Sprintf(`{"id":%d,"v":null}`, ch.id)
		case "d":
			before, after = row, nil
			beforeJSON, afterJSON = afterJSON, "null"
		default:
			after = row
		}
		add("dbzjson", ch.id, jsonKey, fmt.Appendf(nil, `{"before":%s,"after":%s,"source":{"connector":"postgresql","lsn":%d},"op":%q,"ts_ms":%d}`,
			beforeJSON, afterJSON, ch.lsn, ch.op, 1_700_000_000_000+ch.lsn))
		add("dbzavro", ch.id, avroKey("dbzavro-key"), fixture.Wire(rt.ids["dbzavro-value"], nil, avroBody(t, dbzAvroValue, map[string]any{
			"before": before, "after": after, "source": map[string]any{"connector": "postgresql", "lsn": ch.lsn},
			"op": ch.op, "ts_ms": 1_700_000_000_000 + ch.lsn})))
		if ch.op == "d" {
			add("dbzjson", ch.id, jsonKey, nil)
			add("dbzavro", ch.id, avroKey("dbzavro-key"), nil)
			add("proto", ch.id, []byte(strconv.FormatInt(ch.id, 10)), nil)
			add("jsonschema", ch.id, avroKey("jsonschema-key"), nil)
			continue
		}
		add("proto", ch.id, []byte(strconv.FormatInt(ch.id, 10)), fixture.Wire(rt.ids["proto-value"], []int{0}, rowProtoBody(ch.id, ch.v)))
		add("jsonschema", ch.id, avroKey("jsonschema-key"), fixture.Wire(rt.ids["jsonschema-value"], nil, []byte(afterJSON)))
	}
	rt.c.Produce(t, recs...)
}

// stream upserts topic, in format, into table db.<topic>.
func (rt *registryTopics) stream(e *env, topic, format string, extra ...string) []string {
	args := []string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + rt.c.Addr(), "-o", "subscribe=" + rt.c.Name(topic),
		"--format", format, "--table", "db." + topic, "--checkpoint", e.Ckpt + "-" + topic, "--trigger", "available-now",
		"--mode", "upsert", "--identifier-fields", "id"}
	if format != "debezium-json" {
		args = append(args, "-o", "schema.registry.url="+rt.reg.URL, "-o", "schema.registry.basic.auth.user.info="+fixture.RegistryUser+":"+fixture.RegistryPass)
	}
	return append(args, extra...)
}

var registryFormats = []struct{ topic, format string }{
	{"dbzjson", "debezium-json"}, {"dbzavro", "debezium-avro"}, {"proto", "protobuf"}, {"jsonschema", "json-schema"},
}

// One change stream (inserts, updates, deletes, tombstones) as
// debezium-json, debezium-avro, protobuf and json-schema, on four topics
// served by one registry, upserted in two runs into four tables: read by
// iceberg-go's scan, each table equals the oracle of the changes.
func TestKafkaRegistryFormatsTwins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rt := newRegistryTopics(t)
	rng := rand.New(rand.NewPCG(35, 2))
	oracle := map[int64]string{}
	var lsn int64
	for run := range 2 {
		rt.produce(t, changeStream(rng, oracle, 40, 300, &lsn))
		for _, f := range registryFormats {
			e.OK(rt.stream(e, f.topic, f.format)...)
			if msg := fixture.DiffOracle(e.TableKeyed("db."+f.topic, "id", "v"), oracle); msg != "" {
				t.Fatalf("run %d, %s: %s", run+1, f.format, msg)
			}
		}
	}
	if len(oracle) == 0 || len(oracle) == 40 {
		t.Fatalf("the oracle holds %d of 40 keys; the stream must leave some deleted and some present", len(oracle))
	}
}

// A registry that is down fails the run (exit 1) without committing, for
// every registry format; once it is back, a re-run lands every change
// once.
func TestKafkaRegistryDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rt := newRegistryTopics(t)
	oracle := map[int64]string{}
	var lsn int64
	rt.produce(t, changeStream(rand.New(rand.NewPCG(35, 3)), oracle, 20, 60, &lsn))
	rt.reg.SetDown(true)
	for _, f := range registryFormats[1:] {
		r := e.Run(rt.stream(e, f.topic, f.format)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "503") || strings.Contains(r.Stderr, "bad input") {
			t.Fatalf("%s with the registry down: want exit 1 naming the registry's 503, not bad input; got %s", f.format, r)
		}
		if got := e.TableKeyed("db."+f.topic, "id", "v"); len(got) != 0 {
			t.Fatalf("%s: the failed run committed %d keys", f.format, len(got))
		}
	}
	rt.reg.SetDown(false)
	for _, f := range registryFormats[1:] {
		e.OK(rt.stream(e, f.topic, f.format)...)
		if msg := fixture.DiffOracle(e.TableKeyed("db."+f.topic, "id", "v"), oracle); msg != "" {
			t.Fatalf("%s after the registry is back: %s", f.format, msg)
		}
	}
}

// A Protobuf or JSON Schema value whose schema id the registry does not
// hold is bad input naming its offset; nothing is committed.
func TestKafkaRegistryUnknownSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rt := newRegistryTopics(t)
	rt.c.Produce(t,
		&kgo.Record{Topic: rt.c.Name("proto"), Partition: 0, Key: []byte("2"), Value: fixture.Wire(rt.ids["proto-value"], []int{0}, rowProtoBody(2, "a"))},
		&kgo.Record{Topic: rt.c.Name("proto"), Partition: 0, Key: []byte("4"), Value: fixture.Wire(99, []int{0}, rowProtoBody(4, "b"))},
		&kgo.Record{Topic: rt.c.Name("jsonschema"), Partition: 0, Value: fixture.Wire(98, nil, []byte(`{"id":1}`))},
	)
	for _, f := range []struct{ topic, format, id string }{{"proto", "protobuf", "99"}, {"jsonschema", "json-schema", "98"}} {
		r := e.Run(rt.stream(e, f.topic, f.format)...)
		at := fmt.Sprintf("kafka topic %s partition 0 offset %d", rt.c.Name(f.topic), map[string]int{"proto": 1, "jsonschema": 0}[f.topic])
		if r.Code != 1 || !strings.Contains(r.Stderr, at) || !strings.Contains(r.Stderr, "schema id "+f.id) {
			t.Fatalf("%s: want bad input naming %q and schema id %s, got %s", f.format, at, f.id, r)
		}
		if got := e.TableKeyed("db."+f.topic, "id", "v"); len(got) != 0 {
			t.Fatalf("%s: the failed batch committed %d keys", f.format, len(got))
		}
	}
}

// In mode upsert a tombstone deletes its key: JSON keys (also in
// JsonConverter's schema/payload wrapper), Avro keys in the registry's
// wire format, and a plain key filling the table's one identifier field;
// a tombstone of an absent key changes nothing, and a value after a
// tombstone inserts the key again. Outside mode upsert tombstones are
// skipped as before.
func TestKafkaTombstones(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "js", 1)
	c.CreateTopic(t, c.Name("av"), 1)
	reg := schemaRegistry(t, userV1, `{"type":"record","name":"UserKey","namespace":"ex","fields":[{"name":"id","type":"long"}]}`)
	js := func(key, value string) *kgo.Record {
		r := &kgo.Record{Topic: c.Name("js"), Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	c.Produce(t, js(`{"id":1}`, `{"id":1,"v":"a"}`), js(`{"id":2}`, `{"id":2,"v":"b"}`), js(`{"id":3}`, `{"id":3,"v":"c"}`),
		js(`{"id":2}`, ""), js(`{"schema":{"type":"struct","fields":[{"field":"id","type":"int64"}]},"payload":{"id":3}}`, ""),
		js(`{"id":3}`, `{"id":3,"v":"c2"}`), js(`{"id":9}`, ""))
	jsonArgs := []string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + c.Name("js"),
		"--format", "json", "--table", "db.js", "--checkpoint", e.Ckpt + "-js", "--trigger", "available-now", "--mode", "upsert"}
	e.OK(append(jsonArgs, "--identifier-fields", "id")...)
	if msg := fixture.DiffOracle(e.TableKeyed("db.js", "id", "v"), map[int64]string{1: "a", 3: "c2"}); msg != "" {
		t.Fatalf("json keys: %s", msg)
	}
	// A batch of tombstones only, a plain key, the table's identifier field
	// its column.
	c.Produce(t, js("1", ""))
	e.OK(jsonArgs...)
	if msg := fixture.DiffOracle(e.TableKeyed("db.js", "id", "v"), map[int64]string{3: "c2"}); msg != "" {
		t.Fatalf("a plain key: %s", msg)
	}

	// The topic's own op column: its tombstones fill it with d.
	c.CreateTopic(t, c.Name("ops"), 1)
	ops := func(key, value string) *kgo.Record {
		r := js(key, value)
		r.Topic = c.Name("ops")
		return r
	}
	c.Produce(t, ops(`{"id":1}`, `{"id":1,"v":"a","op":"c"}`), ops(`{"id":2}`, `{"id":2,"v":"b","op":"c"}`), ops(`{"id":1}`, ""),
		ops(`{"id":3}`, `{"id":3,"v":"c","op":"c"}`), ops(`{"id":3}`, `{"id":3,"op":"d"}`))
	e.OK("stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers="+c.Addr(), "-o", "subscribe="+c.Name("ops"),
		"--format", "json", "--table", "db.ops", "--checkpoint", e.Ckpt+"-ops", "--trigger", "available-now",
		"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op")
	if msg := fixture.DiffOracle(e.TableKeyed("db.ops", "id", "v"), map[int64]string{2: "b"}); msg != "" {
		t.Fatalf("the topic's op column: %s", msg)
	}

	// A value holding __op itself, which floe would add: refused, naming
	// the option that says it is the op column.
	c.Produce(t, ops(`{"id":5}`, `{"id":5,"v":"e","__op":"x"}`))
	r := e.Run("stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers="+c.Addr(), "-o", "subscribe="+c.Name("ops"),
		"--format", "json", "--table", "db.clash", "--checkpoint", e.Ckpt+"-clash", "--trigger", "available-now",
		"--mode", "upsert", "--identifier-fields", "id")
	if r.Code != 1 || !strings.Contains(r.Stderr, "offset 5") || !strings.Contains(r.Stderr, "sink.cdc.op-column") {
		t.Fatalf("a value with __op: want bad input naming offset 5 and sink.cdc.op-column, got %s", r)
	}

	av := func(id int64, name string) *kgo.Record {
		r := &kgo.Record{Topic: c.Name("av"), Key: confluentValue(t, 2, `{"type":"record","name":"UserKey","namespace":"ex","fields":[{"name":"id","type":"long"}]}`, map[string]any{"id": id})}
		if name != "" {
			r.Value = confluentValue(t, 1, userV1, map[string]any{"id": id, "name": name})
		}
		return r
	}
	c.Produce(t, av(1, "ann"), av(2, "bob"), av(1, ""), av(3, "cid"), av(2, ""), av(2, "bob2"))
	avroArgs := func(table string, extra ...string) []string {
		return append([]string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + c.Name("av"),
			"-o", "schema.registry.url=" + reg.URL, "-o", "schema.registry.basic.auth.user.info=ann:secret",
			"--format", "avro", "--table", table, "--checkpoint", e.Ckpt + "-" + table, "--trigger", "available-now"}, extra...)
	}
	e.OK(avroArgs("db.av", "--mode", "upsert", "--identifier-fields", "id")...)
	if msg := fixture.DiffOracle(e.TableKeyed("db.av", "id", "name"), map[int64]string{2: "bob2", 3: "cid"}); msg != "" {
		t.Fatalf("avro keys: %s", msg)
	}
	e.OK(avroArgs("db.appended")...)
	if got, want := dbzRows(t, e, "db.appended", "id", "name"), []string{"1|ann", "2|bob", "2|bob2", "3|cid"}; !slices.Equal(got, want) {
		t.Fatalf("appended: rows %v, want %v (tombstones skipped)", got, want)
	}
}

// Two versions of a JSON Schema in one batch, and one partition's range:
// with schema evolution the second version's property becomes a column,
// null in the first version's rows.
func TestKafkaJSONSchemaVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "users", 1)
	reg := fixture.NewRegistry(t)
	v1 := reg.Register("users-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["id"]}`})
	v2 := reg.Register("users-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"email":{"type":["null","string"]}},"required":["id"]}`})
	c.Produce(t,
		&kgo.Record{Topic: c.Name("users"), Value: fixture.Wire(v1, nil, []byte(`{"id":1,"name":"ann"}`))},
		&kgo.Record{Topic: c.Name("users"), Value: fixture.Wire(v2, nil, []byte(`{"id":2,"name":"bob","email":"bob@example.com"}`))},
		&kgo.Record{Topic: c.Name("users"), Value: fixture.Wire(v1, nil, []byte(`{"id":3,"name":"cid"}`))})
	e.OK("stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers="+c.Addr(), "-o", "subscribe="+c.Name("users"),
		"-o", "schema.registry.url="+reg.URL, "-o", "schema.registry.basic.auth.user.info=ann:secret",
		"--format", "json-schema", "--schema-evolution", "add-columns", "--table", "db.users", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if got, want := dbzRows(t, e, "db.users", "id", "name", "email"), []string{"1|ann|null", "2|bob|bob@example.com", "3|cid|null"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}
