package main_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// The two versions of the topic's value schema: version 2 adds email.
const (
	userV1 = `{"type":"record","name":"User","namespace":"ex","fields":[
		{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	userV2 = `{"type":"record","name":"User","namespace":"ex","fields":[
		{"name":"id","type":"long"},{"name":"name","type":"string"},
		{"name":"email","type":["null","string"],"default":null}]}`
)

// schemaRegistry serves the schemas in order, as ids 1, 2, ..., of
// subject users-value.
func schemaRegistry(t *testing.T, schemas ...string) *fixture.Registry {
	t.Helper()
	reg := fixture.NewRegistry(t)
	for _, s := range schemas {
		reg.Register("users-value", sr.Schema{Schema: s})
	}
	return reg
}

// confluentValue is v encoded with schema in Confluent's wire format under
// schema id id.
func confluentValue(t *testing.T, id uint32, schema string, v map[string]any) []byte {
	t.Helper()
	out := binary.BigEndian.AppendUint32([]byte{0}, id)
	out, err := avro.MustParse(schema).AppendEncode(out, v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// produceUsers writes users first..first+n-1 round-robin over the
// partitions, with schema version 2 (and an email) for ids from v2 on.
func produceUsers(t *testing.T, c *kafkatest.Cluster, partitions int32, first, n, v2 int64) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		id := first + int64(i)
		var val []byte
		if id >= v2 {
			val = confluentValue(t, 2, userV2, map[string]any{"id": id, "name": fmt.Sprintf("u%d", id), "email": fmt.Sprintf("u%d@example.com", id)})
		} else {
			val = confluentValue(t, 1, userV1, map[string]any{"id": id, "name": fmt.Sprintf("u%d", id)})
		}
		recs[i] = &kgo.Record{Topic: c.Name("users"), Partition: int32(id % int64(partitions)), Value: val}
	}
	c.Produce(t, recs...)
}

func kafkaAvroStream(e *env, c *kafkatest.Cluster, registry string, extra ...string) []string {
	return append([]string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + c.Name("users"),
		"-o", "schema.registry.url=" + registry, "-o", "schema.registry.basic.auth.user.info=ann:secret",
		"--format", "avro", "--table", "db.users", "--checkpoint", e.Ckpt, "--trigger", "available-now"}, extra...)
}

// Avro values of two schema versions land with schema evolution: a first
// run of version 1 creates the table, a second run whose partitions hold
// both versions adds email, null for the version 1 rows; the values are
// read back by iceberg-go's scan.
func TestKafkaAvroSchemaVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "users", 2)
	reg := schemaRegistry(t, userV1, userV2)
	produceUsers(t, c, 2, 0, 50, 1000)
	e.OK(kafkaAvroStream(e, c, reg.URL, "--schema-evolution", "add-columns")...)
	if msg := fixture.Exact(e.TableIDs("db.users"), 0, 50); msg != "" {
		t.Fatalf("after the first run: %s", msg)
	}
	// Each partition's next range holds version 1, then version 2.
	produceUsers(t, c, 2, 50, 150, 100)
	e.OK(kafkaAvroStream(e, c, reg.URL, "--schema-evolution", "add-columns")...)
	if msg := fixture.Exact(e.TableIDs("db.users"), 0, 200); msg != "" {
		t.Fatalf("after the second run: %s", msg)
	}
	rows := dbzRows(t, e, "db.users", "id", "name", "email")
	slices.SortFunc(rows, func(a, b string) int {
		var x, y int
		fmt.Sscanf(a, "%d|", &x)
		fmt.Sscanf(b, "%d|", &y)
		return x - y
	})
	if len(rows) != 200 {
		t.Fatalf("%d rows, want 200", len(rows))
	}
	for id, row := range rows {
		want := fmt.Sprintf("%d|u%d|null", id, id)
		if id >= 100 {
			want = fmt.Sprintf("%d|u%d|u%d@example.com", id, id, id)
		}
		if row != want {
			t.Fatalf("row %q, want %q", row, want)
		}
	}
}

// A value whose schema id the registry does not know, or that is not in
// the Confluent wire format, stops the batch naming topic, partition and
// offset; nothing is committed, and once the message is skipped the rest
// lands.
func TestKafkaAvroBadValues(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]struct {
		value []byte
		want  string
	}{
		"unknown schema id": {confluentValue(t, 99, userV1, map[string]any{"id": int64(2), "name": "x"}), "schema id 99"},
		"not confluent":     {[]byte(`{"id":2}`), "Confluent Avro wire format"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := kafkatest.Start(t, "users", 1)
			reg := schemaRegistry(t, userV1)
			produceUsers(t, c, 1, 0, 2, 1000)
			c.Produce(t, &kgo.Record{Topic: c.Name("users"), Partition: 0, Value: bad.value})
			produceUsers(t, c, 1, 3, 2, 1000)
			r := e.Run(kafkaAvroStream(e, c, reg.URL)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, "kafka topic "+c.Name("users")+" partition 0 offset 2") || !strings.Contains(r.Stderr, bad.want) {
				t.Fatalf("want the batch refused naming offset 2 and %q, got %s", bad.want, r)
			}
			if ids := e.TableIDs("db.users"); len(ids) != 0 {
				t.Fatalf("the failed batch committed ids %v", ids)
			}
			e.OK(kafkaAvroStream(e, c, reg.URL, "--checkpoint", e.Ckpt+"-2", "-o", fmt.Sprintf(`startingOffsets={%q:{"0":3}}`, c.Name("users")))...)
			if msg := fixture.Exact(e.TableIDs("db.users"), 3, 2); msg != "" {
				t.Fatalf("after starting past the message: %s", msg)
			}
		})
	}
}

// format avro without a registry address is a configuration error, exit 2.
func TestKafkaAvroNeedsRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Run("stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=127.0.0.1:1", "-o", "subscribe=users",
		"--format", "avro", "--table", "db.users", "--checkpoint", e.Ckpt)
	if r.Code != 2 || !strings.Contains(r.Stderr, "schema.registry.url") {
		t.Fatalf("want exit 2 naming schema.registry.url, got %s", r)
	}
}

// A registry refusing the credentials is a configuration error, exit 2,
// and nothing is committed.
func TestKafkaAvroRegistryCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "users", 1)
	reg := schemaRegistry(t, userV1)
	produceUsers(t, c, 1, 0, 3, 1000)
	r := e.Run(kafkaAvroStream(e, c, reg.URL, "-o", "schema.registry.basic.auth.user.info=ann:wrong")...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "schema.registry.basic.auth.user.info") {
		t.Fatalf("want exit 2 naming the credentials' option, got %s", r)
	}
	if ids := e.TableIDs("db.users"); len(ids) != 0 {
		t.Fatalf("committed ids %v", ids)
	}
	e.OK(kafkaAvroStream(e, c, reg.URL)...)
	if msg := fixture.Exact(e.TableIDs("db.users"), 0, 3); msg != "" {
		t.Fatalf("with the right credentials: %s", msg)
	}
}
