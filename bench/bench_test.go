package bench_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
)

// report collects every benchmark run of the process; TestMain prints it
// once all have finished, so that -count N yields one table of medians.
var report bench.Report

func TestMain(m *testing.M) {
	code := m.Run()
	scanTable.close()
	kafkaTopic.close()
	compactionTable.close()
	formats.close()
	batches.close()
	report.Write(os.Stdout)
	os.Exit(code)
}

// dataset generates (first time only) or reuses a dataset under the data
// root; this is the only place the big inputs are made, so plain go test
// never makes them.
func dataset(b *testing.B, s bench.Spec) bench.Dataset {
	b.Helper()
	root, err := bench.DataRoot()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	ds, err := bench.Ensure(root, s)
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Since(t0); d > time.Second {
		b.Logf("dataset %s ready in %s at %s", s.Name, d.Round(time.Millisecond), ds.Dir)
	}
	return ds
}

// BenchmarkIngest measures every contender on events5. Each iteration is
// a full run; run it with -benchtime 1x and -count 3 (bench/run.sh) and read
// the medians in the table printed at the end.
func BenchmarkIngest(b *testing.B) {
	ds := dataset(b, bench.Events5)
	for _, c := range bench.Contenders {
		b.Run(c.Name, func(b *testing.B) {
			benchIngest(b, ds, c, func(r bench.Result) error {
				if r.Rows != ds.Rows() {
					return fmt.Errorf("%s: output holds %d rows, want %d", c.Name, r.Rows, ds.Rows())
				}
				return nil
			}, report.AddIngest)
		})
	}
}

// BenchmarkIngestPartitioned measures floe and iceberg-go writing events5
// into a table partitioned by bench.PartitionFields (day(ts), category:
// 100 partitions), each with its fanout writer. Run it as BenchmarkIngest.
func BenchmarkIngestPartitioned(b *testing.B) {
	ds := dataset(b, bench.Events5)
	for _, c := range bench.PartitionedContenders {
		b.Run(c.Name, func(b *testing.B) {
			benchIngest(b, ds, c, func(r bench.Result) error {
				return checkPartitioned(ds, r)
			}, report.AddPartitioned)
		})
	}
}

