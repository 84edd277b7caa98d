package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite", as floe uses

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/write"
	_ "github.com/floe-io/floe/source/files" // registers the "files" source
)

// Cost is the wall-clock and CPU time (user + system, whole process) of one
// measured run.
type Cost struct {
	Wall time.Duration
	CPU  time.Duration
}

// measure runs f and returns its cost. The collection before the start
// keeps the previous contender's garbage from being charged to this one.
func measure(f func() error) (Cost, error) {
	runtime.GC()
	cpu0, t0 := cpuTime(), time.Now()
	err := f()
	return Cost{Wall: time.Since(t0), CPU: cpuTime() - cpu0}, err
}

// cpuTime is the process's CPU time so far. getrusage counts every thread,
// including the garbage collector's, which a per-goroutine clock would miss.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Result is one contender's run over a dataset. Rows, Files and Bytes are
// counted from the output after the run (from the table's manifests for
// Iceberg contenders), so they verify the run rather than echo the input.
type Result struct {
	Contender string
	Rows      int64
	Files     int
	// Bytes is the size of the data files written; for the decode floor,
	// which writes nothing, the size of the input read.
	Bytes int64
	// Partitions is the number of distinct partition values among the data
	// files of a partitioned table; 0 for an unpartitioned one.
	Partitions int
	Cost
}

// MeanFileBytes is the mean size of the files written.
func (r Result) MeanFileBytes() float64 {
	if r.Files == 0 {
		return 0
	}
	return float64(r.Bytes) / float64(r.Files)
}

// RowsPerSec is the wall-clock throughput.
func (r Result) RowsPerSec() float64 { return float64(r.Rows) / r.Wall.Seconds() }

// RowsPerCPUSec is the throughput per CPU-second, the figure that a noisy
// shared machine disturbs least.
func (r Result) RowsPerCPUSec() float64 { return float64(r.Rows) / r.CPU.Seconds() }

// Contender is one way of getting a dataset's rows into Parquet. Run
// writes under work, a fresh empty directory.
type Contender struct {
	Name string
	Run  func(ctx context.Context, ds Dataset, work string) (Result, error)
}

// Contenders are measured side by side by BenchmarkIngest, in this order.
var Contenders = []Contender{
	{Name: "cp", Run: Copy},
	{Name: "decode", Run: Decode},
	{Name: "floe", Run: Floe},
	{Name: "floe-reencode", Run: FloeReencode},
	{Name: "floe-arrow", Run: FloeArrow},
	{Name: "iceberg-go", Run: IcebergGo},
	{Name: "iceberg-go-per-file", Run: IcebergGoPerFile},
	{Name: "raw", Run: RawEncode},
}

// benchTable is the table every Iceberg contender writes.
var benchTable = table.Identifier{"bench", "events"}

// quiet drops floe's informational logging; warnings go to OnWarning.
var quiet = slog.New(slog.DiscardHandler)

// floeConfig is the pipeline a user would write for the dataset: the
// files source in parquet format, available-now, a new table in the
// embedded SQLite warehouse, everything else default.
func floeConfig(ds Dataset, work string, maxFilesPerTrigger int) (*config.Pipeline, error) {
	return sourceConfig(ds.Dir, work, maxFilesPerTrigger)
}

// sourceConfig is floeConfig for the Parquet files in dir.
func sourceConfig(dir, work string, maxFilesPerTrigger int) (*config.Pipeline, error) {
	cfg := &config.Pipeline{}
	cfg.SetDefaults()
	trig, err := config.ParseTrigger(config.TriggerAvailableNow)
	if err != nil {
		return nil, err
	}
	cfg.Trigger = trig
	cfg.Catalog.Warehouse = filepath.Join(work, "warehouse")
	cfg.Checkpoint = filepath.Join(work, "checkpoint")
	cfg.Source.Path = dir
	cfg.Source.Format = "parquet"
	cfg.Source.MaxFilesPerTrigger = maxFilesPerTrigger
	cfg.Sink.Table = strings.Join(benchTable, ".")
	// These benchmarks measure ingestion; BenchmarkMaintainedCommits
	// measures it with maintenance.
	off := false
	cfg.Maintenance.Enabled = &off
	return cfg, nil
}

// runFloe opens the catalog as floe.Open would (so that it can be closed
// and the table inspected afterwards), runs the pipeline to the end and
// returns the open catalog. A warning from floe fails the run: on this
// input there should be none.
func runFloe(ctx context.Context, cfg *config.Pipeline, onProgress func(floe.Progress)) (catalog.Catalog, floe.Summary, error) {
	var warnings []string
	cat, err := floe.OpenCatalog(ctx, cfg.Catalog)
	if err != nil {
		return nil, floe.Summary{}, err
	}
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: cat, Logger: quiet, OnProgress: onProgress,
		OnWarning: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		closeCatalog(cat)
		return nil, floe.Summary{}, err
	}
	sum, err := p.Run(ctx)
	err = errors.Join(err, p.Close())
	if err == nil && len(warnings) > 0 {
		err = fmt.Errorf("floe warned: %s", strings.Join(warnings, "; "))
	}
	if err != nil {
		closeCatalog(cat)
		return nil, sum, err
	}
	return cat, sum, nil
}

