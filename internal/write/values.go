package write

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe/internal/ingest"
)

// A Parquet input whose columns the table stores as the file does, in the
// table's order, but whose chunks are not copied (row groups too small to
// keep, statistics a copy cannot take, copying turned off), is read with
// parquet-go page by page and its values written into the table's
// parquet-go encoder as they come: no Arrow record is built and no value
// converted, which halves the CPU of a compaction of small files
// (docs/benchmarks.md). The file is still re-encoded in the table's codec,
// with the table's row groups and statistics, as any other input.
// Partitioned tables and files whose columns need reordering take the
// Arrow path.

// valueBlockRows is the rows read from every column before they are
// written: the block's values are held at 24 bytes each.
const valueBlockRows = 1 << 14

// valuesFor decides whether d may take Parquet inputs as values.
func (d *dest) valuesFor() {
	d.values = d.opts.parquetGo && d.part == nil && pqgoSupported(d.schema)
}

// valuesPlan reports whether plan writes the file's columns in their own
// order, which the values read from it carry.
func valuesPlan(plan *copyPlan) bool {
	for j, i := range plan.cols {
		if i != j {
			return false
		}
	}
	return true
}

// valueBlock is rows of an input read as parquet-go values, one slice per
// table column, with what the encoder needs to know of them.
type valueBlock struct {
	cols [][]pq.Value
	n    int
	used int // the most rows held since the block was taken
	// raw is the block's bytes as recordSize counts an Arrow record's, so
	// that both paths' row groups are cut alike.
	raw     int64
	longest []int64 // of each string or binary column
}

// valueBlocks keeps blocks between files: a compaction reads hundreds of
// small files, and a block per file was a third of its CPU.
var valueBlocks sync.Pool

// getValueBlock returns a block of columns that holds rows rows.
func getValueBlock(columns int, rows int64) *valueBlock {
	b, _ := valueBlocks.Get().(*valueBlock)
	if b == nil {
		b = &valueBlock{}
	}
	rows = min(rows, valueBlockRows)
	b.cols, b.longest = slices.Grow(b.cols[:0], columns)[:columns], slices.Grow(b.longest[:0], columns)[:columns]
	for c := range b.cols {
		if int64(cap(b.cols[c])) < rows {
			b.cols[c] = make([]pq.Value, rows)
		}
		b.cols[c] = b.cols[c][:cap(b.cols[c])]
	}
	return b
}

// putValueBlock gives a block back once its values are written; the
// values it keeps point into released pages, and are dropped.
func putValueBlock(b *valueBlock) {
	for c := range b.cols {
		clear(b.cols[c][:b.used])
	}
	b.n, b.used = 0, 0
	valueBlocks.Put(b)
}

// measure computes raw and longest for the block's n rows, and refuses a
// value over MaxValueBytes as the Arrow path does.
func (b *valueBlock) measure(kinds []pq.Kind, names []string, table string, firstRow int64) error {
	n := int64(b.n)
	b.raw = 0
	for c, k := range kinds {
		vals := b.cols[c][:b.n]
		b.raw += n / 8
		switch k {
		case pq.Boolean:
			b.raw += n / 8
		case pq.Int32, pq.Float:
			b.raw += 4 * n
		case pq.Int64, pq.Double:
			b.raw += 8 * n
		case pq.ByteArray:
			var sum, longest int64
			at := -1
			for i := range vals {
				l := int64(len(vals[i].ByteArray()))
				sum += l
				if l > longest {
					longest, at = l, i
				}
			}
			b.raw += sum + 4*n
			b.longest[c] = longest
			if longest > MaxValueBytes {
				return fmt.Errorf("%w: column %q row %d holds a value of %d bytes, over floe's limit of %d bytes (128 MiB) for one value of table %s; "+
					"split or shorten the value at its source, or set on-bad-file: quarantine to set such files aside", ingest.ErrBadInput, names[c], firstRow+int64(at)+1, longest, MaxValueBytes, table)
			}
		}
	}
	return nil
}

// blockRows is a block's rows from the first not yet written, as the first
// rows of a new file.
type blockRows struct {
	b    *valueBlock
	from int
}

func (r blockRows) repetitive(c int) bool {
	vals := r.b.cols[c][r.from:r.b.n]
	n := min(len(vals), 4096)
	if n == 0 {
		return true
	}
	seen := make(map[string]struct{}, n)
	for _, v := range vals[:n] {
		if !v.IsNull() {
			seen[string(v.ByteArray())] = struct{}{}
		}
	}
	return len(seen) <= n/2
}

