package floe

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	pqcompress "github.com/parquet-go/parquet-go/compress"
)

var memoryPool = memory.DefaultAllocator

// Writer defaults, as Iceberg's table properties name them.
const (
	TargetFileSizeKey = "write.target-file-size-bytes"
	// ParquetEncoderKey picks the Parquet encoder for flat schemas:
	// "parquet-go" (default, faster) or "arrow" (arrow-go, which nested
	// schemas always use).
	ParquetEncoderKey     = "floe.write.parquet-encoder"
	targetFileSizeDefault = 512 << 20
	rowGroupBytesDefault  = 128 << 20
	// zstd's fastest level: measured ~1.75x faster than level 3 for ~2.5%
	// larger files on the events5 dataset (docs/benchmarks.md).
	zstdLevelDefault = 1
)

// DataFile is what a writer hands the committer for one file it wrote: the
// location plus the Iceberg data-file descriptor built from the Parquet
// footer (statistics included), so that the commit never re-reads files.
type DataFile struct {
	Path      string
	SizeBytes int64
	Rows      int64
	File      iceberg.DataFile
}

// WriteResult is the outcome of writing one batch.
type WriteResult struct {
	Files []DataFile
	Rows  int64
}

// Writer encodes a batch's parts into Parquet data files of one table. Parts
// are read and encoded in parallel, one goroutine per file being written:
// encoding is nearly all the cost of ingestion and two files at once use
// both cores (splitting one file's columns gains much less).
type Writer struct {
	Table *table.Table
	// FilePrefix makes file names unique per query and batch, which keeps
	// retried batches from overwriting files another attempt committed.
	FilePrefix string
}

