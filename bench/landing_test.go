package bench_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/bench"
)

// BenchmarkLandingPlanning measures what the landing-file source costs per
// batch as a landing directory grows: for each size (FLOE_BENCH_LANDING_FILES,
// default 10000,100000) and layout (flat; dated, 1,000 files a directory),
// it commits every file, then plans a batch of 100 new files, and reports
// that batch's planning and recording time, the slowest recording of the 9
// batches of 100 after it (one compacts the log), the checkpoint's source
// state, the heap the source takes when opened over it, and a bare listing
// of the directory. With FLOE_BENCH_DATA set, the landing directories are
// kept there and reused (a million files take minutes to write). Run it
// with -benchtime 1x.
func BenchmarkLandingPlanning(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if env := os.Getenv("FLOE_BENCH_LANDING_FILES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("FLOE_BENCH_LANDING_FILES=%q: %q is not a number of files", env, f)
			}
			sizes = append(sizes, n)
		}
	}
	const batch = 100
	for _, n := range sizes {
		for _, layout := range []bench.LandingLayout{bench.LandingFlat, bench.LandingDated} {
			b.Run(fmt.Sprintf("%s-%d", layout, n), func(b *testing.B) {
				var last bench.LandingPlanning
				for range b.N {
					work, err := os.MkdirTemp("", "floe-bench-landing-")
					if err != nil {
						b.Fatal(err)
					}
					root := work
					if os.Getenv(bench.DataEnv) != "" {
						if root, err = bench.DataRoot(); err != nil {
							b.Fatal(err)
						}
					}
					landing, err := bench.EnsureLanding(root, layout, n)
					if err == nil {
						last, err = bench.PlanLanding(b.Context(), work, landing, layout, n, max(n/10, batch), batch)
					}
					os.RemoveAll(work)
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("%s, %d files committed: a batch of %d new files planned in %v (%s listing), recorded in %v (the slowest of the %d after it: %v); source state %d bytes, %d bytes of heap once opened; a bare listing %v",
						layout, n, batch, last.Plan, last.Mode, last.Record, last.LaterBatches, last.RecordMax, last.StateBytes, last.LogHeap, last.Listing)
				}
				b.ReportMetric(float64(last.Plan.Microseconds())/1e3, "plan-ms")
				b.ReportMetric(float64(last.Record.Microseconds())/1e3, "record-ms")
				b.ReportMetric(float64(last.RecordMax.Microseconds())/1e3, "record-max-ms")
				b.ReportMetric(float64(last.StateBytes)/(1<<20), "state-MiB")
				b.ReportMetric(float64(last.LogHeap)/(1<<20), "heap-MiB")
				b.ReportMetric(float64(last.Listing.Microseconds())/1e3, "list-ms")
			})
		}
	}
}
