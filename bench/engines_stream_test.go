package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/fixture"
)

// BenchmarkSparkStream is the reference article's processing-time stream
// side by side: commit2000 (2,000 files of 100 rows), one file a batch,
// by floe with its default maintenance and by Spark Structured Streaming
// with Iceberg's maintenance procedures run beside it on the same cadence.
// It prints, per contender, the process's cost, the median batch and
// commit time early (batches 11–20) and late (the last 10), and what the
// table holds at the end; Spark reads both tables: the same rows.
// FLOE_BENCH_STREAM_BATCHES streams fewer files. Run with -benchtime 1x.
func BenchmarkSparkStream(b *testing.B) {
	spark, err := bench.NewSparkEngine()
	if err != nil {
		b.Skip(err)
	}
	ds := dataset(b, bench.Commit2000)
	batches := ds.Files
	if v := os.Getenv("FLOE_BENCH_STREAM_BATCHES"); v != "" {
		fmt.Sscan(v, &batches)
	}
	bin, err := fixture.BuildFloe(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	floe := bench.FloeProcess{Bin: bin}
	ctx := context.Background()
	var runs []bench.StreamRun
	for i := range b.N {
		work := b.TempDir()
		names := []string{"floe", "spark"}
		if i%2 == 1 {
			names = []string{"spark", "floe"}
		}
		for _, n := range names {
			dir := filepath.Join(work, n)
			var r bench.StreamRun
			var err error
			if n == "spark" {
				r, err = spark.Stream(ctx, ds.Dir, dir, batches)
			} else {
				r, err = floe.Stream(ctx, ds.Dir, dir, batches)
			}
			if err == nil {
				err = r.ReadShape(ctx, dir)
			}
			if err != nil {
				b.Fatalf("%s: %v", n, err)
			}
			runs = append(runs, r)
		}
		if batches == ds.Files {
			verifyEngines(b, spark, work, names, ds.Rows())
		}
	}
	fmt.Printf("\n### A processing-time stream of %d one-file batches (%d rows each) with maintenance\n\n", batches, ds.RowsPerFile)
	fmt.Println("| contender | wall s | CPU s | peak RSS MiB | p50 batch ms, 11–20 | p50 batch ms, last 10 | ratio | p50 commit ms, 11–20 | p50 commit ms, last 10 | ratio | maintenance calls (s) beside the stream | snapshots at the end | data files at the end |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	ratio := func(l bench.Latency) string {
		early, late := l.Median(10, 20), l.Median(batches-10, batches)
		if early <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", float64(late)/float64(early))
	}
	for _, r := range runs {
		maint := "–"
		if r.MaintenanceCalls > 0 {
			maint = fmt.Sprintf("%d (%.1f)", r.MaintenanceCalls, r.Maintenance.Seconds())
		}
		fmt.Printf("| %s | %.1f | %.1f | %.0f | %.0f | %.0f | %s | %.0f | %.0f | %s | %s | %d | %d |\n", r.Contender,
			r.Wall.Seconds(), r.CPU.Seconds(), float64(r.PeakRSS)/(1<<20),
			ms(r.Batch.Median(10, 20)), ms(r.Batch.Median(batches-10, batches)), ratio(r.Batch),
			ms(r.Commit.Median(10, 20)), ms(r.Commit.Median(batches-10, batches)), ratio(r.Commit),
			maint, r.Snapshots, r.Files)
	}
}
