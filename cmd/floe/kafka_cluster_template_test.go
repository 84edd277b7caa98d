package main_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

const templateRegions = 8

// produceRegions writes n messages of ids from first, each naming its
// region (id % 8), to the topic's partitions in turn.
func produceRegions(t *testing.T, c *kafkatest.Cluster, partitions int32, first, n int64) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		id := first + int64(i)
		recs[i] = &kgo.Record{Topic: c.Name("events"), Partition: int32(id % int64(partitions)), Value: fmt.Appendf(nil, `{"id":%d,"region":"r%d"}`, id, id%templateRegions)}
	}
	c.Produce(t, recs...)
}

// Three workers of one consumer group write a template sink's eight
// tables (db.events_{region}) while the coordinator is killed and a worker
// is stopped past its session timeout: every message lands once, in its
// region's table, read back by iceberg-go; each table has at most one
// commit per interval.
func TestKafkaClusterTemplate(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		const partitions = 6
		c := b.Start(t, "events", partitions)
		var produced atomic.Int64
		stop := every(50*time.Millisecond, func() {
			produceRegions(t, c, partitions, produced.Load(), 53)
			produced.Add(53)
		})
		began := time.Now()
		var workers []*clusterWorker
		for i := range 3 {
			workers = append(workers, startClusterWorker(e, c, fmt.Sprint(i), "--table", "db.events_{region}"))
		}
		fixture.WaitFor(t, 60*time.Second, "the first commit", func() bool { return len(e.TableIDs("db.events_r0")) > 0 })
		time.Sleep(2 * time.Second)
		churn(t, workers, time.Sleep)
		stop()
		total := produced.Load()

		count := func() int {
			n := 0
			for r := range templateRegions {
				n += len(e.TableIDs(fmt.Sprintf("db.events_r%d", r)))
			}
			return n
		}
		fixture.WaitFor(t, 90*time.Second, "every message in the tables", func() bool { return count() >= int(total) })
		elapsed := time.Since(began)
		stopWorkers(t, running(workers)...)

		all := map[int64]int{}
		intervals := int(elapsed / clusterInterval)
		var snaps []string
		for r := range templateRegions {
			name := fmt.Sprintf("db.events_r%d", r)
			for id, n := range e.TableIDs(name) {
				if id%templateRegions != int64(r) {
					t.Errorf("id %d is in %s", id, name)
				}
				all[id] += n
			}
			// Each step commits a table once; maintenance expires older
			// snapshots, so the ones left must each be of another step.
			batches := map[string]bool{}
			for _, sn := range e.Snapshots(name) {
				if b := sn.Summary["floe.batch-id"]; b != "" && sn.Summary["floe.offset"] != "" {
					if batches[b] {
						t.Errorf("%s: two snapshots of cluster commit %s", name, b)
					}
					batches[b] = true
				}
			}
			snaps = append(snaps, fmt.Sprint(len(batches)))
		}
		steps := 0
		for _, cm := range reportedCommits(workers) {
			if cm.Events > 0 {
				steps++
			}
		}
		if steps > intervals+len(workers) {
			t.Errorf("%d commits in %d intervals: more than one per interval", steps, intervals)
		}
		if msg := fixture.Exact(all, 0, total); msg != "" {
			t.Fatalf("%d messages produced: %s", total, msg)
		}
		t.Logf("%d messages in %d tables in %v (%d intervals, %d commits); snapshots left per table %s", total, templateRegions, elapsed.Round(time.Second), intervals, steps, strings.Join(snaps, " "))
	})
}
