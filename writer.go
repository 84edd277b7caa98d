package floe

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
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
// table it belongs to, the location and the Iceberg data-file descriptor
// built from the Parquet footer (statistics and partition included), so
// that the commit never re-reads files.
type DataFile struct {
	Table     string
	Path      string
	SizeBytes int64
	Rows      int64
	File      iceberg.DataFile
}

// WriteResult is the outcome of writing one batch.
type WriteResult struct {
	Files []DataFile
	Rows  int64
	// Tables are the destination tables as the files were written for them,
	// by name.
	Tables map[string]*table.Table
	// PeakOpenFiles is the most data files open at once.
	PeakOpenFiles int
}

// Writer encodes a batch's parts into Parquet data files. Parts are read
// and encoded in parallel: encoding is nearly all the cost of ingestion.
//
// An unpartitioned table gets one file per writer goroutine, so that two
// files are encoded at once on two cores. A partitioned table gets one file
// per partition, shared by the goroutines (each holds it only to append a
// slice of rows): that gives as few files as partitions, at most
// MaxOpenFiles open at once. Rows of a partition that finds no free file
// wait in memory, up to a budget, and are then written a partition at a
// time; with Clustered every partition's rows wait so.
type Writer struct {
	// Table is the destination when Route is nil; or Name, a table that Open
	// loads or creates for the schema of the first rows.
	Table *table.Table
	Name  string
	// FilePrefix makes file names unique per query and batch, which keeps
	// retried batches from overwriting files another attempt committed.
	FilePrefix string
	// Route, when set, sends each row to the table its values name, loaded
	// or created by Open for the schema of the rows it first receives.
	Route *router
	Open  func(ctx context.Context, name string, in *arrow.Schema) (*table.Table, error)
	// Project selects the input fields written (keep, drop, only).
	Project *projection
	Conform conformOptions
	// TargetFileSize and MaxOpenFiles override the table properties.
	TargetFileSize int64
	MaxOpenFiles   int
	Clustered      bool
}

// Writer settings that Iceberg's table properties do not cover.
const (
	// MaxOpenFilesKey caps the data files a batch keeps open.
	MaxOpenFilesKey     = "write.max-open-files"
	maxOpenFilesDefault = 100
	// BufferBytesKey is the memory for rows waiting for a file.
	BufferBytesKey     = "floe.write.buffer-bytes"
	bufferBytesDefault = 256 << 20
)

// Write reads every part and writes the data files. On error every file it
// wrote is deleted and the error names the part (file) at fault.
func (w *Writer) Write(ctx context.Context, parts []Part) (WriteResult, error) {
	b := &batch{w: w, dests: map[string]*dest{}}
	switch {
	case w.Table != nil:
		d, err := b.newDest(ctx, joinIdent(w.Table.Identifier()), w.Table)
		if err != nil {
			return WriteResult{}, err
		}
		b.fixed = d
		b.dests[d.name] = d
	case w.Route == nil && (w.Name == "" || w.Open == nil):
		return WriteResult{}, errors.New("writer has no table: set Table, Name and Open, or Route and Open")
	}
	workers := max(1, min(parallelism(parts), len(parts)))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan Part)
	var (
		mu       sync.Mutex
		firstErr error
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
	for worker := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if err := b.writePart(ctx, worker, p); err != nil {
					fail(err)
					break
				}
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
	if firstErr == nil {
		firstErr = b.finish(ctx, workers)
	}
	res := b.result()
	if firstErr != nil {
		b.abort()
		for _, d := range b.dests {
			deleteFiles(d.wfs, d.files)
		}
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
