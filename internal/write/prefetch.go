package write

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/ingest"
)

// prefetch gives a batch too small for a writer per core a second core
// all the same: while the one writer encodes a part, the next is read and
// decoded into memory (at most one part ahead, and a small batch's parts
// are small), so that the rows still reach the file in the parts' order.
// Parquet parts the writer may copy by column chunk are left alone: they
// are not decoded.
func prefetch(ctx context.Context, parts []ingest.Part) []ingest.Part {
	out := make([]ingest.Part, len(parts))
	var prev chan struct{}
	for i, p := range parts {
		if _, ok := p.(ingest.ParquetPart); ok {
			out[i] = p
			continue
		}
		f := &fetched{Part: p, done: make(chan struct{}), consumed: make(chan struct{})}
		out[i] = f
		// Each part is read once the one before it is being written, so
		// that no more than one part waits in memory.
		go func(after chan struct{}) {
			if after != nil {
				select {
				case <-after:
				case <-ctx.Done():
					f.err = ctx.Err()
					close(f.done)
					return
				}
			}
			f.read(ctx)
		}(prev)
		prev = f.consumed
	}
	return out
}

// fetched is a part read ahead: its records, or the error reading it
// ended with.
type fetched struct {
	ingest.Part
	done     chan struct{} // closed once read
	consumed chan struct{} // closed once the writer opened it
	opened   sync.Once
	schema   *arrow.Schema
	recs     []arrow.RecordBatch
	err      error
}

func (f *fetched) read(ctx context.Context) {
	defer close(f.done)
	rdr, err := f.Part.Open(ctx)
	if err != nil {
		f.err = err
		return
	}
	defer rdr.Release()
	f.schema = rdr.Schema()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		f.recs = append(f.recs, rec)
	}
	f.err = rdr.Err()
}

// Open waits for the part to be read and hands its records out.
func (f *fetched) Open(ctx context.Context) (array.RecordReader, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.opened.Do(func() { close(f.consumed) })
	defer func() {
		for _, r := range f.recs {
			r.Release()
		}
		f.recs = nil
	}()
	if f.err != nil && f.schema == nil {
		return nil, f.err
	}
	rr, err := array.NewRecordReader(f.schema, f.recs)
	if err != nil {
		return nil, err
	}
	return &erringReader{RecordReader: rr, err: f.err}, nil
}

// erringReader reports, once its records are read, the error reading the
// part ended with (a bad value, a file still being written).
type erringReader struct {
	array.RecordReader
	err error
}

func (r *erringReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}
