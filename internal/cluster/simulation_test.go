package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/kafkatest"
)

// simulation is workers in one process publishing one event each per
// interval on a Kafka control topic, and a coordinator committing them
// into a table of the embedded catalog.
type simulation struct {
	t       testing.TB
	kafka   *kafkatest.Cluster
	control string // the control topic, as the cluster names it
	cl      *kgo.Client
	adm     *kadm.Client
	tbl     *table.Table
	coord   cluster.Coordinator
	next    []int64 // per worker (and partition) the next offset
	commit  []time.Duration
}

func newSimulation(t testing.TB, workers int) *simulation {
	k := kafkatest.Start(t, "control", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	cat, _ := fixture.CatalogAt(t, t.TempDir())
	tbl := fixture.CreateTable(t, cat, table.Identifier{"db", "t"}, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: cluster.QueryID("sim"), Source: "KafkaV2[Subscribe[events]]"}
	return &simulation{t: t, kafka: k, control: k.Name("control"), cl: cl, adm: kadm.NewClient(cl), tbl: tbl, coord: cluster.Coordinator{Committer: c}, next: make([]int64, workers)}
}

// interval has every worker publish one data file of 100 rows for its
// partition, then the coordinator commit.
func (s *simulation) interval(ctx context.Context, gen int32) cluster.Committed {
	s.publish(ctx, gen)
	return s.step(ctx, gen)
}

// publish has every worker publish one data file of 100 rows for its
// partition.
func (s *simulation) publish(ctx context.Context, gen int32) {
	recs := make([]*kgo.Record, len(s.next))
	for w := range s.next {
		b, err := iceberg.NewDataFileBuilder(s.tbl.Spec(), iceberg.EntryContentData, fmt.Sprintf("file:///sim/w%03d-%06d.parquet", w, s.next[w]), iceberg.ParquetFile, nil, nil, nil, 100, 4096)
		if err != nil {
			s.t.Fatal(err)
		}
		ranges := []cluster.Range{rng(int32(w), s.next[w], s.next[w]+100)}
		ev, err := cluster.NewEvent(s.tbl, []ingest.DataFile{{Table: "db.t", Path: b.Build().FilePath(), Rows: 100, File: b.Build()}}, ranges)
		if err != nil {
			s.t.Fatal(err)
		}
		ev.Worker, ev.Generation, ev.WrittenMs = fmt.Sprint(w), gen, time.Now().UnixMilli()
		v, err := ev.Marshal()
		if err != nil {
			s.t.Fatal(err)
		}
		recs[w] = &kgo.Record{Topic: s.control, Partition: 0, Value: v}
		s.next[w] += 100
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		s.t.Fatal(err)
	}
}

// step is the coordinator's step, timed.
func (s *simulation) step(ctx context.Context, gen int32) cluster.Committed {
	began := time.Now()
	done, err := s.coord.Step(ctx, gen, s.read, time.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	s.commit = append(s.commit, time.Since(began))
	return done
}

// read is the control topic from offset from to its end now.
func (s *simulation) read(ctx context.Context, from int64) ([]cluster.ControlRecord, int64, error) {
	ends, err := s.adm.ListEndOffsets(ctx, s.control)
	if err != nil {
		return nil, from, err
	}
	end, _ := ends.Lookup(s.control, 0)
	if end.Offset <= from {
		return nil, from, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.kafka.Addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.control: {0: kgo.NewOffset().At(from)}}))
	if err != nil {
		return nil, from, err
	}
	defer cl.Close()
	var out []cluster.ControlRecord
	for next := from; next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, from, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, cluster.ControlRecord{Offset: r.Offset, Value: r.Value})
			next = r.Offset + 1
		})
	}
	return out, end.Offset, nil
}

// One coordinator commits for 100 workers as for one: one snapshot per
// interval holding every worker's event, and the table's offsets for
// every partition.
func TestHundredWorkersCommitOncePerInterval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, workers := range []int{1, 100} {
		s := newSimulation(t, workers)
		const intervals = 8
		for i := range intervals {
			done := s.interval(ctx, 1)
			if done.Events != workers || done.Files != workers || done.Rows != int64(100*workers) {
				t.Fatalf("%d workers, interval %d: committed %d events, %d files, %d rows", workers, i, done.Events, done.Files, done.Rows)
			}
		}
		tbl, err := s.coord.Committer.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tbl.Metadata().Snapshots()); n != intervals {
			t.Fatalf("%d workers: %d snapshots in %d intervals", workers, n, intervals)
		}
		_, st, err := cluster.Recorded(tbl, s.coord.Committer)
		if err != nil {
			t.Fatal(err)
		}
		for w := range workers {
			if n, _ := st.Ends.Get(cluster.TopicPartition{Topic: "t", Partition: int32(w)}); n != intervals*100 {
				t.Fatalf("%d workers: partition %d recorded at %d, want %d", workers, w, n, intervals*100)
			}
		}
		slices.Sort(s.commit)
		t.Logf("%d workers: %d snapshots in %d intervals, median commit %v", workers, intervals, intervals, s.commit[len(s.commit)/2].Round(time.Millisecond))
	}
}

