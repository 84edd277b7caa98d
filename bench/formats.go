package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
)

// The formats benchmark: the same 2M rows as CSV, as JSON lines and as
// Parquet written by DuckDB and by pyarrow (row groups too small for
// floe's column-chunk copy), each written into zstd level 1 Parquet by
// floe's binary, by DuckDB's COPY (one thread, and its default threads)
// and by iceberg-go's Table.Append, every output read back and checked
// row for row against the rows the inputs were made from.

// FormatsFiles is how many of events5's files the formats benchmark
// reads: 2,000,000 rows.
const FormatsFiles = 20

// FormatInput is one input of the formats benchmark: the rows of the first
// files of a dataset in one format, written by one writer.
type FormatInput struct {
	Name   string // csv, json, parquet (DuckDB), parquet (pyarrow)
	Format string // floe's source.format: csv, json or parquet
	Dir    string
	Files  []string
	Rows   int64
	Bytes  int64
	// RowGroups is the number of row groups of a Parquet input.
	RowGroups int
}

// ErrNoPyarrow reports that the pyarrow-written input cannot be made here.
var ErrNoPyarrow = errors.New("pyarrow unavailable")

// FindPyarrow is the engines' virtual environment's Python
// (interop/engines/install.sh), checked to import pyarrow.
func FindPyarrow() (string, error) {
	py := filepath.Join(fixture.EnginesDir(), "venv", "bin", "python")
	if out, err := exec.Command(py, "-c", "import pyarrow").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s cannot import pyarrow (run interop/engines/install.sh): %v %s", ErrNoPyarrow, py, err, strings.TrimSpace(string(out)))
	}
	return py, nil
}

// FormatInputs makes once under the data root (or finds) the formats
// benchmark's inputs from the first files of ds: CSV with a header, JSON
// lines, and Parquet written by DuckDB and by pyarrow. An input whose
// writer is missing here (duck nil, no pyarrow) is left out, the reason in
// skipped.
func FormatInputs(ds Dataset, files int, duck *DuckDB, duckErr error) (inputs []FormatInput, skipped []string, err error) {
	py, pyErr := FindPyarrow()
	for _, m := range []struct {
		name, format, form string
		write              func(dir string, src []string) (int64, error)
		missing            error
	}{
		{"csv", "csv", "csv", textWriter("csv"), nil},
		{"json", "json", "json", textWriter("json"), nil},
		{"parquet (DuckDB)", "parquet", "parquet-duckdb", duck.writeParquet, duckErr},
		{"parquet (pyarrow)", "parquet", "parquet-pyarrow", pyarrowWriter(py), pyErr},
	} {
		if m.missing != nil {
			skipped = append(skipped, fmt.Sprintf("%s skipped: %v", m.name, m.missing))
			continue
		}
		dir, rows, err := ensureDerived(ds, m.form, files, m.write)
		if err != nil {
			return nil, nil, err
		}
		in, err := formatInput(m.name, m.format, dir, rows)
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, in)
	}
	return inputs, skipped, nil
}

