package write

import (
	"context"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/ingest"
)

// prefetch gives a batch too small for a writer per core the other cores
// all the same, rows still reaching the file in the parts' order. Parts
// that infer their columns while they decode (JSON lines, OnePassPart)
// and parts that cannot decode concurrently are read whole ahead of their
// turn, up to two at once; other parts that decode concurrently have
// their schemas inferred at once and are decoded on every core as they
// are written. Parquet parts the writer may copy by column chunk are left
// alone: they are not decoded.
func prefetch(ctx context.Context, parts []ingest.Part) []ingest.Part {
	schemas(ctx, parts)
	out := make([]ingest.Part, len(parts))
	// Each part is read once the one two before it is being written: a
	// core reads the next part while the other reads the one after, or
	// encodes (a small batch's parts are small).
	var prev, prev2 chan struct{}
	for i, p := range parts {
		if _, ok := p.(ingest.ParquetPart); ok {
			out[i] = p
			continue
		}
		if decodesConcurrently(p) {
			// Decoded on every core as it is written: better than a
			// part ahead, which leaves a core idle while the first part
			// is read and while the last is written.
			out[i] = concurrent{p.(ingest.ConcurrentPart)}
			continue
		}
		if len(parts) == 1 {
			// Nothing to read ahead of.
			out[i] = p
			continue
		}
		f := &fetched{Part: p, done: make(chan struct{}), consumed: make(chan struct{})}
		out[i] = f
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
		}(prev2)
		prev, prev2 = f.consumed, prev
	}
	return out
}

// schemas reads the schemas of the parts decoded concurrently, all at
// once, before the first is opened: the writer, opening one part after
// the other, would infer each on one core. A part remembers its schema
// for Open; one that fails is left to fail there.
func schemas(ctx context.Context, parts []ingest.Part) {
	var some []ingest.Part
	for _, p := range parts {
		if decodesConcurrently(p) {
			some = append(some, p)
		}
	}
	_, _ = ingest.PartSchemas(ctx, some)
}

// decodesConcurrently reports whether p is decoded on every core as it
// is written rather than read ahead.
func decodesConcurrently(p ingest.Part) bool {
	if op, ok := p.(ingest.OnePassPart); ok && op.OnePass() {
		return false // read whole ahead, its columns inferred as it decodes
	}
	cp, ok := p.(ingest.ConcurrentPart)
	return ok && cp.Concurrent()
}

// concurrent is a part opened with a decoder per core.
type concurrent struct{ ingest.ConcurrentPart }

func (c concurrent) Open(ctx context.Context) (array.RecordReader, error) {
	return c.OpenConcurrent(ctx, runtime.GOMAXPROCS(0))
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
