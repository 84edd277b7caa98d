package kafkatest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kafkatest.StopShared()
	os.Exit(code)
}

// partition is what a client of the broker sees of one partition: its
// topic's id and its log's first and next offsets.
type partition struct {
	id         string
	start, end int64
}

func look(t *testing.T, c *kafkatest.Cluster, topic string, p int32) partition {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	m, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := starts.Lookup(topic, p)
	e, _ := ends.Lookup(topic, p)
	if s.Err != nil || e.Err != nil {
		t.Fatalf("list offsets of %s/%d: %v, %v", topic, p, s.Err, e.Err)
	}
	return partition{id: m.Topics[topic].ID.String(), start: s.Offset, end: e.Offset}
}

func produce(t *testing.T, c *kafkatest.Cluster, topic string, p int32, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "m%d", i)}
	}
	c.Produce(t, recs...)
}

// Each way of breaking a broker does to its topics what it says: ids kept
// or new, offsets kept or started again (-kafka=apache: on the real
// broker).
func TestBreakingABroker(t *testing.T) {
	t.Parallel()
	c := kafkatest.StartOnDisk(t, "events", 2)
	topic := c.Name("events")
	produce(t, c, topic, 0, 10)
	was := look(t, c, topic, 0)
	if was.start != 0 || was.end != 10 || was.id == "" {
		t.Fatalf("after 10 messages: %+v", was)
	}
	c.Trim(t, topic, 0, 4)
	if got := look(t, c, topic, 0); got != (partition{was.id, 4, 10}) {
		t.Fatalf("after trimming before offset 4: %+v", got)
	}
	c.Restart(t)
	if got := look(t, c, topic, 0); got != (partition{was.id, 4, 10}) {
		t.Fatalf("after a restart: %+v, want the log as it was", got)
	}
	c.RestartLosingLogs(t)
	if got := look(t, c, topic, 0); got != (partition{was.id, 0, 0}) {
		t.Fatalf("after a restart losing the logs: %+v, want the same id and an empty log", got)
	}
	produce(t, c, topic, 0, 3)
	c.RestartEmpty(t)
	if got := look(t, c, topic, 0); got.id == was.id || got.start != 0 || got.end != 0 {
		t.Fatalf("after a restart losing everything: %+v, want a new id and an empty log", got)
	}
	c.DeleteTopic(t, topic)
	c.CreateTopic(t, topic, 3)
	produce(t, c, topic, 2, 1)
	if got := look(t, c, topic, 2); got.id == was.id || got.end != 1 {
		t.Fatalf("the topic created again: %+v, want a new id and a third partition", got)
	}
	c.Stop(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2e9)
	defer cancel()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err == nil {
		t.Fatal("the stopped broker answers")
	}
}

// Clusters started by two tests do not see each other's messages, also
// where they share a broker.
func TestClustersApart(t *testing.T) {
	t.Parallel()
	c1, c2 := kafkatest.Start(t, "events", 1), kafkatest.Start(t, "events", 1)
	produce(t, c1, c1.Name("events"), 0, 5)
	produce(t, c2, c2.Name("events"), 0, 2)
	if got := look(t, c1, c1.Name("events"), 0); got.end != 5 {
		t.Fatalf("the first cluster's topic ends at %d, want 5", got.end)
	}
	if got := look(t, c2, c2.Name("events"), 0); got.end != 2 {
		t.Fatalf("the second cluster's topic ends at %d, want 2", got.end)
	}
}