// writeParquet writes each file of src again with DuckDB's COPY into dir,
// on one thread in row groups of 100,000 rows: one row group a file, as
// each source file has.
func (d *DuckDB) writeParquet(dir string, src []string) (int64, error) {
	var rows int64
	for i, p := range src {
		n, _, _, err := d.Copy(context.Background(), DuckDBCopy{Format: "parquet", Files: []string{p},
			Out: filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", i)), Threads: 1, RowGroupSize: 100_000})
		if err != nil {
			return 0, err
		}
		rows += n
	}
	return rows, nil
}

// pyarrowWriter writes files again with pyarrow (write_pyarrow.py) run by
// the Python py.
func pyarrowWriter(py string) func(dir string, src []string) (int64, error) {
	return func(dir string, src []string) (int64, error) {
		script, err := benchFile("write_pyarrow.py")
		if err != nil {
			return 0, err
		}
		out, err := exec.Command(py, append([]string{script, dir}, src...)...).Output()
		if err != nil {
			return 0, fmt.Errorf("write_pyarrow.py: %w: %s", err, stderrOf(err))
		}
		return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	}
}

// benchFile is the path of a file of the bench package's directory.
func benchFile(name string) (string, error) {
	root, err := fixture.ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bench", name), nil
}

// stderrOf is what a failed command printed on its standard error.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// formatInput lists an input's files, its bytes and, for Parquet, its row
// groups.
func formatInput(name, format, dir string, rows int64) (FormatInput, error) {
	in := FormatInput{Name: name, Format: format, Dir: dir, Rows: rows}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return in, err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			return in, err
		}
		in.Files = append(in.Files, p)
		in.Bytes += info.Size()
		if format == "parquet" {
			pf, err := file.OpenParquetFile(p, false)
			if err != nil {
				return in, fmt.Errorf("input %s: %w", p, err)
			}
			in.RowGroups += pf.NumRowGroups()
			_ = pf.Close()
		}
	}
	if len(in.Files) == 0 {
		return in, fmt.Errorf("input %s: no files in %s (delete it to make it again)", name, dir)
	}
	return in, nil
}

// ensureDerived makes, once, the directory of ds's first files turned
// into another form by write (which writes into dir the rows of src and
// returns how many), and returns it with its rows: a marker written last
// records them, and a directory without it is made again.
func ensureDerived(ds Dataset, form string, files int, write func(dir string, src []string) (int64, error)) (string, int64, error) {
	dir := filepath.Join(filepath.Dir(ds.Dir), fmt.Sprintf("%s-%s-%d", ds.Name, form, files))
	marker := filepath.Join(dir, "_DONE")
	if b, err := os.ReadFile(marker); err == nil {
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return dir, n, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	if len(ds.Paths) < files {
		return "", 0, fmt.Errorf("dataset %s has %d files, want %d", ds.Name, len(ds.Paths), files)
	}
	rows, err := write(dir, ds.Paths[:files])
	if err != nil {
		return "", 0, fmt.Errorf("write %s as %s: %w", ds.Name, form, err)
	}
	return dir, rows, os.WriteFile(marker, []byte(strconv.FormatInt(rows, 10)), 0o644)
}

// RowsSum is a set of rows' count and the sum of their rows' hashes over
// every column (checksumFiles): equal for the same rows in any order.
type RowsSum struct {
	Rows int64
	Sum  uint64
}

// FormatsWant is what every output of the formats benchmark must hold:
// the rows of the first files of ds, which every input was made from.
func FormatsWant(ctx context.Context, ds Dataset, files int) (RowsSum, error) {
	rows, sum, err := checksumFiles(ctx, ds.Paths[:files])
	return RowsSum{rows, sum}, err
}

// FormatRun is one contender's run over one input.
type FormatRun struct {
	Contender string
	Input     string
	// Rows and Sum are counted in the output files after the run.
	RowsSum
	Files int
	Bytes int64
	// Cost is what the ratios compare: floe's whole process, start-up
	// included; DuckDB's COPY alone, without node's and DuckDB's start-up;
	// iceberg-go's table creation and Append, in this process.
	Cost
	// Process is the whole process, for floe and DuckDB.
	Process ProcCost
	// Outputs are the data files written.
	Outputs []string
}

// RowsPerCPUSec is the run's throughput per CPU-second of Cost.
func (r FormatRun) RowsPerCPUSec() float64 { return float64(r.Rows) / r.CPU.Seconds() }

// RowsPerSec is the run's throughput per wall-second of Cost.
func (r FormatRun) RowsPerSec() float64 { return float64(r.Rows) / r.Wall.Seconds() }

// FormatContender is one way of writing an input's rows into zstd level 1
// Parquet; Run writes under work, a fresh empty directory.
type FormatContender struct {
	Name string
	Run  func(ctx context.Context, in FormatInput, work string) (FormatRun, error)
}

// FormatContenders are floe's binary bin, DuckDB on one thread and on its
// default threads when duck is not nil, and iceberg-go, in this order.
func FormatContenders(bin string, duck *DuckDB) []FormatContender {
	cs := []FormatContender{{Name: "floe", Run: FloeProcess{Bin: bin}.Format},
		// One core, as duckdb-1-thread: CPU-seconds of two threads run
		// at once cost more on a machine whose cores are shared.
		{Name: "floe-1-thread", Run: FloeProcess{Bin: bin, Env: []string{"GOMAXPROCS=1"}}.Format}}
	if duck != nil {
		cs = append(cs, FormatContender{Name: "duckdb-1-thread", Run: duck.format("duckdb-1-thread", 1)},
			FormatContender{Name: "duckdb", Run: duck.format("duckdb", 0)})
	}
	return append(cs, FormatContender{Name: "iceberg-go", Run: IcebergGoFormat})
}

// RunFormat runs c over in and checks that its output holds want.
func RunFormat(ctx context.Context, c FormatContender, in FormatInput, work string, want RowsSum) (FormatRun, error) {
	r, err := c.Run(ctx, in, work)
	if err != nil {
		return r, fmt.Errorf("%s over %s: %w", c.Name, in.Name, err)
	}
	r.Contender, r.Input = c.Name, in.Name
	rows, sum, err := checksumFiles(ctx, r.Outputs)
	if err != nil {
		return r, fmt.Errorf("%s over %s: read the output back: %w", c.Name, in.Name, err)
	}
	r.RowsSum = RowsSum{rows, sum}
	if r.RowsSum != want {
		return r, fmt.Errorf("%s over %s: the output holds %d rows of checksum %x, the input %d of %x", c.Name, in.Name, rows, sum, want.Rows, want.Sum)
	}
	return r, nil
}

// Format ingests in with the binary into a new table of zstd level 1. The
// Parquet inputs' row groups (4.2 and 5.0 MB) are just above the least
// size floe copies (4 MiB), so their copy is turned off: the benchmark
// measures re-encoding values written by others. A chunk found copied all
// the same fails the run.
func (f FloeProcess) Format(ctx context.Context, in FormatInput, work string) (FormatRun, error) {
	c, err := f.Ingest(ctx, in.Format, in.Dir, work, in.Format != "parquet")
	if err != nil {
		return FormatRun{}, err
	}
	r := FormatRun{Cost: Cost{Wall: c.Wall, CPU: c.CPU}, Process: c}
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return r, err
	}
	defer closeCatalog(cat)
	if r.Outputs, r.Bytes, err = dataFiles(ctx, cat, table.Identifier{"db", "events"}); err != nil {
		return r, err
	}
	r.Files = len(r.Outputs)
	if in.Format == "parquet" {
		n, err := copiedChunks(in.Files, r.Outputs)
		if err != nil {
			return r, err
		}
		if n > 0 {
			return r, fmt.Errorf("%d column chunks of the output are the input's, copied: not a re-encode", n)
		}
	}
	return r, nil
}

