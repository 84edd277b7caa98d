package iceberg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
)

func TestIcebergSourceTwoFilesPerBatch(t *testing.T) {
	e := newEnv(t)
	e.appendA(10)
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-files-per-micro-batch": "2"}}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{200, 200, 200, 200, 200}) {
		t.Fatalf("batches %v, want 5 of 200", got)
	}
	e.level("db.a", "db.b")
}

func TestIcebergSourceSoftRowLimit(t *testing.T) {
	e := newEnv(t)
	for _, n := range []int64{100, 100, 100, 500, 100, 40, 40} {
		e.appendRows(n)
	}
	// 150 rows: the file crossing the limit is included (100+100, and
	// 100+40+40), and a file larger than the limit is a batch alone.
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-rows-per-micro-batch": "150"}}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{200, 100, 500, 180}) {
		t.Fatalf("batches %v, want [200 100 500 180]", got)
	}
	e.level("db.a", "db.b")
}

func TestIcebergSourceOnceIgnoresLimits(t *testing.T) {
	e := newEnv(t)
	e.appendA(3)
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-files-per-micro-batch": "1"}}
	got, _, err := e.runWith(src, "db.b", "ck-b", config.Trigger{Kind: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{300}) {
		t.Fatalf("once: batches %v, want one of 300", got)
	}
}

func TestIcebergSourceDeleteSnapshot(t *testing.T) {
	e := newEnv(t)
	e.appendA(2)
	ctx := context.Background()
	e.deleteFirstFile()
	if op := e.table("db.a").CurrentSnapshot().Summary.Operation; op != table.OpDelete {
		t.Fatalf("the delete made a %q snapshot, want delete", op)
	}
	e.appendA(1)
	src := config.Source{Type: "iceberg", Table: "db.a"}
	_, _, err := e.runWith(src, "db.b", "ck-b", config.Trigger{})
	if err == nil || !strings.Contains(err.Error(), "streaming-skip-delete-snapshots") || !strings.Contains(err.Error(), "is a delete") {
		t.Fatalf("delete snapshot without the skip option: got %v, want an error naming streaming-skip-delete-snapshots", err)
	}
	if _, err := e.cat.LoadTable(ctx, table.Identifier{"db", "b"}); err == nil {
		t.Fatalf("the failed stream created table b")
	}
	// Skipped, every append is read, including the rows deleted later, as
	// Spark does.
	src.Options = map[string]string{"streaming-skip-delete-snapshots": "true"}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{300}) {
		t.Fatalf("batches %v, want [300]", got)
	}
}

func TestIcebergSourceCompactionSkipped(t *testing.T) {
	e := newEnv(t)
	e.appendA(3)
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-files-per-micro-batch": "1"}}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{100, 100, 100}) {
		t.Fatalf("batches %v", got)
	}
	compact(t, e.table("db.a"))
	e.appendA(2)
	// The replace snapshot between the two runs adds no rows to read.
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{100, 100}) {
		t.Fatalf("batches after the compaction %v, want [100 100]", got)
	}
	e.level("db.a", "db.b")
	// A new query from the start reads each append once, and not the
	// compacted copy.
	src.Options = nil
	if got := e.run(src, "db.c", "ck-c"); !slices.Equal(got, []int64{500}) {
		t.Fatalf("new query: batches %v, want [500]", got)
	}
	e.level("db.a", "db.c")
}

// compact rewrites all of tbl's data files into one, with iceberg-go's
// compaction: a replace snapshot.
func compact(t *testing.T, tbl *table.Table) {
	t.Helper()
	ctx := context.Background()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, task := range tasks {
		size += task.File.FileSizeBytes()
	}
	if _, err := tbl.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{Tasks: tasks, TotalSizeBytes: size}}, table.RewriteDataFilesOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestIcebergSourceExpiredStartSnapshot: the query keeps a tag at its
