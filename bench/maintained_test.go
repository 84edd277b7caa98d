package bench_test

import (
	"fmt"
	"testing"
	"time"

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
			if m.Rows != ds.Rows() || len(m.Times) != ds.Files || len(m.TableCommit.Times) != ds.Files {
				b.Fatalf("%s: %d rows in %d batches, want %d in %d", m.Name, m.Rows, len(m.Times), ds.Rows(), ds.Files)
			}
			out = append(out, m)
		}
	}
	fmt.Printf("\n### Commit latency over %d batches of %d rows\n\n", ds.Files, ds.RowsPerFile)
	fmt.Println("| run | p50 commit ms, batches 11–20 | p50 commit ms, batches 1,991–2,000 | ratio | p50 table commit ms, 11–20 | p50 table commit ms, 1,991–2,000 | ratio | peak snapshots | snapshots at the end | wall s |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	ratio := func(early, late time.Duration) string {
		if early <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", float64(late)/float64(early))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, m := range out {
		early, late := m.Median(10, 20), m.Median(ds.Files-10, ds.Files)
		tEarly, tLate := m.TableCommit.Median(10, 20), m.TableCommit.Median(ds.Files-10, ds.Files)
		fmt.Printf("| %s | %.1f | %.1f | %s | %.2f | %.2f | %s | %d | %d | %.1f |\n", m.Name, ms(early), ms(late), ratio(early, late),
			ms(tEarly), ms(tLate), ratio(tEarly, tLate), m.PeakSnapshots, m.Snapshots, m.Wall.Seconds())
	}
}