// BenchmarkCoordinatorCommit measures the coordinator's step of one
// interval (reading the events, one commit) at 1, 100 and 1,000 workers;
// the workers' publishing is not timed. Its cost grows with the events it
// reads and the files it commits, not with commits, of which there is one.
func BenchmarkCoordinatorCommit(b *testing.B) {
	for _, workers := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := newSimulation(b, workers)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				s.publish(ctx, 1)
				b.StartTimer()
				s.step(ctx, 1)
			}
		})
	}
}

// An event written for another table of the same name (dropped and
// created again since) is never committed, even for a partition the
// table has no offset of, where any range would chain.
func TestEventOfAnotherTableIsDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	ev := cluster.Event{Output: cluster.Output{Table: "db.t", TableUUID: "00000000-0000-0000-0000-000000000001"}, Ranges: []cluster.Range{rng(7, 0, 100)}}
	v, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cl.ProduceSync(ctx, &kgo.Record{Topic: s.control, Partition: 0, Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	done := s.interval(ctx, 1)
	if done.Events != 1 || done.Stale != 1 {
		t.Fatalf("committed %d events, dropped %d: want the worker's one committed and the other table's dropped", done.Events, done.Stale)
	}
	if _, ok := done.Ends.Get(cluster.TopicPartition{Topic: "t", Partition: 7}); ok {
		t.Fatal("the other table's range was recorded")
	}
}

func (s *simulation) send(ctx context.Context, ev cluster.Event) {
	s.t.Helper()
	v, err := ev.Marshal()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.cl.ProduceSync(ctx, &kgo.Record{Topic: s.control, Partition: 0, Value: v}).FirstErr(); err != nil {
		s.t.Fatal(err)
	}
}

// Ranges without rows never make a commit of their own (a commit that
// sets the record alone is not pinned to a snapshot, and could overwrite
// a newer record): they wait and go in with the next commit of files.
func TestRangesWithoutRowsWaitForFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	s.send(ctx, cluster.Event{Output: cluster.Output{Table: "db.t"}, Ranges: []cluster.Range{rng(5, 0, 10)}})
	done := s.step(ctx, 1)
	if done.Table != nil || done.Waiting != 1 {
		t.Fatalf("a step of ranges without rows committed %+v", done)
	}
	done = s.interval(ctx, 1)
	if done.Events != 2 {
		t.Fatalf("committed %d events, want the file's and the waiting one", done.Events)
	}
	if n, _ := done.Ends.Get(cluster.TopicPartition{Topic: "t", Partition: 5}); n != 10 {
		t.Fatalf("partition 5 recorded at %d, want 10", n)
	}
}

// An event whose files cannot be read is skipped with a warning; the
// others commit.
func TestUnreadableEventIsSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	s.send(ctx, cluster.Event{Output: cluster.Output{Table: "db.t", Manifests: []cluster.Manifest{{Avro: []byte("not avro")}}}, Ranges: []cluster.Range{rng(9, 0, 10)}})
	done := s.interval(ctx, 1)
	if done.Events != 1 || done.Files != 1 {
		t.Fatalf("committed %d events, %d files: want the readable one", done.Events, done.Files)
	}
}

// A coordinator of an older generation than the record's is fenced,
// unless it is a member of the group's current generation: the group
// was started again and counts from 1.
func TestCoordinatorFencedByGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	s.interval(ctx, 5)
	s.coord.Current = func(context.Context) (bool, error) { return false, nil }
	s.publish(ctx, 3)
	if _, err := s.coord.Step(ctx, 3, s.read, time.Now()); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a zombie of generation 3 after generation 5's commit: %v", err)
	}
	s.coord.Current = func(context.Context) (bool, error) { return true, nil }
	done, err := s.coord.Step(ctx, 1, s.read, time.Now())
	if err != nil || done.Events != 1 {
		t.Fatalf("the current generation 1 of a group started again: %+v, %v", done, err)
	}
}
