package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/internal/write"
)

var simWorkers = flag.String("cluster-sim", "100", "worker counts of TestUpsertSimulation, comma-separated (e.g. 100,1000)")

// recordPart is an input part of records built in memory.
type recordPart struct {
	name string
	rec  arrow.RecordBatch
}

func (p recordPart) Name() string     { return p.name }
func (p recordPart) SizeBytes() int64 { return -1 }
func (p recordPart) Open(context.Context) (array.RecordReader, error) {
	p.rec.Retain()
	return array.NewRecordReader(p.rec.Schema(), []arrow.RecordBatch{p.rec})
}

// upsertSimulation is workers in one process, each holding one partition,
// publishing one event per interval of rows that update half of the keys
// it wrote before and add as many new ones, and a coordinator merging them
// into a table: the coordinator's work is what the simulation measures.
type upsertSimulation struct {
	*simulation
	rows int // rows per worker and interval
}

func newUpsertSimulation(t testing.TB, workers, rows, formatVersion int) *upsertSimulation {
	s := newSimulation(t, workers)
	ctx := context.Background()
	cat := s.coord.Committer.Catalog
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "u"}, QueryID: cluster.QueryID("sim-upsert"), Source: "KafkaV2[Subscribe[events]]"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	tbl, err := c.Create(ctx, schema, commit.CreateOptions{FormatVersion: formatVersion, IdentifierFields: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	s.tbl = tbl
	s.coord = cluster.Coordinator{Committer: c, Upsert: &cluster.Upsert{Keys: func(*table.Table) []string { return []string{"id"} }, Index: upsert.NewKeyIndex(256 << 20)}}
	return &upsertSimulation{simulation: s, rows: rows}
}

// publish has every worker write its rows and publish them with their
// keys. Worker w's keys are w*1e9 + j; in interval i it updates rows/2 of
// the i*rows/2 it wrote before (j = 0, i, 2i, ...) and adds rows/2 new
// ones.
func (s *upsertSimulation) publish(ctx context.Context, interval int) {
	recs := make([]*kgo.Record, len(s.next))
	half := int64(s.rows / 2)
	for w := range s.next {
		ids := array.NewInt64Builder(memory.DefaultAllocator)
		vs := array.NewStringBuilder(memory.DefaultAllocator)
		base := int64(w) * 1_000_000_000
		for j := range half {
			if interval > 0 {
				ids.Append(base + j*int64(interval))
				vs.Append(fmt.Sprintf("update %d", interval))
			}
			ids.Append(base + int64(interval)*half + j)
			vs.Append(fmt.Sprintf("new %d", interval))
		}
		idArr, vArr := ids.NewArray(), vs.NewArray()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
			[]arrow.Array{idArr, vArr}, int64(idArr.Len()))
		ids.Release()
		vs.Release()
		keys := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{idArr}, int64(idArr.Len()))
		wr := write.Writer{Table: s.tbl, FilePrefix: fmt.Sprintf("w%04d-%04d", w, interval), OneFile: true}
		res, err := wr.Write(ctx, []ingest.Part{recordPart{name: "rows", rec: rec}})
		rec.Release()
		idArr.Release()
		vArr.Release()
		if err != nil {
			s.t.Fatal(err)
		}
		n := int64(keys.NumRows())
		ev, err := cluster.NewEvent(s.tbl, res.Files, []cluster.Range{rng(int32(w), s.next[w], s.next[w]+n)})
		if err != nil {
			s.t.Fatal(err)
		}
		if ev.KeySet, err = upsert.EncodeKeys([]arrow.RecordBatch{keys}); err != nil {
			s.t.Fatal(err)
		}
		keys.Release()
		ev.Worker, ev.Generation, ev.WrittenMs = fmt.Sprint(w), 1, time.Now().UnixMilli()
		v, err := ev.Marshal()
		if err != nil {
			s.t.Fatal(err)
		}
		recs[w] = &kgo.Record{Topic: s.control, Partition: 0, Value: v}
		s.next[w] += n
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		s.t.Fatal(err)
	}
}

