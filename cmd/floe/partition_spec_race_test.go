package main_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// wantRows fails the test unless table name holds ids 0..n-1, each once,
// as iceberg-go's own scan reads them (rowsOf reports any id twice).
func wantRows(t *testing.T, e *env, name string, n int) {
	t.Helper()
	rows := rowsOf(t, e, name)
	missing := 0
	for i := range int64(n) {
		if _, ok := rows[i]; !ok {
			missing++
		}
	}
	if missing > 0 || len(rows) != n {
		t.Errorf("table %s holds %d distinct ids with %d of 0..%d missing, want each of the %d once", name, len(rows), missing, n-1, n)
	}
}

// wantKnownSpecs fails the test unless every live data file of table name
// names a partition spec the table has; it returns the spec ids of the
// files, one per file.
func wantKnownSpecs(t *testing.T, e *env, name string) []int32 {
	t.Helper()
	ctx := context.Background()
	tbl := e.loadTable(ctx, e.catalog(ctx), name)
	files, _ := dataFiles(t, e.Warehouse, name)
	var ids []int32
	for _, f := range files {
		if tbl.Metadata().PartitionSpecByID(int(f.SpecID())) == nil {
			t.Errorf("data file %s names partition spec %d, which table %s does not have", f.FilePath(), f.SpecID(), name)
		}
		ids = append(ids, f.SpecID())
	}
	return ids
}

// parquetOnDisk counts the Parquet files in db.t's data directory: live
// files and any a refused commit left behind.
func parquetOnDisk(t *testing.T, e *env) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(e.Warehouse, "db.db", "t", "data"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantSpecRefusal fails the test unless r is floe's exit 2 naming the
// table's spec, the pipeline's and both fixes.
func wantSpecRefusal(t *testing.T, what string, code int, out string) {
	t.Helper()
	for _, want := range []string{"table db.t is partitioned by [month(ts)], but partition-fields ask for [day(ts)]", "change partition-fields to match", "partition-spec-evolution"} {
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("%s: want exit 2 saying %q, got exit %d:\n%s", what, want, code, out)
		}
	}
}

// A stream whose partition-fields say day(ts) has written a batch's files
// and is about to commit them when floe table set-partition-spec makes
// the table's spec month(ts): the commit is refused as a restart with
// those partition-fields would be, its files are removed, and the run
// that names month(ts) takes the batch's input again, every row once.
func TestSpecChangeDuringBatchCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeCountries(t, e, "a.parquet", 0, 60, 3)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
	writeCountries(t, e, "b.parquet", 60, 60, 3)
	p := e.startPaused(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
	e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "month(ts)")
	wantSpecRefusal(t, "the batch in flight", exitCode(p.resume(t)), p.out.String())
	wantRows(t, e, "db.t", 60)
	if n := parquetOnDisk(t, e); n != 3 {
		t.Errorf("%d Parquet files under db.t after the refused commit, want the first batch's 3", n)
	}
	r := e.Stream("db.t", "--partition-fields", "day(ts)")
	wantSpecRefusal(t, "a restart with day(ts)", r.Code, r.Stderr)
	writeCountries(t, e, "c.parquet", 120, 60, 3)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "month(ts)")...)
	wantRows(t, e, "db.t", 180)
	if specs := wantKnownSpecs(t, e, "db.t"); slices.Index(specs, 1) < 0 || len(specs) != 5 {
		t.Errorf("spec ids of the files %v, want the first batch's 3 of spec 0 and one a month of spec 1", specs)
	}
}

// waitRowsOrExit waits until table name holds n rows or the stream ends.
func waitRowsOrExit(t *testing.T, e *env, exited chan error, name string, n int) {
	t.Helper()
	fixture.WaitFor(t, 30*time.Second, fmt.Sprintf("%d rows in %s or the stream's end", n, name), func() bool {
		select {
		case err := <-exited:
			exited <- err
			return true
		default:
		}
		r := e.Run("scan", name, "--count")
		got, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
		return r.Code == 0 && err == nil && got >= n
	})
}