// position, which even iceberg-go's expiry keeps, so an expiry of all but
// the newest two snapshots leaves the query's start, and it reads every
// append after it once, without a warning.
func TestIcebergSourceExpiredStartSnapshot(t *testing.T) {
	e := newEnv(t)
	e.appendA(2)
	src := config.Source{Type: "iceberg", Table: "db.a"}
	e.run(src, "db.b", "ck-b")
	e.appendA(2)
	time.Sleep(5 * time.Millisecond)
	ctx := context.Background()
	tx := e.table("db.a").NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(e.table("db.a").Metadata().Snapshots()); n != 3 {
		t.Fatalf("after expiry table a has %d snapshots, want 3: the newest two and the query's position", n)
	}
	got, warnings, err := e.runWith(src, "db.b", "ck-b", config.Trigger{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{200}) {
		t.Fatalf("batches %v, want [200]: the two appends after the query's position", got)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %q, want none", warnings)
	}
	e.level("db.a", "db.b")
}

func TestIcebergSourceFilterKeep(t *testing.T) {
	e := newEnv(t)
	e.appendA(4)
	src := config.Source{Type: "iceberg", Table: "db.a", Filter: "id >= 150 AND id < 250 AND v LIKE 'v%'", Keep: []string{"id"}}
	got := e.run(src, "db.b", "ck-b")
	if !slices.Equal(got, []int64{100}) {
		t.Fatalf("batches %v, want one of the 100 matching rows", got)
	}
	ids := e.ids("db.b")
	if len(ids) != 100 || ids[0] != 150 || ids[99] != 249 {
		t.Fatalf("table b has %d rows, want ids 150..249", len(ids))
	}
	if fields := e.table("db.b").Schema().Fields(); len(fields) != 1 || fields[0].Name != "id" {
		t.Fatalf("table b has columns %v, want id alone", fields)
	}
	src = config.Source{Type: "iceberg", Table: "db.a", Drop: []string{"v"}}
	e.run(src, "db.c", "ck-c")
	if fields := e.table("db.c").Schema().Fields(); len(fields) != 1 || fields[0].Name != "id" {
		t.Fatalf("table c has columns %v, want id alone", fields)
	}
	e.level("db.a", "db.c")
}

func TestIcebergSourceBadFilter(t *testing.T) {
	e := newEnv(t)
	e.appendA(1)
	src := config.Source{Type: "iceberg", Table: "db.a", Filter: "nope > 1"}
	_, _, err := e.runWith(src, "db.b", "ck-b", config.Trigger{})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("filter on a missing column: got %v, want an error naming it", err)
	}
}

func TestIcebergSourceAsyncPlanningSameResult(t *testing.T) {
	e := newEnv(t)
	e.appendA(10)
	opts := map[string]string{"streaming-max-files-per-micro-batch": "3"}
	sync := e.run(config.Source{Type: "iceberg", Table: "db.a", Options: opts}, "db.sync", "ck-sync")
	async := map[string]string{"streaming-max-files-per-micro-batch": "3", "async-micro-batch-planning-enabled": "true",
		"async-queue-preload-file-limit": "4", "streaming-snapshot-polling-interval-ms": "50"}
	got := e.run(config.Source{Type: "iceberg", Table: "db.a", Options: async}, "db.async", "ck-async")
	if !slices.Equal(sync, got) || !slices.Equal(got, []int64{300, 300, 300, 100}) {
		t.Fatalf("batches: synchronous %v, asynchronous %v; want both [300 300 300 100]", sync, got)
	}
	e.level("db.a", "db.sync")
	e.level("db.a", "db.async")
	// A processing-time stream with async planning sees appends made while
	// it runs, after a poll.
	e.appendA(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := &config.Pipeline{
		Source:     config.Source{Type: "iceberg", Table: "db.a", Options: async},
		Sink:       config.Sink{Table: "db.async"},
		Checkpoint: e.dir + "/ck-async",
		Trigger:    config.Trigger{Kind: "processing-time", Interval: 20 * time.Millisecond},
	}
	cfg.SetDefaults()
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.Run(ctx); done <- err }()
	deadline := time.Now().Add(20 * time.Second)
	for len(e.ids("db.async")) < 1200 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	p.Close()
	e.level("db.a", "db.async")
}

