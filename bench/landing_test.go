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
// that batch's planning and recording time, the checkpoint's source state
// and a bare listing of the directory. Run it with -benchtime 1x.
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
					last, err = bench.PlanLanding(b.Context(), work, layout, n, max(n/10, batch), batch)
					os.RemoveAll(work)
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("%s, %d files committed: a batch of %d new files planned in %v, recorded in %v; source state %d bytes; a bare listing %v",
						layout, n, batch, last.Plan, last.Record, last.StateBytes, last.Listing)
				}
				b.ReportMetric(float64(last.Plan.Microseconds())/1e3, "plan-ms")
				b.ReportMetric(float64(last.Record.Microseconds())/1e3, "record-ms")
				b.ReportMetric(float64(last.StateBytes)/(1<<20), "state-MiB")
				b.ReportMetric(float64(last.Listing.Microseconds())/1e3, "list-ms")
			})
		}
	}
}
