package bench_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/bench"
)

// BenchmarkStreamPlanning streams a table of 500 one-file snapshots
// (commit500) into another, 5 files per batch, with synchronous and with
// asynchronous micro-batch planning, alternating, and prints the planning
// time per batch of each: the time between two batches that async
// planning is meant to take away. Both runs must copy every row in the
// same batches.
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
	runs := map[bool][]bench.Planning{}
	for i := range b.N {
		for _, async := range []bool{false, true} {
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
			runs[async] = append(runs[async], pl)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nStreaming read of %d snapshots, %d files per batch (%d batches), %d run(s) each:\n\n", ds.Files, filesPerBatch, ds.Files/filesPerBatch, b.N)
	fmt.Fprintln(&out, "| planning | mean planning ms per batch | median ms | run wall s (median) |")
	fmt.Fprintln(&out, "| --- | ---: | ---: | ---: |")
	means := map[bool]float64{}
	for _, async := range []bool{false, true} {
		var walls []float64
		var merged bench.Planning
		for _, pl := range runs[async] {
			merged.Times = append(merged.Times, pl.Times...)
			walls = append(walls, pl.Wall.Seconds())
		}
		means[async] = float64(merged.Mean().Microseconds()) / 1e3
		fmt.Fprintf(&out, "| %s | %.2f | %.0f | %.2f |\n", runs[async][0].Name, means[async], float64(merged.Median().Milliseconds()), median(walls))
	}
	if means[true] > 0 {
		fmt.Fprintf(&out, "\nsynchronous / asynchronous planning time: %.1f×\n", means[false]/means[true])
	}
	b.Log(out.String())
	b.ReportMetric(means[false], "sync-plan-ms")
	b.ReportMetric(means[true], "async-plan-ms")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
