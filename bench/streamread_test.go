package bench_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/floe-io/floe/bench"
)

// BenchmarkStreamPlanning streams a table of 500 one-file snapshots
// (commit500) into another, 5 files per batch, with synchronous and with
// asynchronous micro-batch planning, alternating, b.N runs of each, and
// reports the planning time per batch of each: the time between two
// batches that async planning is meant to take away. Both must copy every
// row in the same batches. Run it with -benchtime 3x -count 1, so that the
// table is built once (bench/run.sh, PLANNING=only).
func BenchmarkStreamPlanning(b *testing.B) {
	ds := dataset(b, bench.Commit500)
	work, err := os.MkdirTemp("", "floe-bench-planning-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(work)
	warehouse, err := bench.SnapshotTable(b.Context(), ds, work)
	if err != nil {
		b.Fatal(err)
	}
	const filesPerBatch = 5
	var sums [2]bench.Planning
	for i := range b.N {
		for j, async := range []bool{false, true} {
			dir, err := os.MkdirTemp(work, "run-")
			if err != nil {
				b.Fatal(err)
			}
			pl, err := bench.StreamPlanning(b.Context(), warehouse, dir, fmt.Sprintf("bench.copy_%d_%t", i, async), async, filesPerBatch)
			if err != nil {
				b.Fatal(err)
			}
			if pl.Rows != ds.Rows() || pl.Batches != ds.Files/filesPerBatch {
				b.Fatalf("%s run %d: %d rows in %d batches, want %d in %d", pl.Name, i, pl.Rows, pl.Batches, ds.Rows(), ds.Files/filesPerBatch)
			}
			report.AddPlanning(ds.Spec, pl)
			sums[j].Times = append(sums[j].Times, pl.Times...)
		}
	}
	b.ReportMetric(float64(sums[0].Mean().Microseconds())/1e3, "sync-plan-ms")
	b.ReportMetric(float64(sums[1].Mean().Microseconds())/1e3, "async-plan-ms")
}
