package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/fixture"
)

// formats is BenchmarkFormats' set-up, made once per process so that
// -count N builds floe and reads the inputs' checksum once; TestMain
// removes it.
var formats sharedFormats

type sharedFormats struct {
	once       sync.Once
	dir        string
	inputs     []bench.FormatInput
	contenders []bench.FormatContender
	want       bench.RowsSum
	bin        string
	round      int
	err        error
}

// get makes the inputs (the first time on this machine), builds floe and
// reads the rows every output must hold; none of it is measured.
func (s *sharedFormats) get(b *testing.B) *sharedFormats {
	b.Helper()
	ds := dataset(b, bench.Events5)
	s.once.Do(func() {
		t0 := time.Now()
		duck, duckErr := bench.FindDuckDB(".")
		var skipped []string
		if s.inputs, skipped, s.err = bench.FormatInputs(ds, bench.FormatsFiles, duck, duckErr); s.err != nil {
			return
		}
		for _, n := range skipped {
			report.NoteFormats(n)
		}
		if duck == nil {
			report.NoteFormats("duckdb and duckdb-1-thread skipped: " + duckErr.Error())
		}
		if s.want, s.err = bench.FormatsWant(context.Background(), ds, bench.FormatsFiles); s.err != nil {
			return
		}
		if s.dir, s.err = os.MkdirTemp("", "floe-bench-formats-"); s.err != nil {
			return
		}
		if s.bin, s.err = fixture.BuildFloe(s.dir); s.err != nil {
			return
		}
		s.contenders = bench.FormatContenders(s.bin, duck)
		for _, in := range s.inputs {
			b.Logf("input %s: %d files, %d rows, %.1f MB, %d row groups, at %s", in.Name, len(in.Files), in.Rows, float64(in.Bytes)/1e6, in.RowGroups, in.Dir)
		}
		b.Logf("formats set up in %s", time.Since(t0).Round(time.Millisecond))
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s
}

func (s *sharedFormats) close() {
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// BenchmarkFormats writes the first 20 files of events5 (2M rows) as CSV,
// as JSON lines, as Parquet written by DuckDB and as Parquet written by
// pyarrow (one row group of 100,000 rows a file, too small to copy) into
// zstd level 1 Parquet with floe's binary, DuckDB's COPY on one thread and
// on its default threads, and iceberg-go's single Append; each output is
// read back and must hold the input's rows (count and checksum over every
// column). Each round runs every contender once per input, in an order
// rotated from round to round, then floe over an empty directory for its
// start-up. Run it with -benchtime 1x -count N (FORMATS=only bench/run.sh)
// and read the medians in the tables printed at the end.
func BenchmarkFormats(b *testing.B) {
	s := formats.get(b)
	ctx := context.Background()
	for range b.N {
		order := rotate(s.contenders, s.round)
		s.round++
		for _, in := range s.inputs {
			for _, c := range order {
				work, err := os.MkdirTemp("", "floe-bench-formats-run-")
				if err != nil {
					b.Fatal(err)
				}
				r, err := bench.RunFormat(bench.WithContender(ctx, c.Name), c, in, work, s.want)
				os.RemoveAll(work)
				if err != nil {
					b.Fatal(err)
				}
				report.AddFormat(r)
			}
		}
		empty := filepath.Join(b.TempDir(), "empty")
		if err := os.Mkdir(empty, 0o755); err != nil {
			b.Fatal(err)
		}
		c, err := bench.FloeProcess{Bin: s.bin}.Ingest(ctx, "parquet", empty, b.TempDir(), true)
		if err != nil {
			b.Fatalf("floe over an empty directory: %v", err)
		}
		report.AddFormatStartup(c)
	}
}

// rotate is cs starting at its element n mod len(cs).
func rotate[T any](cs []T, n int) []T {
	k := n % len(cs)
	return append(slices.Clone(cs[k:]), cs[:k]...)
}

// TestFormats runs the formats benchmark's contenders over every input made
// from a tiny dataset (DuckDB's and pyarrow's only where they are
// installed): each output must hold the input's rows, and a contender that
// loses a row must fail.
func TestFormats(t *testing.T) {
	t.Parallel()
	ds, err := bench.Ensure(t.TempDir(), bench.Spec{Name: "tiny-formats", Files: 3, RowsPerFile: 2000, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	duck, duckErr := bench.FindDuckDB(".")
	inputs, skipped, err := bench.FormatInputs(ds, ds.Files, duck, duckErr)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range skipped {
		t.Log(n)
	}
	want, err := bench.FormatsWant(t.Context(), ds, ds.Files)
	if err != nil {
		t.Fatal(err)
	}
	if want.Rows != ds.Rows() {
		t.Fatalf("the dataset reads as %d rows, want %d", want.Rows, ds.Rows())
	}
	bin, err := fixture.BuildFloe(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	for _, in := range inputs {
		if in.Rows != ds.Rows() {
			t.Errorf("input %s has %d rows, want %d", in.Name, in.Rows, ds.Rows())
		}
		if in.Format == "parquet" && in.RowGroups != ds.Files {
			t.Errorf("input %s has %d row groups, want one a file (%d)", in.Name, in.RowGroups, ds.Files)
		}
		for _, c := range bench.FormatContenders(bin, duck) {
			r, err := bench.RunFormat(t.Context(), c, in, t.TempDir(), want)
			if err != nil {
				t.Fatal(err)
			}
			if r.Files == 0 || r.Bytes == 0 || r.CPU <= 0 {
				t.Errorf("%s over %s: %+v", c.Name, in.Name, r)
			}
			rep.AddFormat(r)
		}
	}
	// A contender whose output misses the last input file's rows.
	lossy := bench.FormatContender{Name: "lossy", Run: func(ctx context.Context, in bench.FormatInput, work string) (bench.FormatRun, error) {
		return bench.FormatRun{Outputs: ds.Paths[:len(ds.Paths)-1]}, nil
	}}
	if _, err := bench.RunFormat(t.Context(), lossy, inputs[0], t.TempDir(), want); err == nil || !strings.Contains(err.Error(), "4000 rows") {
		t.Errorf("a contender that lost rows: %v, want an error naming the rows it holds", err)
	}
	var out strings.Builder
	rep.Write(&out)
	if !strings.Contains(out.String(), "| csv | floe |") {
		t.Errorf("the report has no floe line for csv:\n%s", out.String())
	}
	t.Log(out.String())
}
