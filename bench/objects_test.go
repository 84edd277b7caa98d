package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/s3test"
)

// BenchmarkLandingFromS3 ingests events5 from a local directory and from
// a prefix of a bucket on a local S3 server (versitygw, its objects on the
// same disk), with the column-chunk copy and re-encoding; each iteration
// runs the four in turn, and the medians and the S3-to-local ratios are
// reported. The warehouse is local in every run, so only the landing zone
// differs. Run it with -benchtime 5x.
func BenchmarkLandingFromS3(b *testing.B) {
	ds := dataset(b, bench.Events5)
	srv := s3test.Start(b)
	for _, p := range ds.Paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Put("events5/"+filepath.Base(p), data); err != nil {
			b.Fatal(err)
		}
	}
	type run struct {
		name     string
		landing  string
		reencode bool
	}
	runs := []run{{"local-copy", ds.Dir, false}, {"s3-copy", srv.URL("events5"), false},
		{"local-reencode", ds.Dir, true}, {"s3-reencode", srv.URL("events5"), true}, {"s3-get", srv.URL("events5"), false}}
	wall := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	for range b.N {
		for _, r := range runs {
			work := b.TempDir()
			var (
				res bench.Result
				err error
			)
			if r.name == "s3-get" {
				res, err = bench.GetObjects(b.Context(), r.landing, srv.Properties())
				res.Rows = ds.Rows()
			} else {
				res, err = bench.FloeFrom(b.Context(), r.landing, srv.Properties(), r.reencode, work)
			}
			if err != nil {
				b.Fatal(err)
			}
			if res.Rows != ds.Rows() {
				b.Fatalf("%s: %d rows, want %d", r.name, res.Rows, ds.Rows())
			}
			wall[r.name] = append(wall[r.name], res.Wall)
			cpu[r.name] = append(cpu[r.name], res.CPU)
			if err := os.RemoveAll(work); err != nil {
				b.Fatal(err)
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Sorted(slices.Values(d))
		return s[len(s)/2]
	}
	for _, r := range runs {
		b.ReportMetric(median(wall[r.name]).Seconds(), r.name+"-s")
		b.ReportMetric(median(cpu[r.name]).Seconds(), r.name+"-cpu-s")
	}
	for _, mode := range []string{"copy", "reencode"} {
		ratio := median(wall["s3-"+mode]).Seconds() / median(wall["local-"+mode]).Seconds()
		b.ReportMetric(ratio, "s3/local-"+mode)
		b.Logf("%s: S3 %v, local %v (%.2f×), %d runs each", mode, median(wall["s3-"+mode]), median(wall["local-"+mode]), ratio, b.N)
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLandingPlanningS3 is BenchmarkLandingPlanning on a prefix of a
// local S3 server (versitygw): FLOE_BENCH_S3_OBJECTS objects (default
// 100,000; putting them takes minutes), laid out by date, committed in
// batches of 10,000, then a batch of 100 more planned.
func BenchmarkLandingPlanningS3(b *testing.B) {
	n := 100_000
	if v := os.Getenv("FLOE_BENCH_S3_OBJECTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("FLOE_BENCH_S3_OBJECTS=%q: %v", v, err)
		}
	}
	srv := s3test.Start(b)
	for range b.N {
		prefix := fmt.Sprintf("landing-%d", time.Now().UnixNano())
		r, err := bench.PlanObjectLanding(b.Context(), srv.URL(prefix), srv.Properties(),
			func(key string, body []byte) error { return srv.Put(prefix+"/"+key, body) }, b.TempDir(), bench.LandingDated, n, 10_000, 100)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Plan.Microseconds())/1e3, "plan-ms")
		b.ReportMetric(float64(r.Record.Microseconds())/1e3, "record-ms")
		b.ReportMetric(float64(r.Listing.Microseconds())/1e3, "list-ms")
		b.ReportMetric(float64(r.StateBytes)/(1<<20), "state-MiB")
		b.Logf("S3, dated, %d objects committed: a batch of 100 new objects planned in %v (%s listing), recorded in %v; source state %d bytes; a bare listing %v",
			n, r.Plan, r.Mode, r.Record, r.StateBytes, r.Listing)
	}
	b.ReportMetric(0, "ns/op")
}
