package main_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// TestCompactionBesideAStream: `floe maintain rewrite-data-files` runs
// again and again while a stream appends to the table; every row ends up
// in the table exactly once.
func TestCompactionBesideAStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 30, 100
	e.WriteIDs("f-000.parquet", 0, rows)
	var stderr syncBuffer
	writer := e.startFloe(&stderr, "stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t",
		"--checkpoint", e.Ckpt, "--trigger", "50ms", "--max-files-per-trigger", "1", "--maintenance=false")
	defer writer.Process.Kill()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("writer's stderr:\n%s", stderr.String())
		}
	})
	fixture.WaitFor(t, 20*time.Second, "the first batch", func() bool { r := e.Run("scan", "db.t", "--count"); return r.Code == 0 && r.Stdout == "100\n" })
	compactions := 0
	for i := int64(1); i < files; i++ {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*rows, rows)
		time.Sleep(30 * time.Millisecond)
		if i%6 == 0 {
			r := e.Run("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2", "--json")
			if r.Code == 0 && strings.Contains(r.Stdout, `"added_data_files": 1`) {
				compactions++
			} else if r.Code != 0 {
				t.Logf("compaction %d: %s", i, r)
			}
		}
	}
	fixture.WaitFor(t, 30*time.Second, "every file", func() bool { return e.Count("db.t") >= files*rows })
	if err := writer.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(writer.Wait()); code != 0 {
		t.Fatalf("writer exited %d", code)
	}
	if compactions == 0 {
		t.Fatal("no compaction succeeded")
	}
	replaces := 0
	for _, s := range e.Snapshots("db.t") {
		if s.Operation == "replace" {
			replaces++
		}
	}
	if replaces != compactions {
		t.Fatalf("%d replace snapshots, %d compactions reported", replaces, compactions)
	}
	if ids := e.IDs("db.t"); len(ids) != files*rows { // ids fails on a duplicate
		t.Fatalf("%d distinct ids, want %d", len(ids), files*rows)
	}
	if n := e.Count("db.t"); n != files*rows {
		t.Fatalf("%d rows, want %d", n, files*rows)
	}
}

// TestSortCompaction: after `--strategy sort --sort-by id`, the files'
// id ranges (from their statistics) do not overlap, and the table holds
// the same rows.
func TestSortCompaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	perm := slices.Collect(func(yield func(int64) bool) {
		for i := range int64(16000) {
			if !yield((i * 7919) % 16000) { // a permutation: 7919 is prime
				return
			}
		}
	})
	for f := range 8 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, fixture.IDSchema)
		for _, id := range perm[f*2000 : (f+1)*2000] {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", id))
		}
		rec := b.NewRecordBatch()
		b.Release()
		if err := fixture.WriteParquet(fmt.Sprintf("%s/f-%d.parquet", e.Landing, f), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	e.Stream("db.s", "--max-files-per-trigger", "1", "--maintenance=false")
	_, before := e.contents("db.s")
	r := e.OK("maintain", "rewrite-data-files", "db.s", "--strategy", "sort", "--sort-by", "id", "--target-file-size-bytes", "16384", "--json")
	if !strings.Contains(r.Stdout, `"rewritten_data_files": 8`) {
		t.Fatalf("sort compaction: %s", r.Stdout)
	}
	ctx := context.Background()
	tbl := e.loadTable(ctx, e.catalog(ctx), "db.s")
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 2 {
		t.Fatalf("%d files after the sort, want several at a 16 KiB target", len(tasks))
	}
	id := tbl.Schema().Field(0).ID
	type span struct{ lo, hi int64 }
	var spans []span
	for _, task := range tasks {
		lo, hi := task.File.LowerBoundValues()[id], task.File.UpperBoundValues()[id]
		spans = append(spans, span{int64(binary.LittleEndian.Uint64(lo)), int64(binary.LittleEndian.Uint64(hi))})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			t.Fatalf("file id ranges overlap: %v", spans)
		}
	}
	if n, after := e.contents("db.s"); n != 16000 || after != before {
		t.Fatalf("after the sort: %d rows, checksum %x; want 16000 and %x", n, after, before)
	}
}