// TestIcebergSourceRerunAfterRollback: a batch planned up to a snapshot
// that a rollback then took out of the table's history is not re-run as
// an empty batch, which would record its files as read.
func TestIcebergSourceRerunAfterRollback(t *testing.T) {
	e := newEnv(t)
	e.appendA(2)
	ctx := context.Background()
	cfg := &config.Pipeline{
		Source:     config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-files-per-micro-batch": "1"}},
		Sink:       config.Sink{Table: "db.b"},
		Checkpoint: e.dir + "/ck-b",
	}
	cfg.SetDefaults()
	run := func(fail bool) error {
		opts := floe.Options{Catalog: e.cat}
		if fail {
			opts.ForEachBatch = func(_ context.Context, batch int64, _ []floe.DataFile) error {
				if batch == 1 {
					return errors.New("stop before batch 1 commits")
				}
				return nil
			}
		}
		p, err := floe.Open(ctx, cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		_, err = p.Run(ctx)
		return err
	}
	if err := run(true); err == nil {
		t.Fatal("the hook did not stop batch 1")
	}
	// Back to the first append: batch 1 ends at a snapshot that is no
	// longer an ancestor of the current one.
	tbl := e.table("db.a")
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	tx := tbl.NewTransaction()
	if err := tx.RollbackToSnapshot(first); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err := run(false)
	if err == nil || !strings.Contains(err.Error(), "batch end") {
		t.Fatalf("re-run of batch 1 after the rollback: got %v, want an error saying its end is not in the table's history", err)
	}
	if _, err := os.Stat(e.dir + "/ck-b/commits/1"); err == nil {
		t.Fatal("batch 1 was recorded as committed")
	}
}

// TestIcebergSourceProcessingTimeStopsOnDelete: a snapshot the stream
// cannot read stops a processing-time query, as it stops Spark's, instead
// of being retried without end.
func TestIcebergSourceProcessingTimeStopsOnDelete(t *testing.T) {
	e := newEnv(t)
	e.appendA(2)
	e.deleteFirstFile()
	src := config.Source{Type: "iceberg", Table: "db.a"}
	// A stream that retried without end would fail the run at go test's
	// -timeout, with the stack of the retry loop; a fixed limit here would
	// race the machine's load under -race.
	_, _, err := e.runWith(src, "db.b", "ck-b", config.Trigger{Kind: "processing-time", Interval: 10 * time.Millisecond})
	if !errors.Is(err, source.ErrCannotContinue) || !strings.Contains(err.Error(), "streaming-skip-delete-snapshots") {
		t.Fatalf("got %v, want an error naming streaming-skip-delete-snapshots", err)
	}
}

// deleteFirstFile deletes the rows of db.a's first file (ids 0-99): a
// delete snapshot that drops the file.
func (e *env) deleteFirstFile() {
	e.t.Helper()
	ctx := context.Background()
	tx := e.table("db.a").NewTransaction()
	if err := tx.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(100)), nil); err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// A query starting at the latest snapshot keeps the snapshot it resolved
// that to: its first batch, run again after a crash once the table has
// moved on, reads what it first planned.
func TestIcebergSourceLatestStartKeptForRerun(t *testing.T) {
	e := newEnv(t)
	e.appendA(2) // ids 0-99, then 100-199
	ctx := context.Background()
	stateDir := filepath.Join(e.dir, "ck", "sources", "0")
	open := func() source.Source {
		t.Helper()
		src, err := source.New(config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"starting-strategy": "INCREMENTAL_FROM_LATEST_SNAPSHOT"}},
			source.Env{StateDir: stateDir, Catalog: e.cat})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return src
	}
	first := open()
	end, err := first.LatestOffset(ctx, first.InitialOffset(), source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	e.appendA(1) // ids 200-299, committed before the batch is run again
	again := open()
	parts, err := again.Read(ctx, again.InitialOffset(), end)
	if err != nil {
		t.Fatalf("re-run of the first batch: %v", err)
	}
	var ids []int64
	for _, p := range parts {
		rdr, err := p.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			col := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
			ids = append(ids, col.Int64Values()...)
		}
		rdr.Release()
	}
	slices.Sort(ids)
	if len(ids) != 100 || ids[0] != 100 || ids[99] != 199 {
		t.Fatalf("the re-run read %d rows (ids %v...), want ids 100-199, the latest snapshot's when the query first planned", len(ids), ids[:min(len(ids), 3)])
	}
}