// copiedChunks counts the column chunks of outputs that have the value
// count and the compressed and uncompressed sizes of a chunk of inputs: a
// copied chunk keeps all three, an encoded one matches them by chance.
func copiedChunks(inputs, outputs []string) (int, error) {
	type chunk struct{ values, compressed, uncompressed int64 }
	each := func(paths []string, f func(chunk)) error {
		for _, p := range paths {
			pf, err := file.OpenParquetFile(p, false)
			if err != nil {
				return err
			}
			md := pf.MetaData()
			for i := range md.NumRowGroups() {
				rg := md.RowGroup(i)
				for j := range rg.NumColumns() {
					cc, err := rg.ColumnChunk(j)
					if err != nil {
						_ = pf.Close()
						return fmt.Errorf("%s: %w", p, err)
					}
					f(chunk{cc.NumValues(), cc.TotalCompressedSize(), cc.TotalUncompressedSize()})
				}
			}
			if err := pf.Close(); err != nil {
				return err
			}
		}
		return nil
	}
	in := map[chunk]bool{}
	if err := each(inputs, func(c chunk) { in[c] = true }); err != nil {
		return 0, err
	}
	n := 0
	err := each(outputs, func(c chunk) {
		if in[c] {
			n++
		}
	})
	return n, err
}

