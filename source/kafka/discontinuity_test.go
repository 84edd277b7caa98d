package kafka_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/source/kafka"
)

func openKafka(t *testing.T, k *kafkatest.Cluster, opts ...string) *kafka.Source {
	t.Helper()
	o := map[string]string{"kafka.bootstrap.servers": k.Addr(), "subscribe": "events"}
	for _, kv := range opts {
		key, v, _ := strings.Cut(kv, "=")
		o[key] = v
	}
	src, err := kafka.New(config.Source{Type: "kafka", Format: "json", Options: o}, floe.SourceEnv{StateDir: t.TempDir()})
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
		recs[i] = &kgo.Record{Topic: "events", Value: fmt.Appendf(nil, `{"id":%d}`, first+i)}
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
	produce(t, k, 0, 100)
	src := openKafka(t, k)
	start := floe.Offset(`{"events":{"0":40}}`)
	if err := src.CheckInput(nil, nil, start); err != nil {
		t.Fatal(err)
	}
	end, err := src.LatestOffset(ctx, start, floe.ReadLimit{})
	if err != nil || string(end) != `{"events":{"0":100}}` {
		t.Fatalf("planned %s, %v; want up to offset 100", end, err)
	}
	parts, err := src.Read(ctx, start, end)
	if err != nil || len(parts) != 1 || parts[0].Name() != "kafka:events/0@40-100" {
		t.Fatalf("read %v, %v; want offsets 40 to 99", parts, err)
	}
	input, err := src.BatchInput(nil, start, end)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := cluster.ParseTopicIDs(input)
	if err != nil || ids["events"] == "" {
		t.Fatalf("the batch records topic ids %v (%v), want the id of events", input, err)
	}

	k.DeleteTopic(t, "events")
	k.CreateTopic(t, "events", 1)
	produce(t, k, 100, 150)
	next := openKafka(t, k)
	if err := next.CheckInput(input, start, end); err != nil {
		t.Fatal(err)
	}
	_, err = next.LatestOffset(ctx, end, floe.ReadLimit{})
	if !errors.Is(err, floe.ErrSourceCannotContinue) || !strings.Contains(err.Error(), "topic events was deleted and created again (its id was "+ids["events"]) {
		t.Fatalf("want the topic created again named, got %v", err)
	}
}

// A batch planned before its partition's log was lost (a re-run after a
// stop) is data loss when it is read, not a read that waits for offsets
// that will never come; with failOnDataLoss=false it reads nothing of the
// partition and warns.
func TestPlannedRangeLost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, strict := range []bool{true, false} {
		k := kafkatest.StartOnDisk(t, "events", 1)
		produce(t, k, 0, 100)
		src := openKafka(t, k, fmt.Sprintf("failOnDataLoss=%v", strict))
		start := src.InitialOffset()
		end, err := src.LatestOffset(ctx, start, floe.ReadLimit{})
		if err != nil {
			t.Fatal(err)
		}
		k.RestartLosingLogs(t)
		produce(t, k, 100, 10)
		parts, err := src.Read(ctx, start, end)
		warnings := strings.Join(src.Warnings(), "\n")
		const why = "partition events/0: offsets 0 to 99 were planned, but the partition now ends at offset 10"
		switch {
		case strict && (!errors.Is(err, floe.ErrSourceCannotContinue) || !strings.Contains(err.Error(), why)):
			t.Fatalf("failOnDataLoss: want %q, got %v", why, err)
		case !strict && (err != nil || len(parts) != 0 || !strings.Contains(warnings, why)):
			t.Fatalf("failOnDataLoss=false: want no part and a warning, got %v, %v, %q", parts, err, warnings)
		}
	}
}
