// Package write encodes a batch's parts into Parquet data files: keep,
// drop and only, routing rows to tables by a template, mapping columns onto
// each table's schema, partitioning, and encoding in parallel with
// parquet-go or arrow-go under a cap on open files. It hands back plain
// data-file descriptors for the committer; it never commits.
package write

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

var memoryPool = memory.DefaultAllocator

// Result is the outcome of writing one batch.
type Result struct {
	Files []ingest.DataFile
	Rows  int64
	// Parts is the number of input parts read.
	Parts int
	// Tables are the destination tables as the files were written for them,
	// by name.
	Tables map[string]*table.Table
	// PeakOpenFiles is the most data files open at once.
	PeakOpenFiles int
}

// Tables gives a writer its destination tables. The writer asks once per
// table and batch, with the schema of the first rows bound for it, so that
// the table can be created from them, or evolved to accept them, before
// any row is encoded.
type Tables interface {
	Table(ctx context.Context, name string, in *arrow.Schema) (*table.Table, error)
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
	// Table is the destination, when the writer has one table to write
	// (compaction). Otherwise Tables gives it the table Name names, or, with
	// Route, each table the rows' values name.
	Table  *table.Table
	Tables Tables
	Name   string
	Route  *Router
	// FilePrefix makes file names unique per query and batch, which keeps
	// retried batches from overwriting files another attempt committed.
	FilePrefix string
	// Batch is the batch's id, which the bad records a Route sets aside
	// carry.
	Batch int64
	// Project selects the input fields written (keep, drop, only).
	Project *conform.Projection
	Conform conform.Options
	// TargetFileSize and MaxOpenFiles override the table properties.
	TargetFileSize int64
	MaxOpenFiles   int
	Clustered      bool
	// OneFile makes the goroutines share an unpartitioned table's file,
	// and runs one per core whatever the input's size: a compaction wants
	// the fewest files, and each goroutine reads its input while another
	// encodes into the file.
	OneFile bool
	// RowIDs writes the rows' _row_id column (format-version 3 row
	// lineage, by its reserved field id) after the table's columns: an
	// updated row's id, null for a new row, which inherits one.
	RowIDs bool
}

// Writer settings that Iceberg's table properties do not cover.
const (
	// ParquetEncoderKey picks the Parquet encoder for flat schemas:
	// "parquet-go" (default, faster) or "arrow" (arrow-go, which nested
	// schemas always use).
	ParquetEncoderKey = "floe.write.parquet-encoder"
	// MaxOpenFilesKey caps the data files a batch keeps open.
	MaxOpenFilesKey     = "write.max-open-files"
	maxOpenFilesDefault = 100
	// BufferBytesKey is the memory for rows waiting for a file.
	BufferBytesKey     = "floe.write.buffer-bytes"
	bufferBytesDefault = 256 << 20
)

// Write reads every part and writes the data files. On error every file it
// wrote is deleted and the error names the part (file) at fault.
func (w *Writer) Write(ctx context.Context, parts []ingest.Part) (Result, error) {
	b := &batch{w: w, dests: map[string]*dest{}}
	switch {
	case w.Table != nil:
		d, err := b.newDest(ctx, ingest.JoinIdent(w.Table.Identifier()), w.Table)
		if err != nil {
			return Result{}, err
		}
		b.fixed = d
		b.dests[d.name] = d
	case w.Route == nil && (w.Name == "" || w.Tables == nil):
		return Result{}, errors.New("writer has no table: set Table, or Tables with Name or Route")
	}
	workers := parallelism(parts)
	if w.OneFile {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(parts)))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if workers == 1 && runtime.GOMAXPROCS(0) > 1 {
		parts = prefetch(ctx, parts)
	}
	next := make(chan ingest.Part)
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
			ingest.RemoveFiles(d.wfs, d.files)
		}
		return Result{}, firstErr
	}
	res.Parts = len(parts)
	return res, nil
}

// bytesPerWriter is how much input justifies one more parallel writer:
// below it, the extra output file costs readers more than the parallel
// encode saves. At 16 MB, the batches of 22 MB of a stream catching up
// are written on two cores into two files: at 32 MB they took 1.46× the
// wall of one large batch, at 16 MB 1.30× (BenchmarkSmallBatches).
const bytesPerWriter = 16 << 20

// parallelism picks one writer per bytesPerWriter of input, up to the cores.
func parallelism(parts []ingest.Part) int {
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

// Remove deletes the files of a result that will not be committed.
func (r Result) Remove(ctx context.Context) {
	for name, tbl := range r.Tables {
		fs, err := tbl.FS(ctx)
		if err != nil {
			continue
		}
		for _, f := range r.Files {
			if f.Table == name {
				_ = fs.Remove(f.Path)
			}
		}
	}
}
