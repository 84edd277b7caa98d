package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/jsonrows"
)

// onePassBytes is the largest JSON-lines file read in one pass: its
// columns inferred while its rows are decoded, which must then wait in
// memory (about their size in the file) until the last line has decided
// the columns. A larger file, or a compressed one, whose decoded size the
// stored one does not bound, is read twice: once to infer, once to decode.
const onePassBytes = 64 << 20

// onePassBudget bounds the bytes of the files all one-pass reads of the
// process hold at once, whatever the writers per core: a file over it is
// read twice instead.
const onePassBudget = 256 << 20

// onePassHeld is the bytes of the files whose rows one-pass reads hold.
var onePassHeld atomic.Int64

// OnePass reports whether Open, called before Schema, reads the file in
// one pass (onePassJSON).
func (p *filePart) OnePass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.onePassable()
}

// onePassable is OnePass under p.mu.
func (p *filePart) onePassable() bool {
	if p.cfg.Format != "json" || p.schema != nil || len(p.cfg.Schema) > 0 || p.deadLetters ||
		p.entry.Size > onePassBytes || p.codec() != "" {
		return false
	}
	v := jsonrows.Variants(p.table)
	return v == nil || v.NumFields() == 0
}

// onePassJSON reads a JSON-lines file whose columns are inferred in one
// pass, when nothing needs them before its rows: the columns inferred and
// the rows decoded by one parse of each line, where two parses (inference,
// then reading) were two thirds of such a file's CPU. ok is false when the
// file is read the usual way: columns declared or already derived, dead
// letters on, variant columns in the table, a large or compressed file, or
// a table whose types the inferred columns must be read as.
func (p *filePart) onePassJSON() (rdr array.RecordReader, ok bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.onePassable() {
		return nil, false, nil
	}
	size := p.entry.Size
	if onePassHeld.Add(size) > onePassBudget {
		onePassHeld.Add(-size)
		return nil, false, nil
	}
	held := true
	defer func() {
		if held {
			onePassHeld.Add(-size)
		}
	}()
	rows, err := p.readRows()
	if err != nil {
		return nil, true, err
	}
	schema := rows.Schema()
	if rows.Empty() {
		return nil, true, errors.New("the file holds no JSON objects")
	}
	p.derived++
	typed, asText := jsonrows.AsTable(schema, p.table, true)
	if !typed.Equal(schema) || len(asText) > 0 {
		// The table reads some column as another type than inferred:
		// the rows are read again as that.
		p.schema, p.asText = typed, asText
		return nil, false, nil
	}
	recs, err := rows.Records(schema)
	if err != nil {
		return nil, true, err
	}
	p.schema = schema
	rr, err := array.NewRecordReader(schema, recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return nil, true, err
	}
	held = false
	return &heldReader{RecordReader: rr, size: size}, true, nil
}

// heldReader gives the bytes of its file back to the one-pass budget when
// it is released.
type heldReader struct {
	array.RecordReader
	size int64
	once sync.Once
}

func (r *heldReader) Release() {
	r.RecordReader.Release()
	r.once.Do(func() { onePassHeld.Add(-r.size) })
}

// readRows decodes every line of the file into inferring rows.
func (p *filePart) readRows() (*jsonrows.Rows, error) {
	br, f, err := p.text()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := jsonrows.NewRows()
	var read int64
	for line := 1; ; line++ {
		if line == jsonrows.SizingRows {
			// Room for the file's rows at the length of the first
			// ones, rather than columns grown by doubling.
			rows.Reserve(jsonrows.ExpectedRows(line-1, read, p.SizeBytes()))
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := bytes.Clone(b)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		read += int64(len(b))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if b = bytes.TrimSpace(b); len(b) > 0 {
			if aerr := rows.Append(b); aerr != nil {
				return nil, fmt.Errorf("line %d: %w", line, aerr)
			}
		}
		if err != nil {
			return rows, nil
		}
	}
}