// A running processing-time stream meets a spec change between batches.
// With partition-fields day(ts) it stops with exit 2 at the next batch,
// whose files, written in the spec it still held, are not committed; the
// restart that names month(ts) takes that input. Without partition-fields
// the batch commits in the spec it was written in and the stream goes on
// in the table's new spec, as Spark's writer takes the table's spec of
// each batch.
func TestSpecChangeBetweenStreamBatches(t *testing.T) {
	t.Parallel()
	for _, asserted := range []bool{true, false} {
		t.Run(fmt.Sprintf("partition-fields=%v", asserted), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var fields []string
			if asserted {
				fields = []string{"--partition-fields", "day(ts)"}
			}
			// The stream commits a batch first, so that it holds the
			// table as the spec change finds it; without partition-fields
			// it needs a table partitioned by day(ts) already.
			writeCountries(t, e, "a.parquet", 0, 30, 3)
			if !asserted {
				e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
			}
			writeCountries(t, e, "a2.parquet", 30, 30, 3)
			var out syncBuffer
			cmd := e.startFloe(&out, append(e.StreamArgs("db.t", "--trigger", "processing-time=100ms"), fields...)...)
			defer cmd.Process.Kill()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			waitRowsOrExit(t, e, exited, "db.t", 60)
			e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "month(ts)")
			writeCountries(t, e, "b.parquet", 60, 60, 3)
			waitRowsOrExit(t, e, exited, "db.t", 120)
			if asserted {
				var err error
				select {
				case err = <-exited:
				default:
					t.Fatalf("the stream committed b.parquet after the table's spec became month(ts), and runs on:\n%s", out.String())
				}
				wantSpecRefusal(t, "the running stream", exitCode(err), out.String())
				wantRows(t, e, "db.t", 60)
				e.OK(e.StreamArgs("db.t", "--partition-fields", "month(ts)")...)
				wantRows(t, e, "db.t", 120)
				if specs := wantKnownSpecs(t, e, "db.t"); len(specs) != 4 || specs[0] != 1 {
					t.Errorf("spec ids of the files %v, want 3 of spec 0 and b.parquet's one of spec 1", specs)
				}
				return
			}
			writeCountries(t, e, "c.parquet", 120, 60, 3)
			waitRowsOrExit(t, e, exited, "db.t", 180)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if code := exitCode(<-exited); code != 0 {
				t.Errorf("stream without partition-fields: exit %d, want 0 after SIGTERM:\n%s", code, out.String())
			}
			wantRows(t, e, "db.t", 180)
			if specs := wantKnownSpecs(t, e, "db.t"); slices.Index(specs, 1) < 0 {
				t.Errorf("spec ids of the files %v: no batch after the change wrote the table's spec 1", specs)
			}
		})
	}
}

// floe maintain rewrite-data-files moves the files of day(ts) into the
// new month(ts) spec while a stream commits: first the stream's commit
// lands while the rewrite's is in flight, then the rewrite's while the
// stream's is. Both land, and every row is in the table once.
func TestRewriteAfterSpecChangeRacesStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeCountries(t, e, "a.parquet", 0, 60, 3)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
	e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "month(ts)")

	rewrite := e.startPaused("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
	writeCountries(t, e, "b.parquet", 60, 60, 3)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "month(ts)")...)
	if code := exitCode(rewrite.resume(t)); code != 0 {
		t.Errorf("rewrite whose commit met the stream's: exit %d\n%s", code, rewrite.out.String())
	}
	wantRows(t, e, "db.t", 120)
	t.Logf("after the first race: %v\n%s", wantKnownSpecs(t, e, "db.t"), rewrite.out.String())

	writeCountries(t, e, "c.parquet", 120, 60, 3)
	stream := e.startPaused(e.StreamArgs("db.t", "--partition-fields", "month(ts)")...)
	r := e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
	t.Logf("rewrite while the stream's commit is in flight: %s", r.Stdout)
	if code := exitCode(stream.resume(t)); code != 0 {
		t.Errorf("stream whose commit met the rewrite's: exit %d\n%s", code, stream.out.String())
	}
	wantRows(t, e, "db.t", 180)
	for _, id := range wantKnownSpecs(t, e, "db.t") {
		if id != 1 {
			t.Errorf("a file of spec %d after rewrites into month(ts) and a batch written in it", id)
		}
	}
}
