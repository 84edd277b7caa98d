package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/fixture"
)

// BenchmarkSparkIngest runs floe's binary and Spark Structured Streaming
// (availableNow, Iceberg's Spark runtime, local[2]) side by side on the same
// inputs: events5 as Parquet (floe copying column chunks, and re-encoding
// every value), and its first FLOE_BENCH_TEXT_FILES files (default 10) as
// CSV and as JSON lines. Contenders alternate in each round, each a process
// measured whole; the first round's tables are read back by Spark, which
// must find the same rows (count and hash sum) in floe's table and its own.
// Start-up is a run over an empty directory. Run with -benchtime 1x
// -count N (SPARK=only bench/run.sh).
func BenchmarkSparkIngest(b *testing.B) {
	spark, err := bench.NewSparkEngine()
	if err != nil {
		b.Skip(err)
	}
	ds := dataset(b, bench.Events5)
	files := 10
	if v := os.Getenv("FLOE_BENCH_TEXT_FILES"); v != "" {
		fmt.Sscan(v, &files)
	}
	type input struct {
		name, format, dir string
		rows              int64
		copyChunks        bool
	}
	inputs := []input{
		{"parquet", "parquet", ds.Dir, ds.Rows(), true},
		{"parquet re-encoded", "parquet", ds.Dir, ds.Rows(), false},
	}
	for _, f := range []string{"csv", "json"} {
		dir, rows, err := bench.EnsureText(ds, f, files)
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, input{f, f, dir, rows, true})
	}
	bin, err := fixture.BuildFloe(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	floe := bench.FloeProcess{Bin: bin}
	empty := b.TempDir()
	ctx := context.Background()
	round := sparkRounds
	sparkRounds++
	for range b.N {
		for _, in := range inputs {
			work := b.TempDir()
			run := func(name string) {
				dir := filepath.Join(work, name)
				var c bench.ProcCost
				var err error
				if name == "spark" {
					c, err = spark.Ingest(ctx, in.format, in.dir, dir)
				} else {
					c, err = floe.Ingest(ctx, in.format, in.dir, dir, in.copyChunks)
				}
				if err != nil {
					b.Fatalf("%s over %s: %v", name, in.name, err)
				}
				report.AddEngine(bench.EngineRun{Contender: name, Input: in.name, Rows: in.rows, ProcCost: c})
			}
			// Spark does the same work for both Parquet inputs: it runs once.
			names := []string{"floe", "spark"}
			if !in.copyChunks {
				names = []string{"floe"}
			}
			if round%2 == 1 {
				sort.Sort(sort.Reverse(sort.StringSlice(names)))
			}
			for _, n := range names {
				run(n)
			}
			if round == 0 {
				verifyEngines(b, spark, work, names, in.rows)
			}
			os.RemoveAll(work)
		}
		// Start-up: the same job over an empty directory.
		for _, n := range []string{"floe", "spark"} {
			work := b.TempDir()
			var c bench.ProcCost
			var err error
			if n == "spark" {
				c, err = spark.Ingest(ctx, "parquet", empty, work)
			} else {
				c, err = floe.Ingest(ctx, "parquet", empty, work, true)
			}
			if err != nil {
				b.Fatalf("%s over an empty directory: %v", n, err)
			}
			report.AddEngine(bench.EngineRun{Contender: n, Input: "start-up (empty input)", ProcCost: c})
		}
	}
}

// sparkRounds alternates the order of the contenders between -count rounds.
var sparkRounds int

// verifyEngines has Spark read every contender's table of a round: the
// same rows, as multisets, and the input's count.
func verifyEngines(b *testing.B, spark *bench.SparkEngine, work string, names []string, rows int64) {
	b.Helper()
	var first *bench.TableSum
	for _, n := range names {
		t0 := time.Now()
		got, err := spark.Verify(context.Background(), filepath.Join(work, n, "warehouse"), "db.events")
		if err != nil {
			b.Fatal(err)
		}
		s := got["db.events"]
		if s.Rows != rows {
			b.Fatalf("%s's table holds %d rows as Spark reads it, want %d", n, s.Rows, rows)
		}
		if first != nil && s != *first {
			b.Fatalf("%s's table differs from %s's as Spark reads them: %+v, %+v", n, names[0], s, *first)
		}
		first = &s
		b.Logf("%s: %d rows, hash sum %d, read by Spark in %s", n, s.Rows, s.Hash, time.Since(t0).Round(time.Millisecond))
	}
	if len(names) > 1 {
		b.Logf("%s: the same rows", strings.Join(names, " and "))
	}
}

// BenchmarkSparkUpsert is the keyed-upsert comparison: the upsert dataset's
// base (10M rows by default, FLOE_BENCH_UPSERT_* shrink it) loaded into a
// format-v2 table (measured apart), then its change files, one per
// micro-batch: Spark with foreachBatch and MERGE INTO (merge-on-read), as
// the reference article does, against floe's upsert mode. Spark reads both
// tables after: the same rows.
func BenchmarkSparkUpsert(b *testing.B) {
	spark, err := bench.NewSparkEngine()
	if err != nil {
		b.Skip(err)
	}
	spec, err := bench.UpsertSpecFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	root, err := bench.DataRoot()
	if err != nil {
		b.Fatal(err)
	}
	ds, err := bench.EnsureUpsert(root, spec)
	if err != nil {
		b.Fatal(err)
	}
	bin, err := fixture.BuildFloe(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	floe := bench.FloeProcess{Bin: bin}
	ctx := context.Background()
	changes := int64(spec.Batches * spec.Changes)
	for range b.N {
		work := b.TempDir()
		names := []string{"floe", "spark"}
		if sparkUpsertRounds%2 == 1 {
			names = []string{"spark", "floe"}
		}
		sparkUpsertRounds++
		for _, n := range names {
			dir := filepath.Join(work, n)
			var load, merge bench.ProcCost
			var err error
			if n == "spark" {
				if load, err = spark.UpsertLoad(ctx, ds.BaseDir, dir); err == nil {
					merge, err = spark.UpsertMerge(ctx, ds.ChangesDir, dir)
				}
			} else {
				if load, err = floe.UpsertLoad(ctx, ds.BaseDir, dir); err == nil {
					merge, err = floe.UpsertMerge(ctx, ds.ChangesDir, dir)
				}
			}
			if err != nil {
				b.Fatalf("%s: %v", n, err)
			}
			report.AddEngine(bench.EngineRun{Contender: n, Input: fmt.Sprintf("upsert: load %d base rows", spec.Rows), Rows: spec.Rows, ProcCost: load})
			report.AddEngine(bench.EngineRun{Contender: n, Input: fmt.Sprintf("upsert: %d batches of %d changes", spec.Batches, spec.Changes), Rows: changes, ProcCost: merge})
		}
		var sums []bench.TableSum
		for _, n := range names {
			got, err := spark.Verify(ctx, filepath.Join(work, n, "warehouse"), "db.t")
			if err != nil {
				b.Fatal(err)
			}
			sums = append(sums, got["db.t"])
		}
		if sums[0] != sums[1] {
			b.Fatalf("%s's and %s's tables differ as Spark reads them: %+v, %+v", names[0], names[1], sums[0], sums[1])
		}
		b.Logf("both tables: %d rows, hash sum %d, as Spark reads them", sums[0].Rows, sums[0].Hash)
		os.RemoveAll(work)
	}
}

var sparkUpsertRounds int
