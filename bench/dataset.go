// Package bench measures floe's ingest path against iceberg-go's own
// Append and against a bare arrow-go Parquet encode, on the same generated
// input, floe's read path against iceberg-go's scanner and DuckDB, and
// floe's compaction against bare Parquet readers and writers rewriting the
// same files, and floe's mode upsert against iceberg-go's merge-on-read
// Delete and Append applying the same changes, so that floe's overhead
// (and its gains) are numbers rather than claims. See docs/benchmarks.md for how to run it and the results.
//
// The benchmarks live in the _test.go files and run only with -bench; plain
// `go test ./bench` runs a small correctness test on a tiny dataset.
package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// DataEnv overrides the directory generated datasets are kept in.
const DataEnv = "FLOE_BENCH_DATA"

// Spec describes a generated dataset of the events shape: id int64
// (sequential), ts timestamp µs without zone (increasing), category string
// (100 values), v float64 (random), payload 40 random characters.
type Spec struct {
	Name        string
	Files       int
	RowsPerFile int
	Seed        uint64
}

// Events5 is the dataset of the performance anchors (DESIGN.md §4): 5M rows
// as 50 Parquet files of 100k rows.
var Events5 = Spec{Name: "events5", Files: 50, RowsPerFile: 100_000, Seed: 5}

// Events10 is events5's shape at 10M rows (100 files), for the
// small-batches benchmark.
var Events10 = Spec{Name: "events10", Files: 100, RowsPerFile: 100_000, Seed: 10}

// Commit500 is 500 files of 1,000 rows: with one file per batch, 500
// snapshots whose commit cost is dominated by table metadata, not data.
var Commit500 = Spec{Name: "commit500", Files: 500, RowsPerFile: 1_000, Seed: 500}

// Rows is the dataset's row count.
func (s Spec) Rows() int64 { return int64(s.Files) * int64(s.RowsPerFile) }

// marker is what a complete dataset directory records; any difference (a
// changed spec, a generator change bumping the version) regenerates it.
func (s Spec) marker() string {
	return fmt.Sprintf("floe bench dataset v1 name=%s files=%d rows-per-file=%d seed=%d\n", s.Name, s.Files, s.RowsPerFile, s.Seed)
}

// Dataset is a generated dataset on disk.
type Dataset struct {
	Spec
	Dir   string
	Paths []string
	// Bytes is the total size of the input files.
	Bytes int64
}

// DataRoot is where datasets are kept: $FLOE_BENCH_DATA, else ./data (which
// is bench/data, git-ignored, when run by go test).
func DataRoot() (string, error) {
	if d := os.Getenv(DataEnv); d != "" {
		return filepath.Abs(d)
	}
	return filepath.Abs("data")
}

// markerName starts with "_" so that floe's file source, following
// Hadoop's convention, does not take it for input.
const markerName = "_DATASET"

// Ensure returns the dataset under root, generating it first unless a
// complete copy (marker present and matching) is already there. Generation
// is deterministic: the same spec always gives the same rows.
func Ensure(root string, s Spec) (Dataset, error) {
	ds := Dataset{Spec: s, Dir: filepath.Join(root, s.Name)}
	for i := range s.Files {
		ds.Paths = append(ds.Paths, filepath.Join(ds.Dir, fmt.Sprintf("part-%05d.parquet", i)))
	}
	if m, err := os.ReadFile(filepath.Join(ds.Dir, markerName)); err != nil || string(m) != s.marker() {
		if err := generate(ds); err != nil {
			return Dataset{}, fmt.Errorf("generate dataset %s: %w", s.Name, err)
		}
	}
	for _, p := range ds.Paths {
		st, err := os.Stat(p)
		if err != nil {
			return Dataset{}, fmt.Errorf("dataset %s is incomplete (delete %s to regenerate): %w", s.Name, ds.Dir, err)
		}
		ds.Bytes += st.Size()
	}
	return ds, nil
}

func generate(ds Dataset) error {
	// A partial or stale copy must not leave extra files for floe's
	// directory listing to pick up.
	if err := os.RemoveAll(ds.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(ds.Dir, 0o755); err != nil {
		return err
	}
	g := newGenerator(ds.Seed)
	for _, p := range ds.Paths {
		rec := g.record(ds.RowsPerFile)
		err := fixture.WriteParquet(p, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(ds.Dir, markerName), []byte(ds.marker()), 0o644)
}

// Schema is the Arrow schema of the generated files.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

const (
	payloadLen = 40
	alphabet   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	categories = 100
)

// generator continues ids and timestamps from one file to the next, so the
// whole dataset is one increasing sequence.
type generator struct {
	rng    *rand.Rand
	nextID int64
	cats   []string
}

func newGenerator(seed uint64) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed))}
	for i := range categories {
		g.cats = append(g.cats, fmt.Sprintf("cat-%02d", i))
	}
	return g
}

// epoch is the first row's timestamp; rows are 1 ms apart plus jitter
// below 1 ms, which keeps ts strictly increasing.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

func (g *generator) record(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, Schema)
	defer b.Release()
	b.Reserve(n)
	ids := b.Field(0).(*array.Int64Builder)
	tss := b.Field(1).(*array.TimestampBuilder)
	cats := b.Field(2).(*array.StringBuilder)
	vs := b.Field(3).(*array.Float64Builder)
	pays := b.Field(4).(*array.StringBuilder)
	pays.ReserveData(n * payloadLen)
	var sb strings.Builder
	for range n {
		id := g.nextID
		g.nextID++
		ids.Append(id)
		tss.Append(arrow.Timestamp(epoch + id*1000 + g.rng.Int64N(1000)))
		cats.Append(g.cats[g.rng.IntN(categories)])
		vs.Append(g.rng.Float64())
		sb.Reset()
		// One 64-bit draw yields ten base-62 digits (62^10 < 2^64).
		var x uint64
		for i := range payloadLen {
			if i%10 == 0 {
				x = g.rng.Uint64()
			}
			sb.WriteByte(alphabet[x%uint64(len(alphabet))])
			x /= uint64(len(alphabet))
		}
		pays.Append(sb.String())
	}
	return b.NewRecordBatch()
}
