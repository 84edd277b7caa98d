package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/ingest"
)

// Offsets read up to are held against the logs and topic ids now: a
// partition gone, a topic with another id, a log ending before the offset
// read are discontinuities; a record without ids (an older floe's) or
// brokers without them leave only the offsets to tell.
func TestFindDiscontinuities(t *testing.T) {
	t.Parallel()
	tp := func(topic string, p int32) cluster.TopicPartition {
		return cluster.TopicPartition{Topic: topic, Partition: p}
	}
	read := cluster.Offsets{}
	read.Set(tp("a", 0), 100)
	read.Set(tp("a", 1), 100)
	read.Set(tp("b", 0), 100)
	read.Set(tp("c", 0), cluster.Earliest)
	logs := map[cluster.TopicPartition]cluster.Log{tp("a", 0): {0, 150}, tp("a", 1): {0, 150}, tp("b", 0): {0, 150}, tp("c", 0): {0, 10}}
	for _, c := range []struct {
		name          string
		recorded, now cluster.TopicIDs
		logs          func(map[cluster.TopicPartition]cluster.Log)
		want          []string
	}{
		{"same topics", cluster.TopicIDs{"a": "A", "b": "B"}, cluster.TopicIDs{"a": "A", "b": "B"}, nil, nil},
		{"a created again", cluster.TopicIDs{"a": "A", "b": "B"}, cluster.TopicIDs{"a": "A2", "b": "B"}, nil,
			[]string{"topic a was deleted and created again (its id was A, now A2): partition a/0 was read up to offset 100 of the old topic, and the new one holds offsets 0 to 149, partition a/1 was read up to offset 100 of the old topic, and the new one holds offsets 0 to 149"}},
		{"a log lost, same ids", cluster.TopicIDs{"a": "A"}, cluster.TopicIDs{"a": "A"}, func(l map[cluster.TopicPartition]cluster.Log) { l[tp("a", 1)] = cluster.Log{0, 0} },
			[]string{"partition a/1 was read up to offset 100 but now ends at offset 0 and holds no message (its next offset is 0): its log was lost (the topic deleted and created again, or a broker restarted with an empty log)"}},
		{"no ids recorded: only offsets tell", nil, cluster.TopicIDs{"a": "A2"}, func(l map[cluster.TopicPartition]cluster.Log) { l[tp("b", 0)] = cluster.Log{0, 40} },
			[]string{"partition b/0 was read up to offset 100 but now ends at offset 40 and holds offsets 0 to 39: its log was lost (the topic deleted and created again, or a broker restarted with an empty log)"}},
		{"brokers without ids", cluster.TopicIDs{"a": "A"}, cluster.TopicIDs{}, nil, nil},
		{"partitions gone", nil, nil, func(l map[cluster.TopicPartition]cluster.Log) { delete(l, tp("b", 0)); delete(l, tp("c", 0)) },
			[]string{"partition b/0, read up to offset 100, is gone (its topic, or the partition, was deleted)"}},
		{"set back to earliest: any log goes on", cluster.TopicIDs{"c": "C"}, cluster.TopicIDs{"c": "C2"}, func(l map[cluster.TopicPartition]cluster.Log) { delete(l, tp("c", 0)) }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := map[cluster.TopicPartition]cluster.Log{}
			for k, v := range logs {
				l[k] = v
			}
			if c.logs != nil {
				c.logs(l)
			}
			found, err := cluster.FindDiscontinuities(read, c.recorded, l, c.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := cluster.Describe(found); !slices.Equal(got, c.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// fileEvent is worker w's event of one data file for rng(p, from, until)
// planned under the partition's resets count.
func (s *simulation) fileEvent(p int32, from, until, resets int64) cluster.Event {
	s.t.Helper()
	b, err := iceberg.NewDataFileBuilder(s.tbl.Spec(), iceberg.EntryContentData, fmt.Sprintf("file:///sim/p%03d-%06d-%d.parquet", p, from, resets), iceberg.ParquetFile, nil, nil, nil, until-from, 4096)
	if err != nil {
		s.t.Fatal(err)
	}
	r := rng(p, from, until)
	r.Resets = resets
	ev, err := cluster.NewEvent(s.tbl, []ingest.DataFile{{Table: "db.t", Path: b.Build().FilePath(), Rows: until - from, File: b.Build()}}, []cluster.Range{r})
	if err != nil {
		s.t.Fatal(err)
	}
	ev.Worker, ev.Generation, ev.WrittenMs = fmt.Sprint(p), 1, time.Now().UnixMilli()
	return ev
}

// A partition whose log was lost is set back to Earliest in a commit of
// the record alone, its reset counted and its topic's id moved on; a range
// of its old log published before is never committed, and the first range
// of its new log is, from wherever the log starts.
func TestCoordinatorSetsBackLostPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	s.interval(ctx, 1)
	p0 := cluster.TopicPartition{Topic: "t", Partition: 0}
	s.coord.Discontinuities = func(_ context.Context, ends cluster.Offsets, ids cluster.TopicIDs) ([]cluster.Discontinuity, cluster.TopicIDs, error) {
		logs := map[cluster.TopicPartition]cluster.Log{p0: {Start: 0, End: 50}}
		found, err := cluster.FindDiscontinuities(ends, ids, logs, cluster.TopicIDs{"t": "T2"})
		return found, cluster.TopicIDs{"t": "T2"}, err
	}
	s.send(ctx, s.fileEvent(0, 100, 200, 0)) // read from the old log before it was lost
	done := s.step(ctx, 1)
	if len(done.SetBack) != 1 || done.SetBack[0].TopicPartition != p0 || done.Files != 0 || done.Stale != 1 || done.Table == nil {
		t.Fatalf("want partition 0 set back alone and the old log's event stale, got %+v", done)
	}
	if n, _ := done.Ends.Get(p0); n != cluster.Earliest {
		t.Fatalf("partition 0 recorded at %d, want earliest", n)
	}
	s.send(ctx, s.fileEvent(0, 0, 50, 1))
	s.send(ctx, s.fileEvent(0, 0, 50, 1)) // another worker's, read from the same start
	done = s.step(ctx, 1)
	if done.Events != 1 || done.Stale != 1 || len(done.SetBack) != 0 {
		t.Fatalf("want the new log's first range committed once, got %+v", done)
	}
	_, st, err := cluster.Recorded(done.Table, s.coord.Committer)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := st.Ends.Get(p0)
	resets, _ := st.Resets.Get(p0)
	if end != 50 || resets != 1 || st.IDs["t"] != "T2" {
		t.Fatalf("record: partition 0 at %d after %d resets, topic ids %v; want 50, 1, T2", end, resets, st.IDs)
	}
}
