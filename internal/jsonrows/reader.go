package jsonrows

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
	bldr   *array.RecordBuilder
	cur    arrow.RecordBatch
	line   int
	err    error
	done   bool
	// asText are the columns whose values are read as their JSON text.
	asText map[string]bool
	// row, when set, turns a line into the JSON object of its row, or nil
	// for a line that holds none.
	row func(line []byte) ([]byte, error)
}

// NewReader reads the lines of r with schema, closing closer (if not nil)
// on the last Release. asText are the columns whose values are read as
// their JSON text (see AsTable); row, when set, turns a line into the JSON
// object of its row, or nil for a line that holds none.
func NewReader(r io.Reader, closer io.Closer, schema *arrow.Schema, asText []string, row func([]byte) ([]byte, error)) *Reader {
	// Build with every field nullable: the builder would otherwise skip
	// absent keys of required fields and misalign columns. Required fields
	// are checked against the table when the batch is written.
	fields := make([]arrow.Field, len(schema.Fields()))
	for i, fd := range schema.Fields() {
		fd.Nullable = true
		fields[i] = fd
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	rd := &Reader{closer: closer, br: br, schema: schema,
		bldr: array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil)), row: row}
	if len(asText) > 0 {
		rd.asText = map[string]bool{}
		for _, c := range asText {
			rd.asText[c] = true
		}
	}
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
		r.bldr.Release()
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
				var uerr error
				if r.asText != nil {
					b, uerr = valuesAsText(b, r.asText)
				}
				if uerr == nil {
					uerr = r.bldr.UnmarshalJSON(b)
				}
				if uerr != nil {
					r.err = &LineError{Line: r.line, Err: fmt.Errorf("malformed JSON or a value of the wrong type (%v)", uerr)}
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

// valuesAsText rewrites the values of the given keys that are neither
// strings nor null as strings of their JSON text: 501 becomes "501".
func valuesAsText(line []byte, keys map[string]bool) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, err
	}
	changed := false
	for k, v := range obj {
		if v = bytes.TrimSpace(v); keys[k] && len(v) > 0 && v[0] != '"' && string(v) != "null" {
			obj[k], _ = json.Marshal(string(v))
			changed = true
		}
	}
	if !changed {
		return line, nil
	}
	return json.Marshal(obj)
}
