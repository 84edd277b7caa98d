package bench_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/fixture"
)

// batches is BenchmarkSmallBatches' set-up, made once per process; TestMain
// removes it.
var batches sharedBatches

type sharedBatches struct {
	once  sync.Once
	dir   string
	src   string
	want  bench.RowsSum
	bin   string
	round int
	err   error
}

func (s *sharedBatches) get(b *testing.B) *sharedBatches {
	b.Helper()
	ds := dataset(b, bench.Events10)
	s.once.Do(func() {
		if s.src, _, s.err = bench.EnsureText(ds, "json", bench.BatchesFiles); s.err != nil {
			return
		}
		if s.want, s.err = bench.FormatsWant(context.Background(), ds, bench.BatchesFiles); s.err != nil {
			return
		}
		if s.dir, s.err = os.MkdirTemp("", "floe-bench-batches-"); s.err != nil {
			return
		}
		s.bin, s.err = fixture.BuildFloe(s.dir)
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s
}

func (s *sharedBatches) close() {
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// BenchmarkSmallBatches streams the 100 files of events10 as JSON lines
// (10M rows, 13.9 MB a file) with floe's binary, available-now, in one batch
// and in batches of at most 22 MB, with the columns declared and inferred;
// every table must hold the input's rows. Each round runs the four ways
// once, in an order rotated from round to round. Run it with -benchtime 1x
// -count N (BATCHES=only bench/run.sh).
func BenchmarkSmallBatches(b *testing.B) {
	s := batches.get(b)
	ctx := context.Background()
	for range b.N {
		order := rotate(bench.BatchesContenders(bench.SmallBatchBytes), s.round)
		s.round++
		for _, c := range order {
			run, err := runBatches(ctx, s.bin, c, s.src, s.want)
			if err != nil {
				b.Fatal(err)
			}
			report.AddBatches(run)
		}
	}
}

// runBatches runs c in a fresh directory and checks the table's rows:
// declared columns hold the input's rows exactly; inferred ones type ts as
// text, so only their count is checked.
func runBatches(ctx context.Context, bin string, c bench.BatchesContender, src string, want bench.RowsSum) (bench.BatchesRun, error) {
	work, err := os.MkdirTemp("", "floe-bench-batches-run-")
	if err != nil {
		return bench.BatchesRun{}, err
	}
	defer os.RemoveAll(work)
	run, err := bench.FloeProcess{Bin: bin}.Batches(ctx, c, src, work)
	if err != nil {
		return run, err
	}
	if run.Rows != want.Rows || (c.Declared && run.Sum != want.Sum) {
		return run, fmt.Errorf("%s: the table holds %d rows of checksum %x, the input %d of %x", c.Name(), run.Rows, run.Sum, want.Rows, want.Sum)
	}
	return run, nil
}

// TestSmallBatches runs the small-batches benchmark's four ways over a tiny
// dataset, one file a small batch: each table must hold the input's rows,
// and the small batches must commit one batch a file.
func TestSmallBatches(t *testing.T) {
	t.Parallel()
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny-batches", Files: 3, RowsPerFile: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := bench.EnsureText(ds, "json", ds.Files)
	if err != nil {
		t.Fatal(err)
	}
	want, err := bench.FormatsWant(t.Context(), ds, ds.Files)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := fixture.BuildFloe(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Each file is under 1 MB: a batch of at most 1 byte still takes one.
	var rep bench.Report
	for _, c := range bench.BatchesContenders(1) {
		run, err := runBatches(t.Context(), bin, c, src, want)
		if err != nil {
			t.Fatal(err)
		}
		wantBatches := 1
		if c.MaxBytes > 0 {
			wantBatches = ds.Files
		}
		if run.Batches != wantBatches {
			t.Errorf("%s committed %d batches, want %d", c.Name(), run.Batches, wantBatches)
		}
		rep.AddBatches(run)
	}
	var out strings.Builder
	rep.Write(&out)
	if !strings.Contains(out.String(), "| inferred | 1-byte batches | 1 | 3 |") {
		t.Errorf("the report has no line for inferred small batches:\n%s", out.String())
	}
	t.Log(out.String())
}