func (r blockRows) longest(c int) int64 { return r.b.longest[c] }

// writeValues encodes the block's rows from from on, as Write does a
// record's.
func (e *pqgoEncoder) writeValues(b *valueBlock, from int) (int64, bool, error) {
	n := b.n - from
	raw := b.raw * int64(n) / int64(b.n)
	return e.rowGroups.write(int64(n), raw, func(lo, hi int64) (int64, error) {
		for _, c := range e.bounded {
			if b.longest[c] > maxBoundBytes {
				return 0, errNewFile
			}
		}
		writers := e.w.ColumnWriters()
		for c, vals := range b.cols {
			if _, err := writers[c].WriteRowValues(vals[from+int(lo) : from+int(hi)]); err != nil {
				return 0, fmt.Errorf("column %s: %w", e.cols[c].Name, err)
			}
		}
		return raw * (hi - lo) / int64(n), nil
	})
}

// appendValues writes the block to the slot's file, opening it first, and
// rolls the file when it reaches the target size; s.mu is held.
func (b *batch) appendValues(d *dest, s *slot, blk *valueBlock) error {
	for from := 0; from < blk.n; {
		if s.file == nil || s.file.enc == nil {
			f, err := b.openFile(d, s.dir, func(out *countingWriter) (fileEncoder, error) {
				return newPqgoEncoder(d.schema, out, d.opts, blockRows{blk, from})
			})
			if err != nil {
				return err
			}
			s.file = f
		}
		f := s.file
		enc, ok := f.enc.(*pqgoEncoder)
		if !ok {
			return fmt.Errorf("data file %s is not written by the parquet-go encoder", f.path)
		}
		taken, full, err := enc.writeValues(blk, from)
		if err != nil {
			return fmt.Errorf("encode data file %s: %w", f.path, err)
		}
		f.rows += taken
		from += int(taken)
		if full {
			if err := b.roll(d, s, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFileValues reads the file's values block by block into the worker's
// file of d, and returns the rows written. What the file holds wrong is a
// badInput.
func (b *batch) writeFileValues(d *dest, worker int, f ingest.ParquetFile) (int64, error) {
	rd := &rowGroupBytes{f: f}
	if p, ok := preloads.Get().(*[]byte); ok {
		rd.buf = (*p)[:0]
	}
	defer func() {
		if cap(rd.buf) > 0 {
			preloads.Put(&rd.buf)
		}
	}()
	pf, err := pq.OpenFile(rd, f.Size(), pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
	if err != nil {
		return 0, &badInput{fmt.Errorf("not a readable Parquet file: %v", err)}
	}
	leaves := pf.Schema().Fields()
	if len(leaves) != d.schema.NumFields() {
		return 0, &badInput{fmt.Errorf("the file has %d columns, its schema %d", len(leaves), d.schema.NumFields())}
	}
	kinds := make([]pq.Kind, len(leaves))
	names := make([]string, len(leaves))
	for c, l := range leaves {
		if !l.Leaf() || l.Type().PhysicalType() == nil || physicalType(d.schema.Field(c).Type) != *l.Type().PhysicalType() {
			return 0, &badInput{fmt.Errorf("column %s is not stored as the file's schema says", l.Name())}
		}
		kinds[c], names[c] = l.Type().Kind(), d.schema.Field(c).Name
	}
	s := d.slot(b.fileOf(worker), nil)
	blk := getValueBlock(len(leaves), pf.NumRows())
	defer putValueBlock(blk)
	var rows int64
	for g, rg := range pf.RowGroups() {
		if err := rd.load(&pf.Metadata().RowGroups[g]); err != nil {
			return rows, &badInput{fmt.Errorf("cannot read row group %d: %v", g, err)}
		}
		n, err := b.writeRowGroup(d, s, blk, rg, kinds, names, rows)
		rows += n
		if err != nil {
			var bad *badInput
			if errors.As(err, &bad) {
				err = &badInput{fmt.Errorf("row group %d: %w", g, bad.err)}
			}
			return rows, err
		}
	}
	return rows, nil
}

// writeRowGroup writes one row group of the file, block by block.
func (b *batch) writeRowGroup(d *dest, s *slot, blk *valueBlock, rg pq.RowGroup, kinds []pq.Kind, names []string, firstRow int64) (int64, error) {
	chunks := rg.ColumnChunks()
	cols := make([]columnValues, len(chunks))
	for c := range cols {
		cols[c].pages = chunks[c].Pages()
	}
	defer func() {
		for c := range cols {
			cols[c].close()
		}
	}()
	var rows int64
	for left := rg.NumRows(); left > 0; {
		blk.n = int(min(left, valueBlockRows))
		blk.used = max(blk.used, blk.n)
		for c := range cols {
			k, err := cols[c].read(blk.cols[c][:blk.n])
			if err != nil {
				return rows, &badInput{fmt.Errorf("column %s: %v", names[c], err)}
			}
			if k < blk.n {
				return rows, &badInput{fmt.Errorf("column %s holds %d values, its row group %d rows", names[c], firstRow+rows+int64(k), firstRow+rg.NumRows())}
			}
		}
		if err := blk.measure(kinds, names, d.name, firstRow+rows); err != nil {
			return rows, &badInput{err}
		}
		s.mu.Lock()
		err := b.appendValues(d, s, blk)
		s.mu.Unlock()
		if err != nil {
			return rows, err
		}
		for c := range cols {
			cols[c].written()
		}
		rows += int64(blk.n)
		left -= int64(blk.n)
	}
	for c := range cols {
		var extra [1]pq.Value
		if k, err := cols[c].read(extra[:]); k > 0 || err != nil {
			return rows, &badInput{fmt.Errorf("column %s holds more values than its row group's %d rows", names[c], rg.NumRows())}
		}
	}
	return rows, nil
}

// columnValues reads one column chunk's values across its pages. The
// values read point into their pages, which are kept until written.
type columnValues struct {
	pages  pq.Pages
	values pq.ValueReader
	held   []pq.Page
}

// read fills vals and returns how many it read: fewer only at the end of
// the chunk. parquet-go panics on some malformed pages: a panic reading
// the input is the input's error.
func (c *columnValues) read(vals []pq.Value) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed page: %v", r)
		}
	}()
	for n < len(vals) {
		if c.values == nil {
			p, err := c.pages.ReadPage()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			c.held = append(c.held, p)
			c.values = p.Values()
		}
		k, err := c.values.ReadValues(vals[n:])
		n += k
		if errors.Is(err, io.EOF) {
			c.values = nil
		} else if err != nil {
			return n, err
		}
	}
	return n, nil
}

// written releases the pages whose values were all written: every one but
// the page being read.
func (c *columnValues) written() {
	keep := 0
	if c.values != nil {
		keep = 1
	}
	for _, p := range c.held[:len(c.held)-keep] {
		pq.Release(p)
	}
	c.held = append(c.held[:0], c.held[len(c.held)-keep:]...)
}

func (c *columnValues) close() {
	for _, p := range c.held {
		pq.Release(p)
	}
	c.held = nil
	_ = c.pages.Close()
}

// rowGroupBytes serves the row group being read from memory, read with
// one call: parquet-go reads a page's header and body apart, in small
// reads, each of which would be a request to an object store. A row group
// over maxPreload is read as parquet-go reads it, so that memory stays
// bounded by the table's row groups rather than the input's.
const maxPreload = 64 << 20

// preloads recycles rowGroupBytes' buffers from file to file: a fresh
// buffer for every input file cost a page fault per 4 KiB read into it.
var preloads sync.Pool

type rowGroupBytes struct {
	f   ingest.ParquetFile
	off int64
	buf []byte
}

func (r *rowGroupBytes) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.buf)) {
		return copy(p, r.buf[off-r.off:]), nil
	}
	return r.f.ReadAt(p, off)
}

// load reads the bytes of a row group's chunks.
func (r *rowGroupBytes) load(rg *format.RowGroup) error {
	start, end := int64(-1), int64(0)
	for i := range rg.Columns {
		m := &rg.Columns[i].MetaData
		at := m.DataPageOffset
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < at {
			at = m.DictionaryPageOffset
		}
		if start < 0 || at < start {
			start = at
		}
		end = max(end, at+m.TotalCompressedSize)
	}
	r.off, r.buf = 0, r.buf[:0]
	if start < 0 || end <= start {
		return nil
	}
	if start < 4 || end > r.f.Size() {
		return fmt.Errorf("its chunks lie outside the file (bytes %d to %d of %d)", start, end, r.f.Size())
	}
	if end-start > maxPreload {
		return nil
	}
	if int64(cap(r.buf)) < end-start {
		r.buf = make([]byte, end-start)
	}
	buf := r.buf[:end-start]
	if _, err := r.f.ReadAt(buf, start); err != nil {
		return err
	}
	r.off, r.buf = start, buf
	return nil
}
