package scan

import (
	"iter"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// seqReader is an array.RecordReader over a sequence of records, pulled
// one at a time so that nothing but the current record is held.
type seqReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error, bool)
	stop   func()
	cur    arrow.RecordBatch
	err    error
}

func newSeqReader(schema *arrow.Schema, seq iter.Seq2[arrow.RecordBatch, error]) *seqReader {
	r := &seqReader{schema: schema}
	r.next, r.stop = iter.Pull2(seq)
	r.refs.Store(1)
	return r
}

func (r *seqReader) Schema() *arrow.Schema { return r.schema }

func (r *seqReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.next == nil {
		return false
	}
	rec, err, ok := r.next()
	switch {
	case !ok:
		r.finish()
		return false
	case err != nil:
		r.err = err
		r.finish()
		return false
	}
	r.cur = rec
	return true
}

func (r *seqReader) finish() {
	r.stop()
	r.next = nil
}

func (r *seqReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch under its deprecated name.
func (r *seqReader) Record() arrow.RecordBatch { return r.cur }

func (r *seqReader) Err() error { return r.err }

func (r *seqReader) Retain() { r.refs.Add(1) }

func (r *seqReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.next != nil {
		r.finish()
	}
}

var _ array.RecordReader = (*seqReader)(nil)
