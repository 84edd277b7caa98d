package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// jsonReader builds Arrow records from JSON lines, one object a line, so
// that an error names its line.
type jsonReader struct {
	refs   atomic.Int64
	f      *os.File
	br     *bufio.Reader
	schema *arrow.Schema
	bldr   *array.RecordBuilder
	cur    arrow.RecordBatch
	line   int
	err    error
	done   bool
}

func newJSONReader(f *os.File, schema *arrow.Schema) *jsonReader {
	// Build with every field nullable: the builder would otherwise skip
	// absent keys of required fields and misalign columns. Required fields
	// are checked against the table when the batch is written.
	fields := make([]arrow.Field, len(schema.Fields()))
	for i, fd := range schema.Fields() {
		fd.Nullable = true
		fields[i] = fd
	}
	r := &jsonReader{f: f, br: bufio.NewReaderSize(f, 1<<20), schema: schema,
		bldr: array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))}
	r.refs.Add(1)
	return r
}

func (r *jsonReader) Schema() *arrow.Schema          { return r.schema }
func (r *jsonReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *jsonReader) Record() arrow.RecordBatch      { return r.cur }
func (r *jsonReader) Err() error                     { return r.err }
func (r *jsonReader) Retain()                        { r.refs.Add(1) }

func (r *jsonReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.bldr.Release()
		_ = r.f.Close()
	}
}

func (r *jsonReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil {
		return false
	}
	n := 0
	for n < batchRows {
		b, err := r.br.ReadBytes('\n')
		if len(b) > 0 {
			r.line++
			if b = bytes.TrimSpace(b); len(b) > 0 {
				if uerr := r.bldr.UnmarshalJSON(b); uerr != nil {
					r.err = fmt.Errorf("line %d: malformed JSON or a value of the wrong type (%v)", r.line, uerr)
					return false
				}
				n++
			}
		}
		if errors.Is(err, io.EOF) {
			r.done = true
			break
		}
		if err != nil {
			r.err = err
			return false
		}
	}
	if n == 0 {
		return false
	}
	rec := r.bldr.NewRecordBatch()
	defer rec.Release()
	r.cur = array.NewRecordBatch(r.schema, rec.Columns(), rec.NumRows())
	return true
}