// Floe ingests the dataset with a floe pipeline (library call: Open + Run).
func Floe(ctx context.Context, ds Dataset, work string) (Result, error) {
	return floeIngest(ctx, "floe", ds, work, func(*config.Sink) {})
}

// FloeReencode is Floe with the table property that turns the copy of
// the inputs' column chunks off: every value is decoded and encoded again
// (parquet-go's encoder, zstd).
func FloeReencode(ctx context.Context, ds Dataset, work string) (Result, error) {
	return floeIngest(ctx, "floe-reencode", ds, work, func(s *config.Sink) {
		s.TableProperties = map[string]string{write.CopyChunksKey: "false"}
	})
}

// FloeArrow is FloeReencode through arrow-go's encoder instead of
// parquet-go's, which shows in the same run what the encoder alone is
// worth.
func FloeArrow(ctx context.Context, ds Dataset, work string) (Result, error) {
	return floeIngest(ctx, "floe-arrow", ds, work, func(s *config.Sink) {
		s.TableProperties = map[string]string{write.ParquetEncoderKey: "arrow", write.CopyChunksKey: "false"}
	})
}

// Copy copies the input files' bytes into the work directory, the floor
// under writing a table of the same bytes (floe's column-chunk copy).
func Copy(ctx context.Context, ds Dataset, work string) (Result, error) {
	dir := filepath.Join(work, "cp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	var bytes int64
	cost, err := measure(func() error {
		for _, p := range ds.Paths {
			n, err := copyFile(p, filepath.Join(dir, filepath.Base(p)))
			if err != nil {
				return err
			}
			bytes += n
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("cp: %w", err)
	}
	if bytes != ds.Bytes {
		return Result{}, fmt.Errorf("cp: copied %d bytes of %d", bytes, ds.Bytes)
	}
	// The rows are the input's: what a table of these bytes would hold.
	return Result{Contender: "cp", Rows: ds.Rows(), Files: len(ds.Paths), Bytes: bytes, Cost: cost}, nil
}

// copyFile is cp of one file, as coreutils copies it (the kernel's
// copy_file_range where it can) and, as floe's data files, without fsync.
func copyFile(from, to string) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	return n, errors.Join(err, out.Close())
}

// floeIngest runs floe with the default configuration changed by sink.
func floeIngest(ctx context.Context, name string, ds Dataset, work string, sink func(*config.Sink)) (Result, error) {
	cfg, err := floeConfig(ds, work, 0)
	if err != nil {
		return Result{}, err
	}
	sink(&cfg.Sink)
	var cat catalog.Catalog
	cost, err := measure(func() (err error) {
		cat, _, err = runFloe(ctx, cfg, nil)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	defer closeCatalog(cat)
	return tableResult(ctx, name, cat, cost)
}

// IcebergGo ingests the dataset with one iceberg-go Table.Append of all
// its files, as a user appends one batch, on a new SQLite catalog set up as
// floe sets up its embedded one: one snapshot.
func IcebergGo(ctx context.Context, ds Dataset, work string) (Result, error) {
	return icebergGoAppend(ctx, "iceberg-go", ds, work, nil)
}

// icebergGoAppend is IcebergGo on a table created with the partition spec
// that spec makes from the table schema (unpartitioned when spec is nil).
func icebergGoAppend(ctx context.Context, name string, ds Dataset, work string, spec func(*iceberg.Schema) (iceberg.PartitionSpec, error)) (Result, error) {
	return icebergGoRun(ctx, name, work, spec, func(tbl *table.Table) error {
		rdr := &chainReader{ctx: ctx, paths: ds.Paths, open: openParquet}
		defer rdr.Release()
		if _, err := tbl.Append(ctx, rdr, nil); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		return rdr.Err()
	})
}

// IcebergGoPerFile is IcebergGo with one Append (so one data file and one
// snapshot) per input file: what the earlier benchmarks compared with.
func IcebergGoPerFile(ctx context.Context, ds Dataset, work string) (Result, error) {
	return icebergGoIngest(ctx, "iceberg-go-per-file", ds, work, nil)
}

// icebergGoIngest is IcebergGoPerFile on a table created with the
// partition spec that spec makes from the table schema (unpartitioned when
// spec is nil).
func icebergGoIngest(ctx context.Context, name string, ds Dataset, work string, spec func(*iceberg.Schema) (iceberg.PartitionSpec, error)) (Result, error) {
	return icebergGoRun(ctx, name, work, spec, func(tbl *table.Table) error {
		for _, p := range ds.Paths {
			rdr, err := openParquet(ctx, p)
			if err != nil {
				return err
			}
			tbl, err = tbl.Append(ctx, rdr, nil)
			rdr.Release()
			if err != nil {
				return fmt.Errorf("append %s: %w", p, err)
			}
		}
		return nil
	})
}

// icebergGoRun measures appends, on a new table of a new catalog under
// work, and reads the table's result.
func icebergGoRun(ctx context.Context, name, work string, spec func(*iceberg.Schema) (iceberg.PartitionSpec, error), appends func(*table.Table) error) (Result, error) {
	var cat catalog.Catalog
	cost, err := measure(func() error {
		var tbl *table.Table
		var err error
		if cat, tbl, err = createIcebergGoTable(ctx, work, spec); err != nil {
			return err
		}
		return appends(tbl)
	})
	if cat != nil {
		defer closeCatalog(cat)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	return tableResult(ctx, name, cat, cost)
}

// createIcebergGoTable opens a fresh SQLite catalog under work and creates
// the bench table with iceberg-go's default properties, except the codec,
// which is pinned to zstd (iceberg-go's default too, table.
// ParquetCompressionDefault) so that the comparison stays like for like
// should that default change. A non-nil spec gives the table's partition
// spec, made from its schema.
func createIcebergGoTable(ctx context.Context, work string, spec func(*iceberg.Schema) (iceberg.PartitionSpec, error)) (catalog.Catalog, *table.Table, error) {
	return createIcebergGoTableWith(ctx, work, spec, nil)
}

// createIcebergGoTableWith is createIcebergGoTable with the table
// properties props besides.
func createIcebergGoTableWith(ctx context.Context, work string, spec func(*iceberg.Schema) (iceberg.PartitionSpec, error), props iceberg.Properties) (catalog.Catalog, *table.Table, error) {
	wh := filepath.Join(work, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return nil, nil, err
	}
	cat, err := catalog.Load(ctx, "bench", iceberg.Properties{
		"type":                "sql",
		"uri":                 "file:" + filepath.Join(wh, "catalog.db") + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)",
		sqlcat.DriverKey:      "sqlite",
		sqlcat.DialectKey:     string(sqlcat.SQLite),
		"init_catalog_tables": "true",
		"warehouse":           "file://" + wh,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open catalog: %w", err)
	}
	if err := cat.CreateNamespace(ctx, benchTable[:1], nil); err != nil {
		closeCatalog(cat)
		return nil, nil, fmt.Errorf("create namespace: %w", err)
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(Schema, true)
	if err != nil {
		closeCatalog(cat)
		return nil, nil, err
	}
	all := iceberg.Properties{
		table.PropertyFormatVersion: "2",
		table.ParquetCompressionKey: "zstd",
	}
	maps.Copy(all, props)
	opts := []catalog.CreateTableOpt{catalog.WithProperties(all)}
	if spec != nil {
		ps, err := spec(sc)
		if err != nil {
			closeCatalog(cat)
			return nil, nil, fmt.Errorf("partition spec: %w", err)
		}
		opts = append(opts, catalog.WithPartitionSpec(&ps))
	}
	tbl, err := cat.CreateTable(ctx, benchTable, sc, opts...)
	if err != nil {
		closeCatalog(cat)
		return nil, nil, fmt.Errorf("create table: %w", err)
	}
	return cat, tbl, nil
}

// Decode only reads the input into Arrow records, the floor under every
// contender: each of them reads the same files the same way.
func Decode(ctx context.Context, ds Dataset, _ string) (Result, error) {
	var rows int64
	cost, err := measure(func() error {
		for _, p := range ds.Paths {
			rdr, err := openParquet(ctx, p)
			if err != nil {
				return err
			}
			for rdr.Next() {
				rows += rdr.RecordBatch().NumRows()
			}
			err = rdr.Err()
			rdr.Release()
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read %s: %w", p, err)
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("decode: %w", err)
	}
	return Result{Contender: "decode", Rows: rows, Files: len(ds.Paths), Bytes: ds.Bytes, Cost: cost}, nil
}

// RawEncode re-encodes every input file into one zstd Parquet file with
// arrow-go's default properties and nothing of Iceberg: no field ids, no
// statistics conversion, no manifests, no commit.
func RawEncode(ctx context.Context, ds Dataset, work string) (Result, error) {
	dir := filepath.Join(work, "raw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	outs := make([]string, len(ds.Paths))
	cost, err := measure(func() error {
		for i, p := range ds.Paths {
			outs[i] = filepath.Join(dir, filepath.Base(p))
			if err := encodeFile(ctx, p, outs[i], props); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("raw: %w", err)
	}
	res := Result{Contender: "raw", Files: len(outs), Cost: cost}
	for _, o := range outs {
		pf, err := file.OpenParquetFile(o, false)
		if err != nil {
			return Result{}, fmt.Errorf("raw: reopen %s: %w", o, err)
		}
		res.Rows += pf.NumRows()
		_ = pf.Close()
		st, err := os.Stat(o)
		if err != nil {
			return Result{}, err
		}
		res.Bytes += st.Size()
	}
	return res, nil
}

// encodeFile buffers the whole file into one row group, as iceberg-go's
// and floe's writers do, rather than one row group per record read.
func encodeFile(ctx context.Context, in, out string, props *parquet.WriterProperties) error {
	rdr, err := openParquet(ctx, in)
	if err != nil {
		return err
	}
	defer rdr.Release()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w, err := pqarrow.NewFileWriter(rdr.Schema(), f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		_ = f.Close()
		return err
	}
	for rdr.Next() {
		if err := w.WriteBuffered(rdr.RecordBatch()); err != nil {
			_ = w.Close()
			return fmt.Errorf("encode %s: %w", out, err)
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		_ = w.Close()
		return fmt.Errorf("read %s: %w", in, err)
	}
	// Close writes the footer and closes f.
	return w.Close()
}

// readBatchRows matches floe's file source, so that every contender reads
// the input in records of the same size.
const readBatchRows = 64 * 1024

// openParquet reads one input file as floe's file source does: pqarrow,
// 64k-row records, columns decoded one after another.
func openParquet(ctx context.Context, path string) (array.RecordReader, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, memory.DefaultAllocator)
	if err != nil {
		_ = pf.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		_ = pf.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &fileReader{RecordReader: rr, file: pf}, nil
}

// fileReader closes its file when released.
type fileReader struct {
	array.RecordReader
	file     *file.Reader
	released bool
}

func (r *fileReader) Release() {
	if r.released {
		return
	}
	r.released = true
	r.RecordReader.Release()
	_ = r.file.Close()
}

// tableResult counts what the table's current snapshot holds.
func tableResult(ctx context.Context, name string, cat catalog.Catalog, cost Cost) (Result, error) {
	return tableResultOf(ctx, name, cat, benchTable, cost)
}

// tableResultOf is tableResult of the table ident.
func tableResultOf(ctx context.Context, name string, cat catalog.Catalog, ident table.Identifier, cost Cost) (Result, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return Result{}, fmt.Errorf("%s: load table: %w", name, err)
	}
	res := Result{Contender: name, Cost: cost}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return res, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return Result{}, err
	}
	// fmt prints a map with its keys sorted, so equal partition values
	// (field id -> value) print the same.
	var partitions map[string]bool
	if !tbl.Spec().IsUnpartitioned() {
		partitions = map[string]bool{}
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return Result{}, fmt.Errorf("%s: read manifest list: %w", name, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return Result{}, fmt.Errorf("%s: read manifest %s: %w", name, m.FilePath(), err)
		}
		for _, e := range entries {
			res.Rows += e.DataFile().Count()
			res.Bytes += e.DataFile().FileSizeBytes()
			res.Files++
			if partitions != nil {
				partitions[fmt.Sprint(e.DataFile().Partition())] = true
			}
		}
	}
	res.Partitions = len(partitions)
	return res, nil
}

func closeCatalog(cat catalog.Catalog) {
	if c, ok := cat.(io.Closer); ok {
		_ = c.Close()
	}
}

// chainReader reads input files one after another as one stream of
// records of the events' Schema, each file opened by open.
type chainReader struct {
	ctx   context.Context
	paths []string
	open  func(context.Context, string) (array.RecordReader, error)
	cur   array.RecordReader
	err   error
}

func (c *chainReader) Schema() *arrow.Schema { return Schema }

func (c *chainReader) Next() bool {
	for c.err == nil {
		if c.cur != nil && c.cur.Next() {
			return true
		}
		if c.cur != nil {
			if err := c.cur.Err(); err != nil && !errors.Is(err, io.EOF) {
				c.err = err
				return false
			}
			c.cur.Release()
			c.cur = nil
		}
		if len(c.paths) == 0 {
			return false
		}
		c.cur, c.err = c.open(c.ctx, c.paths[0])
		c.paths = c.paths[1:]
	}
	return false
}

func (c *chainReader) RecordBatch() arrow.RecordBatch { return c.cur.RecordBatch() }
func (c *chainReader) Record() arrow.RecordBatch      { return c.cur.RecordBatch() }
func (c *chainReader) Err() error                     { return c.err }
func (c *chainReader) Retain()                        {}
func (c *chainReader) Release() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}