// The coordinator of 100 workers (and with -cluster-sim 100,1000 of a
// thousand) merging every worker's upserts: each interval is one row delta
// holding every worker's file and the deletion vectors of the rows they
// replace (one per data file, whichever workers' keys it held), the
// table holds each key once with its newest value, and the log reports
// the commit step's time, the files per commit and the metadata a
// snapshot adds.
func TestUpsertSimulation(t *testing.T) {
	ctx := context.Background()
	for _, n := range strings.Split(*simWorkers, ",") {
		workers, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil {
			t.Fatalf("-cluster-sim %q: %v", *simWorkers, err)
		}
		const rows, intervals = 100, 6
		s := newUpsertSimulation(t, workers, rows, 3)
		var steps []time.Duration
		var metaBytes []int64
		var dvs string
		for i := range intervals {
			s.publish(ctx, i)
			began := time.Now()
			done, err := s.coord.Step(ctx, 1, s.read, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, time.Since(began))
			if done.Events != workers || done.Files != workers {
				t.Fatalf("%d workers, interval %d: committed %d events, %d files", workers, i, done.Events, done.Files)
			}
			if want := int64(0); i > 0 {
				want = int64(workers * rows / 2)
				if done.Deleted != want {
					t.Fatalf("%d workers, interval %d: %d rows deleted, want %d", workers, i, done.Deleted, want)
				}
			}
			tbl := done.Table
			snap := tbl.CurrentSnapshot()
			dvs = snap.Summary.Properties["added-delete-files"]
			fi, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
			if err != nil {
				t.Fatal(err)
			}
			metaBytes = append(metaBytes, fi.Size())
		}
		tbl, err := s.coord.Committer.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := fixture.ReadIDs(ctx, s.coord.Committer.Catalog, "db.u", "id")
		if err != nil {
			t.Fatal(err)
		}
		if want := workers * intervals * rows / 2; len(ids) != want {
			t.Fatalf("%d workers: %d keys in the table, want %d", workers, len(ids), want)
		}
		for id, c := range ids {
			if c != 1 {
				t.Fatalf("%d workers: key %d is in the table %d times", workers, id, c)
			}
		}
		if n := len(tbl.Metadata().Snapshots()); n != intervals {
			t.Fatalf("%d workers: %d snapshots in %d intervals", workers, n, intervals)
		}
		sorted := slices.Clone(steps)
		slices.Sort(sorted)
		t.Logf("%d workers, %d upserts each per interval: commit step median %v (max %v); %d data files and %s deletion vectors (one Puffin file) per commit; metadata file %d bytes after %d commits (+%d per commit)",
			workers, rows, sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), workers, dvs,
			metaBytes[len(metaBytes)-1], intervals, (metaBytes[len(metaBytes)-1]-metaBytes[0])/int64(intervals-1))
	}
}

// On a format-version 2 table the coordinator's commit deletes the keys
// of every worker's changes by equality deletes, written once for all of
// them: each key is in the table once, with its newest value.
func TestUpsertSimulationEqualityDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const workers, rows, intervals = 10, 100, 4
	s := newUpsertSimulation(t, workers, rows, 2)
	for i := range intervals {
		s.publish(ctx, i)
		done, err := s.coord.Step(ctx, 1, s.read, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if done.Events != workers || done.Keys != workers*rows/2*min(i+1, 2) {
			t.Fatalf("interval %d: committed %d events, %d keys", i, done.Events, done.Keys)
		}
		if n := done.Table.CurrentSnapshot().Summary.Properties["added-equality-delete-files"]; n != "1" {
			t.Fatalf("interval %d: %s equality delete files, want one for every worker's keys", i, n)
		}
	}
	tbl, err := s.coord.Committer.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan(table.WithSelectedFields("id", "v")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[int64]string{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids, vs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
		for i := range ids.Len() {
			if _, dup := vals[ids.Value(i)]; dup {
				t.Fatalf("key %d is in the table twice", ids.Value(i))
			}
			vals[ids.Value(i)] = vs.Value(i)
		}
		rec.Release()
	}
	if want := workers * intervals * rows / 2; len(vals) != want {
		t.Fatalf("%d keys in the table, want %d", len(vals), want)
	}
	// Key j*3 of each worker was last changed in interval 3.
	if v := vals[3*3]; v != "update 3" {
		t.Fatalf("key 9 holds %q, want its newest value, update 3", v)
	}
}

// A coordinator in mode upsert with nothing new to commit commits
// nothing: no record moves, no metadata is written.
func TestUpsertIdleStepCommitsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newUpsertSimulation(t, 2, 10, 3)
	s.publish(ctx, 0)
	if _, err := s.coord.Step(ctx, 1, s.read, time.Now()); err != nil {
		t.Fatal(err)
	}
	before, err := s.coord.Committer.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		done, err := s.coord.Step(ctx, 1, s.read, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if done.Table != nil {
			t.Fatalf("an idle step committed %+v", done)
		}
	}
	after, err := s.coord.Committer.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.MetadataLocation() != before.MetadataLocation() {
		t.Fatalf("idle steps wrote metadata %s after %s", after.MetadataLocation(), before.MetadataLocation())
	}
}

// A merge whose commit answer is lost (the catalog made it) is found made
// on the attempt after: each key stays once with its newest value.
func TestUpsertLostCommitAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newUpsertSimulation(t, 3, 10, 3)
	cat := &failingCatalog{Catalog: s.coord.Committer.Catalog}
	s.coord.Committer.Catalog = cat
	lost := "db.u"
	for i := range 3 {
		s.publish(ctx, i)
		if i == 1 {
			cat.lose.Store(&lost)
		}
		if _, err := s.coord.Step(ctx, 1, s.read, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if cat.lose.Load() != nil {
		t.Fatal("no commit's answer was lost")
	}
	ids, err := fixture.ReadIDs(ctx, cat.Catalog, "db.u", "id")
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * 3 * 10 / 2; len(ids) != want {
		t.Fatalf("%d keys, want %d", len(ids), want)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("key %d is in the table %d times", id, n)
		}
	}
}