// benchIngest runs c b.N times, checks each result and hands it to add.
func benchIngest(b *testing.B, ds bench.Dataset, c bench.Contender, check func(bench.Result) error, add func(bench.Spec, bench.Result)) {
	var sum bench.Result
	for range b.N {
		work := b.TempDir()
		r, err := c.Run(b.Context(), ds, work)
		if err != nil {
			b.Fatal(err)
		}
		if err := check(r); err != nil {
			b.Fatal(err)
		}
		add(ds.Spec, r)
		sum.Rows += r.Rows
		sum.Bytes += r.Bytes
		sum.Files += r.Files
		sum.Wall += r.Wall
		sum.CPU += r.CPU
		// The outputs are hundreds of MB; do not keep one per iteration.
		if err := os.RemoveAll(work); err != nil {
			b.Fatal(err)
		}
	}
	// ns/op is replaced by the measured run alone, without the set-up and
	// verification around it.
	b.ReportMetric(float64(sum.Wall.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(sum.CPU.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(sum.RowsPerSec(), "rows/s")
	b.ReportMetric(sum.RowsPerCPUSec(), "rows/cpu-s")
	b.ReportMetric(float64(sum.Bytes)/1e6/float64(b.N), "MB/op")
	b.ReportMetric(float64(sum.Files)/float64(b.N), "files/op")
}

// checkPartitioned checks that a partitioned run wrote every row into a
// partitioned table holding every partition, at least one file each.
func checkPartitioned(ds bench.Dataset, r bench.Result) error {
	if r.Rows != ds.Rows() || r.Partitions != bench.Partitions || r.Files < r.Partitions || r.Bytes == 0 {
		return fmt.Errorf("%s partitioned: %d rows, %d partitions, %d files, %d bytes; want %d rows in %d partitions, one file or more each",
			r.Contender, r.Rows, r.Partitions, r.Files, r.Bytes, ds.Rows(), bench.Partitions)
	}
	return nil
}

// BenchmarkCommitLatency commits commit500 one file per snapshot, with floe
// and with iceberg-go, and reports the median latency of the first and the
// last 50 commits.
func BenchmarkCommitLatency(b *testing.B) {
	ds := dataset(b, bench.Commit500)
	record := func(b *testing.B, l bench.Latency) {
		if l.Rows != ds.Rows() || l.Snapshots != ds.Files || len(l.Times) != ds.Files {
			b.Fatalf("%s: %d rows, %d snapshots, %d timings; want %d, %d, %d", l.Name, l.Rows, l.Snapshots, len(l.Times), ds.Rows(), ds.Files, ds.Files)
		}
		report.AddLatency(ds.Spec, l)
		b.ReportMetric(float64(l.Median(0, 50))/1e6, "p50-first50-ms")
		b.ReportMetric(float64(l.Median(ds.Files-50, ds.Files))/1e6, "p50-last50-ms")
	}
	b.Run("floe", func(b *testing.B) {
		for range b.N {
			series, err := bench.FloeLatency(b.Context(), ds, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			// The metrics are the commit phase's; the other phases go
			// to the table only.
			record(b, series[0])
			for _, l := range series[1:] {
				report.AddLatency(ds.Spec, l)
			}
		}
	})
	b.Run("iceberg-go", func(b *testing.B) {
		for range b.N {
			l, err := bench.IcebergGoLatency(b.Context(), ds, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			record(b, l)
		}
	})
}

// scanTable is BenchmarkScan's table, made once per process so that
// -count N ingests once; TestMain removes it.
var scanTable sharedScan

type sharedScan struct {
	once sync.Once
	dir  string
	fx   *bench.ScanFixture
	err  error
}

// get ingests events5 into the scan table the first time; the set-up is
// not measured.
func (s *sharedScan) get(b *testing.B) *bench.ScanFixture {
	b.Helper()
	ds := dataset(b, bench.Events5)
	s.once.Do(func() {
		t0 := time.Now()
		if s.dir, s.err = os.MkdirTemp("", "floe-bench-scan-"); s.err != nil {
			return
		}
		s.fx, s.err = bench.NewScanFixture(b.Context(), ds, s.dir)
		if s.err == nil {
			b.Logf("scan table ready in %s: %d data files", time.Since(t0).Round(time.Millisecond), len(s.fx.DataFiles))
		}
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.fx
}

func (s *sharedScan) close() {
	if s.fx != nil {
		s.fx.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// BenchmarkScan answers each query of bench.ScanQueries over events5,
// ingested once by floe into a table partitioned by bench.PartitionFields,
// with floe's ScanTable, iceberg-go's scanner and DuckDB (skipped, with the
// reason, when node or @duckdb/node-api is missing). Every answer is
// checked against the brute-force one. Run it as BenchmarkIngest.
func BenchmarkScan(b *testing.B) {
	fx := scanTable.get(b)
	duck, duckErr := bench.FindDuckDB(".")
	contenders := append([]bench.ScanContender(nil), bench.ScanContenders...)
	if duckErr != nil {
		// -v alone would show the skip; the note puts it under the table.
		report.NoteScan(fmt.Sprintf("duckdb skipped: %v", duckErr))
	} else {
		contenders = append(contenders, bench.ScanContender{Name: "duckdb", Run: duck.Scan})
	}
	for _, q := range fx.Queries {
		// One sub-benchmark per query whose every iteration runs each
		// contender once: a scan takes milliseconds, and a
		// machine shared with other work has slow phases that would
		// otherwise fall on one contender's runs.
		b.Run(q.Name, func(b *testing.B) {
			wall := map[string]time.Duration{}
			cpu := map[string]time.Duration{}
			// A new order each iteration: in a fixed cycle one contender
			// would always run right after DuckDB's process exits.
			rng := rand.New(rand.NewPCG(1, 2))
			for range b.N {
				for _, k := range rng.Perm(len(contenders)) {
					c := contenders[k]
					// Each run starts from a collected heap, as in a
					// process of its own: no contender pays for another's
					// garbage.
					runtime.GC()
					r, err := c.Run(b.Context(), fx, q)
					if err != nil {
						b.Fatal(err)
					}
					if err := r.Check(fx.Want[q.Name]); err != nil {
						b.Fatalf("%s %s: %v", c.Name, q.Name, err)
					}
					report.AddScan(fx.Dataset.Spec, q, r)
					wall[c.Name] += r.Wall
					cpu[c.Name] += r.CPU
				}
			}
			var total time.Duration
			for _, c := range contenders {
				total += wall[c.Name]
				b.ReportMetric(float64(wall[c.Name].Microseconds())/1e3/float64(b.N), c.Name+"-ms")
				b.ReportMetric(float64(cpu[c.Name].Microseconds())/1e3/float64(b.N), c.Name+"-cpu-ms")
			}
			// ns/op is the measured runs alone, as in benchIngest.
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}

// TestScan runs every scan contender on a tiny dataset and checks each
// answer against the brute-force one; DuckDB only where it is installed.
func TestScan(t *testing.T) {
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny-scan", Files: 3, RowsPerFile: 2000, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := bench.NewScanFixture(t.Context(), ds, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	if len(fx.DataFiles) != bench.Partitions {
		t.Errorf("scan table has %d data files, want one per partition (%d)", len(fx.DataFiles), bench.Partitions)
	}
	contenders := bench.ScanContenders
	if duck, err := bench.FindDuckDB("."); err == nil {
		contenders = append(contenders[:len(contenders):len(contenders)], bench.ScanContender{Name: "duckdb", Run: duck.Scan})
	} else {
		t.Log(err)
	}
	for _, q := range fx.Queries {
		for _, c := range contenders {
			r, err := c.Run(t.Context(), fx, q)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Check(fx.Want[q.Name]); err != nil {
				t.Errorf("%s %s: %v", c.Name, q.Name, err)
			}
			wantFiles := len(fx.DataFiles)
			if q.Filter != "" && c.Name != "duckdb" {
				wantFiles = 1 // one day, one category: one partition
			}
			if r.Files != wantFiles {
				t.Errorf("%s %s: %d files planned, want %d", c.Name, q.Name, r.Files, wantFiles)
			}
		}
	}
}

// TestContenders runs every contender on a tiny dataset and checks that
// each writes every row: the benchmarks' code paths, in a second.
func TestContenders(t *testing.T) {
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny", Files: 3, RowsPerFile: 2000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bench.Contenders {
		r, err := c.Run(t.Context(), ds, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if r.Rows != ds.Rows() || r.Files == 0 || r.Bytes == 0 || r.Wall <= 0 {
			t.Errorf("%s: %+v; want %d rows in some files", c.Name, r, ds.Rows())
		}
	}
	for _, c := range bench.PartitionedContenders {
		t.Run("partitioned/"+c.Name, func(t *testing.T) {
			r, err := c.Run(t.Context(), ds, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := checkPartitioned(ds, r); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestLatency checks that both latency runs make one snapshot per file.
func TestLatency(t *testing.T) {
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny-commits", Files: 4, RowsPerFile: 100, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	series, err := bench.FloeLatency(t.Context(), ds, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ig, err := bench.IcebergGoLatency(t.Context(), ds, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(series, ig) {
		if len(l.Times) != ds.Files || l.Snapshots != ds.Files || l.Rows != ds.Rows() {
			t.Errorf("%s: %d timings, %d snapshots, %d rows; want %d, %d, %d", l.Name, len(l.Times), l.Snapshots, l.Rows, ds.Files, ds.Files, ds.Rows())
		}
	}
}

// TestEnsureReuses checks that a complete dataset is not generated again.
func TestEnsureReuses(t *testing.T) {
	root := t.TempDir()
	spec := bench.Spec{Name: "reuse", Files: 2, RowsPerFile: 10, Seed: 3}
	first, err := bench.Ensure(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	st0, err := os.Stat(first.Paths[0])
	if err != nil {
		t.Fatal(err)
	}
	second, err := bench.Ensure(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(second.Paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !st0.ModTime().Equal(st1.ModTime()) || first.Bytes != second.Bytes {
		t.Error("dataset was generated again")
	}
}