// Write reads every part and writes the data files. On error every file it
// wrote is deleted and the error names the part (file) at fault.
func (w *Writer) Write(ctx context.Context, parts []Part) (WriteResult, error) {
	tbl := w.Table
	if !tbl.Spec().IsUnpartitioned() {
		return WriteResult{}, fmt.Errorf("%w: table %s is partitioned (%s), and floe does not write partitioned tables yet; write to an unpartitioned table", ErrConfig, joinIdent(tbl.Identifier()), tbl.Spec())
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return WriteResult{}, fmt.Errorf("table %s schema: %w", joinIdent(tbl.Identifier()), err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return WriteResult{}, fmt.Errorf("table %s storage: %w", joinIdent(tbl.Identifier()), err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return WriteResult{}, fmt.Errorf("table %s: its storage does not support writing files; check the warehouse location and credentials", joinIdent(tbl.Identifier()))
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return WriteResult{}, fmt.Errorf("table %s locations: %w", joinIdent(tbl.Identifier()), err)
	}
	opts, err := newFileOptions(tbl, schema)
	if err != nil {
		return WriteResult{}, err
	}
	workers := max(1, min(parallelism(parts), len(parts)))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan Part)
	var (
		mu       sync.Mutex
		res      WriteResult
		firstErr error
		seq      atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ww := &workerWriter{tbl: tbl, wfs: wfs, locs: locs, opts: opts, schema: schema,
				name: func() string {
					return fmt.Sprintf("%s-%s-%05d.parquet", w.FilePrefix, uuid.NewString()[:8], seq.Add(1))
				}}
			for p := range next {
				rows, err := ww.writePart(ctx, p)
				if err != nil {
					fail(err)
					break
				}
				mu.Lock()
				res.Rows += rows
				mu.Unlock()
			}
			files, err := ww.finish()
			mu.Lock()
			res.Files = append(res.Files, files...)
			mu.Unlock()
			if err != nil {
				fail(err)
			}
		}()
	}
feed:
	for _, p := range parts {
		select {
		case next <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		deleteFiles(wfs, res.Files)
		return WriteResult{}, firstErr
	}
	return res, nil
}

// bytesPerWriter is how much input justifies one more parallel writer:
// below it, the extra output file costs readers more than the parallel
// encode saves.
const bytesPerWriter = 32 << 20

// parallelism picks one writer per bytesPerWriter of input, up to the cores.
func parallelism(parts []Part) int {
	var total int64
	for _, p := range parts {
		if n := p.SizeBytes(); n > 0 {
			total += n
		} else {
			total += bytesPerWriter // unknown size: assume it is worth a writer
		}
	}
	return int(min(int64(runtime.GOMAXPROCS(0)), 1+total/bytesPerWriter))
}

func deleteFiles(fsys icebergio.IO, files []DataFile) {
	for _, f := range files {
		_ = fsys.Remove(f.Path)
	}
}

// fileOptions are the per-table encoder settings, resolved once a batch.
type fileOptions struct {
	props      *parquet.WriterProperties
	arrowProps pqarrow.ArrowWriterProperties
	target     int64
	rowGroup   int64
	codecName  string
	level      int
	parquetGo  bool
	// pqgoCodec is shared by the batch's writers: building a zstd encoder
	// per file costs more than a small file's encode.
	pqgoCodec pqcompress.Codec
}

// newEncoder starts a data file; first is its first record.
func (o fileOptions) newEncoder(schema *arrow.Schema, out *countingWriter, first arrow.RecordBatch) (fileEncoder, error) {
	if o.parquetGo {
		return newPqgoEncoder(schema, out, o, first)
	}
	return newArrowEncoder(schema, out, o)
}

func newFileOptions(tbl *table.Table, schema *arrow.Schema) (fileOptions, error) {
	p := tbl.Properties()
	target, err := intProp(p, TargetFileSizeKey, targetFileSizeDefault)
	if err != nil {
		return fileOptions{}, err
	}
	rowGroup, err := intProp(p, table.ParquetRowGroupSizeBytesKey, rowGroupBytesDefault)
	if err != nil {
		return fileOptions{}, err
	}
	codecName := p.Get(table.ParquetCompressionKey, "zstd")
	var codec compress.Compression
	switch codecName {
	case "zstd":
		codec = compress.Codecs.Zstd
	case "snappy":
		codec = compress.Codecs.Snappy
	case "gzip":
		codec = compress.Codecs.Gzip
	case "lz4", "lz4_raw":
		codec = compress.Codecs.Lz4Raw
	case "brotli":
		codec = compress.Codecs.Brotli
	case "uncompressed", "none":
		codec = compress.Codecs.Uncompressed
	default:
		return fileOptions{}, fmt.Errorf("%w: table property %s=%q is not a known codec; use zstd, snappy, gzip, lz4, brotli or uncompressed", ErrConfig, table.ParquetCompressionKey, codecName)
	}
	level := compress.DefaultCompressionLevel
	if codecName == "zstd" {
		level = zstdLevelDefault
	}
	if v, ok := p[table.ParquetCompressionLevelKey]; ok && v != "" {
		if level, err = strconv.Atoi(v); err != nil {
			return fileOptions{}, fmt.Errorf("%w: table property %s=%q is not an integer", ErrConfig, table.ParquetCompressionLevelKey, v)
		}
	}
	wopts := []parquet.WriterProperty{
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(level),
		parquet.WithStats(true),
		parquet.WithCreatedBy("floe"),
		// Dictionaries pay only on repetitive columns; on all-distinct ones
		// (ids, measurements, payloads) they are pure cost, so arrow-go keeps
		// them for string and binary columns alone.
		parquet.WithDictionaryDefault(false),
	}
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY {
			wopts = append(wopts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	opts := fileOptions{
		props:      parquet.NewWriterProperties(wopts...),
		arrowProps: pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(memoryPool)),
		target:     target,
		rowGroup:   rowGroup,
		codecName:  codecName,
		level:      level,
		parquetGo:  pqgoSupported(schema) && p.Get(ParquetEncoderKey, "parquet-go") == "parquet-go",
	}
	if opts.parquetGo {
		if opts.pqgoCodec, err = pqgoCodec(codecName, level); err != nil {
			return fileOptions{}, err
		}
	}
	return opts, nil
}

func intProp(p iceberg.Properties, key string, def int64) (int64, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: table property %s=%q must be a positive integer", ErrConfig, key, v)
	}
	return n, nil
}

// workerWriter owns one open data file at a time, rolling to a new one at
// the target size.
type workerWriter struct {
	tbl    *table.Table
	wfs    icebergio.WriteFileIO
	locs   table.LocationProvider
	opts   fileOptions
	schema *arrow.Schema
	name   func() string

	cur   *openFile
	files []DataFile
	conf  map[*arrow.Schema]*conformer
}

type openFile struct {
	path string
	out  *countingWriter
	enc  fileEncoder
	rows int64
}

func (w *workerWriter) writePart(ctx context.Context, p Part) (int64, error) {
	rdr, err := p.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var rows int64
	for rdr.Next() {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		rec := rdr.RecordBatch()
		c, err := w.conformerFor(rec.Schema())
		if err != nil {
			return rows, &BadFileError{Path: p.Name(), Err: err}
		}
		out, err := c.conform(ctx, rec, rows)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return rows, cerr // a cancelled cast says nothing about the file
			}
			return rows, &BadFileError{Path: p.Name(), Err: err}
		}
		err = w.write(out)
		out.Release()
		if err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	if err := rdr.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return rows, cerr
		}
		var bf *BadFileError
		var uf *UnstableFileError
		if errors.As(err, &bf) || errors.As(err, &uf) {
			return rows, err
		}
		return rows, &BadFileError{Path: p.Name(), Err: err}
	}
	return rows, nil
}

