package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
)

// BenchmarkUpsert applies the upsert dataset's change files (by default
// 20 batches of 10,000 changes to a 10M-row table; FLOE_BENCH_UPSERT_ROWS,
// _BATCHES and _CHANGES change the sizes) with floe's mode upsert and with
// iceberg-go's Delete + Append, each on its own copy of the table, on a
// format-version 3 table and then a format-version 2 one, and prints the
// per-batch medians and p90s. Every table must then equal the oracle. It
// also times full scans of the tables after the batches, of floe's after
// compaction and of the same rows written fresh, and floe appending the
// same files. Run it with -benchtime 1x -count 1 (bench/run.sh,
// UPSERT=only). Each contender's measured run carries the pprof label
// contender=<name>.
func BenchmarkUpsert(b *testing.B) {
	spec, err := bench.UpsertSpecFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	root, err := bench.DataRoot()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	ds, err := bench.EnsureUpsert(root, spec)
	if err != nil {
		b.Fatal(err)
	}
	o, err := bench.NewUpsertOracle(b.Context(), ds)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("dataset %s and its oracle ready in %s", spec.Name(), time.Since(t0).Round(time.Millisecond))
	var total time.Duration
	for range b.N {
		for _, r := range upsertRound(b, ds, o, b.TempDir(), &report, b.Logf) {
			total += r.Wall
		}
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
}

// upsertRound builds each contender's table, runs it, checks it against
// the oracle and scans it, on format-versions 3 and 2, then scans the
// oracle's rows written fresh and appends the change files with floe;
// every result goes to rep. It returns the contenders' runs.
func upsertRound(tb testing.TB, ds bench.UpsertDataset, o *bench.UpsertOracle, work string, rep *bench.Report, logf func(string, ...any)) []bench.UpsertRun {
	tb.Helper()
	ctx := tb.Context()
	var runs []bench.UpsertRun
	var scans []bench.UpsertScan
	for _, v := range []int{3, 2} {
		for _, c := range bench.UpsertContenders {
			name := fmt.Sprintf("%s v%d", c.Name, v)
			dir := filepath.Join(work, fmt.Sprintf("%s-v%d", c.Name, v))
			t0 := time.Now()
			t, err := bench.NewUpsertTable(ctx, ds, ds.BaseDir, v, dir)
			if err != nil {
				tb.Fatal(err)
			}
			logf("%s: table of %d rows ready in %s", name, ds.Rows, time.Since(t0).Round(time.Millisecond))
			run, err := c.Run(bench.WithContender(ctx, c.Name), t)
			if err != nil {
				t.Close()
				tb.Fatal(err)
			}
			if err := t.Check(ctx, o); err != nil {
				t.Close()
				tb.Fatalf("%s after %d batches: %v", name, ds.Batches, err)
			}
			rep.AddUpsert(ds.UpsertSpec, run)
			runs = append(runs, run)
			logf("%s: %d batches in %s, table equals the oracle", name, len(run.Times), run.Wall.Round(time.Millisecond))
			scans = append(scans, upsertScan(tb, ctx, t, fmt.Sprintf("%s after %d batches", name, ds.Batches), rep))
			if c.Name == "floe" {
				comp, err := bench.CompactUpsert(ctx, t, name)
				if err != nil {
					t.Close()
					tb.Fatal(err)
				}
				rep.AddUpsertCompaction(comp)
				if err := t.Check(ctx, o); err != nil {
					t.Close()
					tb.Fatalf("%s compacted: %v", name, err)
				}
				scans = append(scans, upsertScan(tb, ctx, t, name+" compacted", rep))
			}
			t.Close()
			if err := os.RemoveAll(dir); err != nil {
				tb.Fatal(err)
			}
		}
	}
	fresh := filepath.Join(work, "fresh-input")
	if err := o.WriteRows(fresh); err != nil {
		tb.Fatal(err)
	}
	t, err := bench.NewUpsertTable(ctx, ds, fresh, 3, filepath.Join(work, "fresh"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := t.Check(ctx, o); err != nil {
		t.Close()
		tb.Fatalf("fresh table: %v", err)
	}
	scans = append(scans, upsertScan(tb, ctx, t, "same rows written fresh (v3)", rep))
	t.Close()
	for _, s := range scans {
		if s.Rows != o.Rows || s.Sum != scans[len(scans)-1].Sum {
			tb.Fatalf("%s: scan read %d rows, checksum %x; the fresh table %d rows, checksum %x", s.Table, s.Rows, s.Sum, scans[len(scans)-1].Rows, scans[len(scans)-1].Sum)
		}
	}
	app, err := bench.FloeAppendChanges(bench.WithContender(ctx, "floe append"), ds, filepath.Join(work, "append"))
	if err != nil {
		tb.Fatal(err)
	}
	rep.AddUpsertAppend(app)
	return runs
}

// upsertScan scans t's table in full and records the scan.
func upsertScan(tb testing.TB, ctx context.Context, t *bench.UpsertTable, name string, rep *bench.Report) bench.UpsertScan {
	tb.Helper()
	s, err := bench.FullScan(ctx, t.Catalog, name)
	if err != nil {
		t.Close()
		tb.Fatal(err)
	}
	rep.AddUpsertScan(s)
	return s
}

// TestUpsertContendersMatchOracle runs the whole upsert benchmark on a
// tiny dataset: every contender's table must equal the oracle after the
// batches (and floe's after compaction), and every full scan must read
// the fresh table's rows.
func TestUpsertContendersMatchOracle(t *testing.T) {
	ds, err := bench.EnsureUpsert(t.TempDir(), bench.UpsertSpec{Rows: 3000, Batches: 4, Changes: 300, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	o, err := bench.NewUpsertOracle(t.Context(), ds)
	if err != nil {
		t.Fatal(err)
	}
	// A batch inserts as many keys as it deletes.
	if o.Rows != 3000 {
		t.Fatalf("oracle holds %d rows, want 3000", o.Rows)
	}
	var rep bench.Report
	runs := upsertRound(t, ds, o, t.TempDir(), &rep, t.Logf)
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	for _, r := range runs {
		if r.Files.Deletes() == 0 {
			t.Errorf("%s v%d left no delete file", r.Contender, r.FormatVersion)
		}
	}
	var out strings.Builder
	rep.Write(&out)
	t.Log(out.String())
}