// dataFiles lists the local paths and total size of the live data files
// of table ident.
func dataFiles(ctx context.Context, cat catalog.Catalog, ident table.Identifier) ([]string, int64, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, 0, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, 0, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, 0, err
	}
	var paths []string
	var bytes int64
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, 0, err
		}
		for _, e := range entries {
			paths = append(paths, strings.TrimPrefix(e.DataFile().FilePath(), "file://"))
			bytes += e.DataFile().FileSizeBytes()
		}
	}
	return paths, bytes, nil
}

// format is the DuckDB contender on threads threads (0: DuckDB's default,
// one per core): one COPY of the input's files into one Parquet file.
func (d *DuckDB) format(name string, threads int) func(context.Context, FormatInput, string) (FormatRun, error) {
	return func(ctx context.Context, in FormatInput, work string) (FormatRun, error) {
		out := filepath.Join(work, name+".parquet")
		rows, net, proc, err := d.Copy(ctx, DuckDBCopy{Format: in.Format, Files: in.Files, Out: out, Threads: threads, Level: 1})
		if err != nil {
			return FormatRun{}, err
		}
		st, err := os.Stat(out)
		if err != nil {
			return FormatRun{}, err
		}
		if rows != in.Rows {
			return FormatRun{}, fmt.Errorf("COPY wrote %d rows, the input has %d", rows, in.Rows)
		}
		return FormatRun{Files: 1, Bytes: st.Size(), Cost: net, Process: proc, Outputs: []string{out}}, nil
	}
}

// IcebergGoFormat creates a table (iceberg-go's defaults but zstd level 1)
// and appends the input's rows in one Table.Append, as a user does with
// one batch: Parquet read by pqarrow, CSV and JSON lines by arrow-go's
// readers, given the events' schema. Measured in this process.
func IcebergGoFormat(ctx context.Context, in FormatInput, work string) (FormatRun, error) {
	var open func(context.Context, string) (array.RecordReader, error)
	switch in.Format {
	case "parquet":
		open = openParquet
	case "csv":
		open = func(_ context.Context, p string) (array.RecordReader, error) {
			return openText(p, func(f *os.File) array.RecordReader {
				return csv.NewReader(bufio.NewReaderSize(f, 1<<20), Schema, csv.WithHeader(true), csv.WithChunk(readBatchRows))
			})
		}
	case "json":
		open = func(_ context.Context, p string) (array.RecordReader, error) {
			return openText(p, func(f *os.File) array.RecordReader {
				return array.NewJSONReader(bufio.NewReaderSize(f, 1<<20), Schema, array.WithChunk(readBatchRows))
			})
		}
	default:
		return FormatRun{}, fmt.Errorf("format %q", in.Format)
	}
	var cat catalog.Catalog
	cost, err := timed(ctx, func() error {
		var tbl *table.Table
		var err error
		cat, tbl, err = createIcebergGoTableWith(ctx, work, nil, iceberg.Properties{table.ParquetCompressionLevelKey: "1"})
		if err != nil {
			return err
		}
		rdr := &chainReader{ctx: ctx, paths: in.Files, open: open}
		defer rdr.Release()
		if _, err := tbl.Append(ctx, rdr, nil); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		return rdr.Err()
	})
	if cat != nil {
		defer closeCatalog(cat)
	}
	if err != nil {
		return FormatRun{}, err
	}
	r := FormatRun{Cost: cost}
	if r.Outputs, r.Bytes, err = dataFiles(ctx, cat, benchTable); err != nil {
		return r, err
	}
	r.Files = len(r.Outputs)
	return r, nil
}

// openText is a reader made by mk over the file at p, which it closes
// when released.
func openText(p string, mk func(*os.File) array.RecordReader) (array.RecordReader, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &closingReader{RecordReader: mk(f), f: f}, nil
}

// closingReader closes its file when released.
type closingReader struct {
	array.RecordReader
	f *os.File
}

func (r *closingReader) Release() {
	r.RecordReader.Release()
	_ = r.f.Close()
}