func (w *workerWriter) conformerFor(s *arrow.Schema) (*conformer, error) {
	for in, c := range w.conf {
		if in == s || in.Equal(s) {
			return c, nil
		}
	}
	// Spark's checks (zero options) until the sink's check-nullability and
	// check-ordering are wired in through conformOptionsFor.
	c, err := newConformer(joinIdent(w.tbl.Identifier()), s, w.schema, conformOptions{})
	if err != nil {
		return nil, err
	}
	if w.conf == nil {
		w.conf = map[*arrow.Schema]*conformer{}
	}
	w.conf[s] = c
	return c, nil
}

func (w *workerWriter) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if w.cur == nil {
		path := w.locs.NewDataLocation(w.name())
		f, err := w.wfs.Create(path)
		if err != nil {
			return fmt.Errorf("create data file %s: %w", path, err)
		}
		out := &countingWriter{w: f}
		enc, err := w.opts.newEncoder(w.schema, out, rec)
		if err != nil {
			_ = f.Close()
			_ = w.wfs.Remove(path)
			return fmt.Errorf("start data file %s: %w", path, err)
		}
		w.cur = &openFile{path: path, out: out, enc: enc}
	}
	cur := w.cur
	if err := cur.enc.Write(rec); err != nil {
		return fmt.Errorf("encode data file %s: %w", cur.path, err)
	}
	cur.rows += rec.NumRows()
	if cur.enc.EncodedBytes() >= w.opts.target {
		return w.roll()
	}
	return nil
}

// roll closes the open file and turns its footer into a data-file entry.
func (w *workerWriter) roll() error {
	cur := w.cur
	if cur == nil {
		return nil
	}
	w.cur = nil
	meta, err := cur.enc.Close()
	if err != nil {
		_ = w.wfs.Remove(cur.path)
		return fmt.Errorf("finish data file %s: %w", cur.path, err)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:        w.tbl.Schema(),
		Spec:          w.tbl.Spec(),
		Format:        iceberg.ParquetFile,
		Metadata:      meta,
		FilePath:      cur.path,
		FileSize:      cur.out.n,
		Content:       iceberg.EntryContentData,
		Properties:    w.tbl.Properties(),
		SortOrderID:   w.tbl.SortOrder().OrderID(),
		FormatVersion: w.tbl.Metadata().Version(),
	})
	if err != nil {
		_ = w.wfs.Remove(cur.path)
		return fmt.Errorf("data file %s statistics: %w", cur.path, err)
	}
	w.files = append(w.files, DataFile{Path: cur.path, SizeBytes: cur.out.n, Rows: cur.rows, File: df})
	return nil
}

// finish closes the open file; the returned files include those written
// before an error, so that the caller can delete them.
func (w *workerWriter) finish() ([]DataFile, error) {
	err := w.roll()
	return w.files, err
}
