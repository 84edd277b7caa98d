package kafka_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/kafka"
)

func openKafka(t *testing.T, k *kafkatest.Cluster, opts ...string) *kafka.Source {
	t.Helper()
	o := map[string]string{"kafka.bootstrap.servers": k.Addr(), "subscribe": k.Name("events")}
	for _, kv := range opts {
		key, v, _ := strings.Cut(kv, "=")
		o[key] = v
	}
	src, err := kafka.New(config.Source{Type: "kafka", Format: "json", Options: o}, source.Env{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func produce(t *testing.T, k *kafkatest.Cluster, first, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: k.Name("events"), Value: fmt.Appendf(nil, `{"id":%d}`, first+i)}
	}
	k.Produce(t, recs...)
}

// A record written before records carried topic ids resumes from its
// offsets; the batch then records the topic's id, against which a topic
// created again is found even when it holds more messages than were read.
func TestRecordWithoutTopicIDsResumes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k := kafkatest.Start(t, "events", 1)
	topic := k.Name("events")
	produce(t, k, 0, 100)
	src := openKafka(t, k)
	start := source.Offset(fmt.Sprintf(`{%q:{"0":40}}`, topic))
	if err := src.CheckInput(nil, nil, start); err != nil {
		t.Fatal(err)
	}
	end, err := src.LatestOffset(ctx, start, source.ReadLimit{})
	if want := fmt.Sprintf(`{%q:{"0":100}}`, topic); err != nil || string(end) != want {
		t.Fatalf("planned %s, %v; want %s", end, err, want)
	}
	parts, err := src.Read(ctx, start, end)
	if want := "kafka:" + topic + "/0@40-100"; err != nil || len(parts) != 1 || parts[0].Name() != want {
		t.Fatalf("read %v, %v; want %s", parts, err, want)
	}
	input, err := src.BatchInput(nil, start, end)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := cluster.ParseTopicIDs(input)
	if err != nil || ids[topic] == "" {
		t.Fatalf("the batch records topic ids %v (%v), want the id of %s", input, err, topic)
	}

	k.DeleteTopic(t, topic)
	k.CreateTopic(t, topic, 1)
	produce(t, k, 100, 150)
	next := openKafka(t, k)
	if err := next.CheckInput(input, start, end); err != nil {
		t.Fatal(err)
	}
	_, err = next.LatestOffset(ctx, end, source.ReadLimit{})
	if !errors.Is(err, source.ErrCannotContinue) || !strings.Contains(err.Error(), "topic "+topic+" was deleted and created again (its id was "+ids[topic]) {
		t.Fatalf("want the topic created again named, got %v", err)
	}
}

// A batch planned before its partition's log was lost (a re-run after a
// stop) is data loss when it is read, not a read that waits for offsets
// that will never come; with failOnDataLoss=false it reads nothing of the
// partition and warns. The sources' clients live through the broker's
// restart.
func TestPlannedRangeLost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k := kafkatest.StartOnDisk(t, "events", 1)
	produce(t, k, 0, 100)
	srcs := map[bool]*kafka.Source{}
	ends := map[bool]source.Offset{}
	for _, strict := range []bool{true, false} {
		srcs[strict] = openKafka(t, k, fmt.Sprintf("failOnDataLoss=%v", strict))
		end, err := srcs[strict].LatestOffset(ctx, srcs[strict].InitialOffset(), source.ReadLimit{})
		if err != nil {
			t.Fatal(err)
		}
		ends[strict] = end
	}
	k.RestartLosingLogs(t)
	produce(t, k, 100, 10)
	why := "partition " + k.Name("events") + "/0: offsets 0 to 99 were planned, but the partition now ends at offset 10"
	for _, strict := range []bool{true, false} {
		src := srcs[strict]
		parts, err := src.Read(ctx, src.InitialOffset(), ends[strict])
		warnings := strings.Join(src.Warnings(), "\n")
		switch {
		case strict && (!errors.Is(err, source.ErrCannotContinue) || !strings.Contains(err.Error(), why)):
			t.Fatalf("failOnDataLoss: want %q, got %v", why, err)
		case !strict && (err != nil || len(parts) != 0 || !strings.Contains(warnings, why)):
			t.Fatalf("failOnDataLoss=false: want no part and a warning, got %v, %v, %q", parts, err, warnings)
		}
	}
}
