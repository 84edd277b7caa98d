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
	full   bool // the last chunk held BatchRows rows
	// size is the bytes left to read when known (SizeHint), else 0.
	size   int64
	par    *parallel
	asText []string
	// row, when set, turns a line into the JSON object of its row, or nil
	// for a line that holds none.
	row func(line []byte) ([]byte, error)
	// aside, when set, takes the lines that are no row, and reading goes
	// on (on-bad-record: dead-letter).
	aside func(line int, raw []byte, err error)
	// skip tells the lines set aside before reading (inferring), which
	// the reader leaves out even where it could read them.
	skip func(line int) bool
}

// SetAside makes the reader hand each line it cannot read as a row to fn,
// with its number and why, and go on with the next, where it would stop;
// it leaves out the lines skip reports, set aside by an earlier pass.
func (r *Reader) SetAside(fn func(line int, raw []byte, err error), skip func(line int) bool) {
	r.aside, r.skip = fn, skip
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
	rd := &Reader{closer: closer, br: br, schema: schema, rows: NewRowsOf(schema, asText), row: row, asText: asText}
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
		if r.par != nil {
			r.par.close()
		}
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
	if r.par != nil {
		return r.err == nil && !r.done && r.nextParallel()
	}
	for !r.done && r.err == nil {
		r.fill()
		if r.err != nil {
			return false
		}
		// A chunk of lines all set aside holds no row: read on.
		recs, err := r.rows.Records(r.schema)
		if err != nil {
			r.err = err
			return false
		}
		if len(recs) > 0 {
			r.cur = recs[0]
			return true
		}
	}
	return false
}

// SizeHint tells the reader how many bytes it will read, when that is
// known (an uncompressed file): its first chunk is then sized from its
// first lines rather than grown by doubling, which copied the columns
// over and over, a tenth of reading a file of two chunks.
func (r *Reader) SizeHint(n int64) { r.size = n }

// SizingRows is the rows of a chunk whose length sizes the rest of it,
// when the bytes left are known.
const SizingRows = 256

// ExpectedRows is how many rows size bytes likely hold, n of them read in
// the first read bytes: the rows left at the length of those, and a
// sixteenth more for rows longer than those.
func ExpectedRows(n int, read, size int64) int {
	left := max(0, size-read) * int64(n) / max(1, read)
	return n + int(left+left/16)
}

// fill appends up to BatchRows lines to the rows.
func (r *Reader) fill() {
	if r.full && r.size == 0 {
		// The last chunk was full, so this one likely is: room for its
		// rows at once rather than by doubling. A small file, read in
		// one chunk, allocates no more than its rows.
		r.rows.Reserve(BatchRows)
	}
	n := 0
	var read int64 // bytes of this chunk's lines
	defer func() {
		r.full = n == BatchRows
		r.size = max(0, r.size-read)
	}()
	sized := r.size == 0
	for n < BatchRows {
		if !sized && n == SizingRows {
			sized = true
			r.rows.Reserve(min(BatchRows, ExpectedRows(n, read, r.size)))
		}
		// The line is read in place: nothing below keeps it past this
		// iteration, and a copy of every line was a tenth of the read.
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := bytes.Clone(b)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = r.br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		read += int64(len(b))
		if len(b) > 0 {
			r.line++
			row, lerr := r.readLine(r.rows, r.line, b)
			if lerr != nil {
				r.err = lerr
				return
			}
			if row {
				n++
			}
		}
		if errors.Is(err, io.EOF) {
			r.done = true
			return
		}
		if err != nil {
			r.err = err
			return
		}
	}
}

// readLine appends line number line, b, to rows; row reports whether it
// held a row (read or set aside), err is a *LineError that stops reading.
func (r *Reader) readLine(rows *Rows, line int, b []byte) (row bool, err error) {
	raw := bytes.TrimSpace(b)
	b = raw
	if r.skip != nil && r.skip(line) {
		return false, nil
	}
	if r.row != nil && len(b) > 0 {
		var rerr error
		if b, rerr = r.row(b); rerr != nil {
			if r.aside == nil {
				return false, &LineError{Line: line, Err: rerr}
			}
			r.aside(line, bytes.Clone(raw), rerr)
			return false, nil
		}
	}
	if len(b) == 0 {
		return false, nil
	}
	if err := rows.Append(b); err != nil {
		if r.aside == nil {
			return false, &LineError{Line: line, Err: err}
		}
		rows.SetAside()
		r.aside(line, bytes.Clone(raw), err)
	}
	return true, nil
}
