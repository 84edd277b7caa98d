package bench_test

import (
	"os"
	"path/filepath"
	"slices"
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
