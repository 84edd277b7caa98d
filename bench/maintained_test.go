package bench_test

import (
	"fmt"
	"testing"

	"github.com/floe-io/floe/bench"
)

// BenchmarkMaintainedCommits streams commit2000 one file per batch, with
// the default maintenance policy and without maintenance, and prints the
// commit-phase p50 at batches 11–20 and 1,991–2,000 and the most snapshots
// the table held. The target: with the policy, the late p50 is at most
// 1.25× the early one and the snapshot count stays under its bound. Run
// it with -benchtime 1x -count 1 (bench/run.sh, MAINTAINED=only).
func BenchmarkMaintainedCommits(b *testing.B) {
	ds := dataset(b, bench.Commit2000)
	var out []bench.Maintained
	for range b.N {
		for _, maintain := range []bool{true, false} {
			m, err := bench.MaintainedLatency(b.Context(), ds, b.TempDir(), maintain)
			if err != nil {
				b.Fatal(err)
			}
			if m.Rows != ds.Rows() || len(m.Times) != ds.Files {
				b.Fatalf("%s: %d rows in %d batches, want %d in %d", m.Name, m.Rows, len(m.Times), ds.Rows(), ds.Files)
			}
			out = append(out, m)
		}
	}
	fmt.Printf("\n### Commit latency over %d batches of %d rows\n\n", ds.Files, ds.RowsPerFile)
	fmt.Println("| run | p50 commit ms, batches 11–20 | p50 commit ms, batches 1,991–2,000 | ratio | peak snapshots | snapshots at the end | wall s |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, m := range out {
		early, late := m.Median(10, 20), m.Median(ds.Files-10, ds.Files)
		ratio := "–"
		if early > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(late)/float64(early))
		}
		fmt.Printf("| %s | %.0f | %.0f | %s | %d | %d | %.1f |\n", m.Name, float64(early.Milliseconds()), float64(late.Milliseconds()), ratio, m.PeakSnapshots, m.Snapshots, m.Wall.Seconds())
	}
}
