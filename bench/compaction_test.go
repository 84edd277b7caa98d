package bench_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
)

// compactionTable is BenchmarkCompaction's table, built once per process
// so that -count N ingests once; TestMain removes it.
var compactionTable sharedCompaction

type sharedCompaction struct {
	once sync.Once
	dir  string
	fx   *bench.CompactionFixture
	err  error
}

// get ingests commit500 one file per snapshot the first time; the set-up
// is not measured.
func (s *sharedCompaction) get(b *testing.B) *bench.CompactionFixture {
	b.Helper()
	ds := dataset(b, bench.Commit500)
	s.once.Do(func() {
		t0 := time.Now()
		if s.dir, s.err = os.MkdirTemp("", "floe-bench-compaction-"); s.err != nil {
			return
		}
		s.fx, s.err = bench.NewCompactionFixture(b.Context(), ds, s.dir)
		if s.err == nil {
			b.Logf("compaction table ready in %s: %d data files, %d bytes", time.Since(t0).Round(time.Millisecond), len(s.fx.Files), s.fx.Bytes)
		}
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.fx
}

func (s *sharedCompaction) close() {
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// BenchmarkCompaction compacts a table of commit500 with one snapshot per
// file (500 small data files, built once per process) with each contender
// in turn: floe's maintenance.RewriteDataFiles, and the same files read
// and rewritten with bare parquet-go and with bare arrow-go, with floe's
// writer settings. The warehouse is restored before every run, so each
// compacts the same files, and every output must hold the input's rows
// (count and checksum). Run it with -benchtime 1x -count 3: each count is
// one run of every contender, so the contenders alternate (bench/run.sh,
// COMPACTION=only). The measured part of each run carries the pprof label
// contender=<name>, so that a CPU profile can be narrowed to one contender
// with go tool pprof -tagfocus contender=floe.
func BenchmarkCompaction(b *testing.B) {
	fx := compactionTable.get(b)
	wall := map[string]time.Duration{}
	for range b.N {
		for _, c := range bench.CompactionContenders {
			r, err := compactOnce(b.Context(), fx, c, compactionTable.dir)
			if err != nil {
				b.Fatal(err)
			}
			report.AddCompaction(fx, r)
			wall[c.Name] += r.Wall
		}
	}
	var total time.Duration
	for _, c := range bench.CompactionContenders {
		total += wall[c.Name]
		b.ReportMetric(float64(fx.Bytes)/1e6*float64(b.N)/wall[c.Name].Seconds(), c.Name+"-MB/s")
	}
	// ns/op is the measured runs alone, without restores and checks.
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
}

// compactOnce restores the fixture, runs c on it and checks the output.
func compactOnce(ctx context.Context, fx *bench.CompactionFixture, c bench.CompactionContender, work string) (r bench.CompactionResult, err error) {
	if err := fx.Restore(c.MergedManifests); err != nil {
		return r, err
	}
	out, err := os.MkdirTemp(work, "out-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(out)
	r, err = c.Run(bench.WithContender(ctx, c.Name), fx, out)
	r.Contender = c.Name
	if err != nil {
		return r, err
	}
	return r, fx.Check(ctx, r)
}

// TestCompaction runs every compaction contender on a tiny table and
// checks its output.
func TestCompaction(t *testing.T) {
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny-compaction", Files: 6, RowsPerFile: 300, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	fx, err := bench.NewCompactionFixture(t.Context(), ds, work)
	if err != nil {
		t.Fatal(err)
	}
	if fx.Manifests != ds.Files || fx.MergedManifests != 1 {
		t.Errorf("%d manifests, %d merged; want %d and 1", fx.Manifests, fx.MergedManifests, ds.Files)
	}
	for _, c := range bench.CompactionContenders {
		for range 2 { // the second run starts from the restored table
			r, err := compactOnce(t.Context(), fx, c, work)
			if err != nil {
				t.Fatal(err)
			}
			if r.OutputFiles != 1 || r.OutputBytes == 0 || r.Wall <= 0 {
				t.Errorf("%s: %d output files of %d bytes in %s; want 1", c.Name, r.OutputFiles, r.OutputBytes, r.Wall)
			}
		}
	}
}
