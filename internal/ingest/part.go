package ingest

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Part is one independently readable piece of a batch, such as one file.
// Parts are read in parallel, each by one writer goroutine.
type Part interface {
	// Name identifies the part in errors and progress (a file path).
	Name() string
	// SizeBytes is the part's size as stored, or -1 when unknown; the
	// writer sizes its parallelism by it.
	SizeBytes() int64
	// Open starts reading the part. The reader's Err reports a failure or
	// an instability detected while reading; Release closes the part.
	Open(ctx context.Context) (array.RecordReader, error)
}

// SchemaPart is implemented by parts that can tell their schema without
// reading their rows (a Parquet footer, a CSV header and its inference).
// A part remembers what it read, so that opening it afterwards reads the
// schema no second time.
type SchemaPart interface {
	Part
	Schema(ctx context.Context) (*arrow.Schema, error)
}

// ConcurrentPart is implemented by parts that are independent files, whose
// schemas may be read at once, and that may decode their rows on several
// goroutines, handing them out in order: a batch of one or two parts then
// still uses every core.
type ConcurrentPart interface {
	SchemaPart
	// Concurrent reports whether OpenConcurrent decodes on more than one
	// goroutine (JSON lines do, other formats read as Open does).
	Concurrent() bool
	// OpenConcurrent is Open with n goroutines decoding.
	OpenConcurrent(ctx context.Context, n int) (array.RecordReader, error)
}

// OnePassPart is implemented by parts that can infer their schema while
// they decode their rows, when they are opened before their schema is
// asked: such a part is better read whole ahead of its turn than asked
// its schema first, which reads it twice.
type OnePassPart interface {
	Part
	OnePass() bool
}

// ParquetPart is implemented by parts that are one Parquet file, so that
// a writer may copy the file's column chunks as they are, instead of
// decoding and encoding every value, when the table stores the columns as
// the file does.
type ParquetPart interface {
	SchemaPart
	OpenParquet(ctx context.Context) (ParquetFile, error)
}

// ParquetFile is an open Parquet part: its bytes and its footer.
type ParquetFile interface {
	io.ReaderAt
	Size() int64
	// Footer is the footer Schema parsed.
	Footer() *metadata.FileMetaData
	// Close closes the file and, as the end of a part's reader does,
	// fails with an UnstableFileError when the file is no longer the one
	// planned: what was read of it must not be committed.
	Close() error
}

// PartSchemas is PartSchema of every part, errs[i] part i's error; the
// schemas of independent files (ConcurrentPart) are read on every core at
// once, as inferring a text file's columns reads all of it.
func PartSchemas(ctx context.Context, parts []Part) (schemas []*arrow.Schema, errs []error) {
	schemas, errs = make([]*arrow.Schema, len(parts)), make([]error, len(parts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(parts)) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				schemas[i], errs[i] = PartSchema(ctx, parts[i])
			}
		}()
	}
	for i, p := range parts {
		if _, ok := p.(ConcurrentPart); ok {
			select {
			case next <- i: // to an idle goroutine
				continue
			default:
			}
		}
		schemas[i], errs[i] = PartSchema(ctx, p)
	}
	close(next)
	wg.Wait()
	return schemas, errs
}

// PartSchema is the schema of p's rows: from Schema when p implements
// SchemaPart, else from opening it.
func PartSchema(ctx context.Context, p Part) (*arrow.Schema, error) {
	if sp, ok := p.(SchemaPart); ok {
		return sp.Schema(ctx)
	}
	rdr, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	return rdr.Schema(), nil
}
