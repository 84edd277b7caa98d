package jsonrows

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// BatchRows is the number of rows per Arrow record handed to the writer:
// large enough to amortise per-record costs, small enough to stream.
const BatchRows = 64 * 1024

// LineError is a line the reader could not read as a row; Line counts
// from 1, blank lines included.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Reader builds Arrow records from JSON lines, one object a line; an
// error is a *LineError naming its line.
type Reader struct {
	refs   atomic.Int64
	closer io.Closer
	br     *bufio.Reader
	schema *arrow.Schema
	rows   *Rows
	cur    arrow.RecordBatch
	line   int
	err    error
	done   bool
	// row, when set, turns a line into the JSON object of its row, or nil
	// for a line that holds none.
	row func(line []byte) ([]byte, error)
}

// NewReader reads the lines of r with schema, closing closer (if not nil)
// on the last Release. asText are the columns whose values are read as
// their JSON text (see AsTable); row, when set, turns a line into the JSON
// object of its row, or nil for a line that holds none.
func NewReader(r io.Reader, closer io.Closer, schema *arrow.Schema, asText []string, row func([]byte) ([]byte, error)) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	// Absent keys of required fields are read as nulls: required fields
	// are checked against the table when the batch is written.
	rd := &Reader{closer: closer, br: br, schema: schema, rows: NewRowsOf(schema, asText), row: row}
	rd.refs.Add(1)
	return rd
}

func (r *Reader) Schema() *arrow.Schema          { return r.schema }
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *Reader) Record() arrow.RecordBatch      { return r.cur }
func (r *Reader) Err() error                     { return r.err }
func (r *Reader) Retain()                        { r.refs.Add(1) }

func (r *Reader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		if r.closer != nil {
			_ = r.closer.Close()
		}
	}
}

func (r *Reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil {
		return false
	}
	n := 0
	for n < BatchRows {
		b, err := r.br.ReadBytes('\n')
		if len(b) > 0 {
			r.line++
			b = bytes.TrimSpace(b)
			if r.row != nil && len(b) > 0 {
				var rerr error
				if b, rerr = r.row(b); rerr != nil {
					r.err = &LineError{Line: r.line, Err: rerr}
					return false
				}
			}
			if len(b) > 0 {
				if err := r.rows.Append(b); err != nil {
					r.err = &LineError{Line: r.line, Err: err}
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
	r.cur = r.rows.Records(r.schema)[0]
	return true
}
