package main_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// produceIDs writes n JSON messages {"id":first+i,"v":"..."} round-robin
// over the topic's partitions.
func produceIDs(t *testing.T, c *kafkatest.Cluster, topic string, partitions int32, first, n int64) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		id := first + int64(i)
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(id % int64(partitions)), Value: fmt.Appendf(nil, `{"id":%d,"v":"m%d"}`, id, id)}
	}
	c.Produce(t, recs...)
}

func kafkaStream(e *env, c *kafkatest.Cluster, extra ...string) []string {
	return append([]string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=events",
		"--format", "json", "--table", "db.events", "--checkpoint", e.Ckpt, "--trigger", "available-now"}, extra...)
}

// A topic of 100,000 JSON messages in 8 partitions lands in the table
// exactly once, read back by iceberg-go's scan; a second run commits
// nothing.
func TestKafkaJSONExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 8)
	produceIDs(t, c, "events", 8, 0, 100_000)
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100_000); msg != "" {
		t.Fatalf("after the first run: %s", msg)
	}
	snaps := len(e.Snapshots("db.events"))
	e.OK(kafkaStream(e, c)...)
	if got := len(e.Snapshots("db.events")); got != snaps {
		t.Fatalf("a second run with no new messages made %d snapshots, want %d", got, snaps)
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100_000); msg != "" {
		t.Fatalf("after the second run: %s", msg)
	}
}

// A lost checkpoint is rebuilt from the table's record of the last
// batch's offsets, and the query resumes with no duplicate and no gap.
func TestKafkaLostCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	produceIDs(t, c, "events", 4, 0, 1000)
	e.OK(kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=300")...)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, c, "events", 4, 1000, 1000)
	r := e.Run(append([]string{"checkpoint", "rebuild"}, kafkaStream(e, c)[1:]...)...)
	if r.Code != 0 {
		t.Fatalf("checkpoint rebuild: exit %d\n%s", r.Code, r.Stderr)
	}
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000); msg != "" {
		t.Fatalf("after the rebuilt checkpoint's run: %s", msg)
	}
}
