package files

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	// asText are the columns whose values are read as their JSON text.
	asText map[string]bool
	// row, when set, turns a line into the JSON object of its row, or nil
	// for a line that holds none.
	row func(line []byte) ([]byte, error)
}

func newJSONReader(f *os.File, schema *arrow.Schema, asText []string, row func([]byte) ([]byte, error)) *jsonReader {
	// Build with every field nullable: the builder would otherwise skip
	// absent keys of required fields and misalign columns. Required fields
	// are checked against the table when the batch is written.
	fields := make([]arrow.Field, len(schema.Fields()))
	for i, fd := range schema.Fields() {
		fd.Nullable = true
		fields[i] = fd
	}
	r := &jsonReader{f: f, br: bufio.NewReaderSize(f, 1<<20), schema: schema,
		bldr: array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil)), row: row}
	skipBOM(r.br)
	if len(asText) > 0 {
		r.asText = map[string]bool{}
		for _, c := range asText {
			r.asText[c] = true
		}
	}
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
			b = bytes.TrimSpace(b)
			if r.row != nil && len(b) > 0 {
				var rerr error
				if b, rerr = r.row(b); rerr != nil {
					r.err = fmt.Errorf("line %d: %w", r.line, rerr)
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
