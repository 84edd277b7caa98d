package upsert

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/scan"
	"golang.org/x/sync/errgroup"
)

// hits are the positions of one data file whose rows hold keys the batch
// changes, in file order, and for each the slot of its key in the batch's
// changes.
type hits struct {
	task      table.FileScanTask
	positions []int64
	slots     []int32
}

// intIndex answers "does the batch change this key?" for integer keys
// faster than the map alone: a bitmap of hashed keys turns most absent
// keys away with one memory read, and the sorted keys prune files and
// row groups by their bounds.
type intIndex struct {
	c      *Changes
	bits   []uint64
	shift  uint
	sorted []int64
	slots  []int32 // of the keys in sorted
}

func newIntIndex(c *Changes) *intIndex {
	ix := &intIndex{c: c, sorted: make([]int64, 0, len(c.ints))}
	for k := range c.ints {
		ix.sorted = append(ix.sorted, k)
	}
	slices.Sort(ix.sorted)
	ix.slots = make([]int32, len(ix.sorted))
	for i, k := range ix.sorted {
		ix.slots[i] = c.ints[k]
	}
	// About 16 bits per key: a false positive one time in ten or so, each
	// then settled by the map.
	n := uint(64)
	for n < uint(16*len(ix.sorted)) {
		n <<= 1
	}
	ix.bits = make([]uint64, n/64)
	ix.shift = 64 - uint(bitsLen(n))
	for _, k := range ix.sorted {
		h := ix.hash(k)
		ix.bits[h>>6] |= 1 << (h & 63)
	}
	return ix
}

func bitsLen(n uint) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

func (ix *intIndex) hash(k int64) uint64 { return (uint64(k) * 0x9E3779B97F4A7C15) >> ix.shift }

// slot is the slot of key k in the batch's changes; ok is false when the
// batch does not change k.
func (ix *intIndex) slot(k int64) (slot int32, ok bool) {
	h := ix.hash(k)
	if ix.bits[h>>6]&(1<<(h&63)) == 0 {
		return 0, false
	}
	slot, ok = ix.c.ints[k]
	return slot, ok
}

// anyIn reports whether a key of the batch lies in [lo, hi].
func (ix *intIndex) anyIn(lo, hi int64) bool {
	i, _ := slices.BinarySearch(ix.sorted, lo)
	return i < len(ix.sorted) && ix.sorted[i] <= hi
}

// locate finds the rows of tbl's live data files whose keys the batch
// changes. Files and row groups whose key bounds hold none of the batch's
// keys are skipped; the others' key columns are read and probed.
func locate(ctx context.Context, tbl *table.Table, c *Changes, keyIDs []int, index *KeyIndex) ([]hits, error) {
	if tbl.CurrentSnapshot() == nil || c.Keys() == 0 {
		return nil, nil
	}
	if !c.spec.IntKey {
		index = nil // it holds integer keys
	}
	var opts []table.ScanOption
	if f := partitionFilter(tbl, c, keyIDs); f != nil && index == nil {
		// With the index, every live file is planned, so that the index
		// can let go of the dead ones; its search is cheap anyway.
		opts = append(opts, table.WithRowFilter(f))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the files of table %s: %w", tbl.Identifier(), err)
	}
	// A file split into tasks is searched once: its positions go into one
	// deletion vector.
	tasks = scan.WholeFiles(tasks)
	if index != nil {
		live := make(map[string]bool, len(tasks))
		for _, t := range tasks {
			live[t.File.FilePath()] = true
		}
		index.Retain(func(path string) bool { return live[path] })
	}
	var ix *intIndex
	if c.spec.IntKey {
		ix = newIntIndex(c)
		tasks = slices.DeleteFunc(tasks, func(t table.FileScanTask) bool {
			lo, hi, ok := intBounds(t.File, keyIDs[0])
			return ok && !ix.anyIn(lo, hi)
		})
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var out []hits
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, t := range tasks {
		g.Go(func() error {
			pos, slots, err := findInFile(gctx, fs, t.File, c, ix, keyIDs, index)
			if err != nil {
				return fmt.Errorf("look up keys in %s: %w", t.File.FilePath(), err)
			}
			if len(pos) > 0 {
				mu.Lock()
				out = append(out, hits{task: t, positions: pos, slots: slots})
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// intBounds are a data file's lower and upper bounds of an integer-family
// key column; ok is false when the manifest has none.
func intBounds(df iceberg.DataFile, id int) (lo, hi int64, ok bool) {
	l, okL := df.LowerBoundValues()[id]
	u, okU := df.UpperBoundValues()[id]
	if !okL || !okU {
		return 0, 0, false
	}
	dec := func(b []byte) (int64, bool) {
		switch len(b) {
		case 4:
			return int64(int32(binary.LittleEndian.Uint32(b))), true
		case 8:
			return int64(binary.LittleEndian.Uint64(b)), true
		}
		return 0, false
	}
	lo, okL = dec(l)
	hi, okU = dec(u)
	return lo, hi, okL && okU
}

// findInFile returns the positions of the rows of a data file whose keys
// the batch changes, with their keys' slots: from the index when it holds
// the file; else from the file's key column, read whole and added to the
// index when it fits, or probed as it is read when it does not.
func findInFile(ctx context.Context, fs iceio.IO, df iceberg.DataFile, c *Changes, ix *intIndex, keyIDs []int, index *KeyIndex) (pos []int64, slots []int32, err error) {
	path := df.FilePath()
	fk := index.lookup(path)
	if fk == nil {
		if !index.fits(int(df.Count())) {
			return probeFile(ctx, fs, path, c, ix, keyIDs)
		}
		keys, null, err := readIntKeys(ctx, fs, path, keyIDs[0])
		if err != nil {
			return nil, nil, err
		}
		fk = index.add(path, keys, null)
	}
	pos, slots = fk.find(ix.sorted)
	for i, j := range slots {
		slots[i] = ix.slots[j]
	}
	return pos, slots, nil
}

// readIntKeys reads a data file's integer key column whole: the key of
// each row, and which are null (nil when none is).
func readIntKeys(ctx context.Context, fs iceio.IO, path string, keyID int) (keys []int64, null []bool, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Close()
	md := rdr.MetaData()
	ci := columnByFieldID(md, keyID)
	if ci < 0 {
		// The file predates the key column: every row's key is null.
		null = make([]bool, md.NumRows)
		for i := range null {
			null[i] = true
		}
		return make([]int64, md.NumRows), null, nil
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, err
	}
	keys = make([]int64, 0, md.NumRows)
	for rg := range md.NumRowGroups() {
		chunked, err := fr.RowGroup(rg).Column(ci).Read(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range chunked.Chunks() {
			ints := asInts(a)
			if ints == nil {
				chunked.Release()
				return nil, nil, fmt.Errorf("key column is %s, not an integer", a.DataType())
			}
			for i := range a.Len() {
				if a.IsNull(i) {
					if null == nil {
						null = make([]bool, md.NumRows)
					}
					null[len(keys)] = true
				}
				keys = append(keys, ints(i))
			}
		}
		chunked.Release()
	}
	return keys, null, nil
}

// probeFile reads the key columns of one data file and returns the
// positions of the rows whose keys the batch changes, with their keys'
// slots.
func probeFile(ctx context.Context, fs iceio.IO, path string, c *Changes, ix *intIndex, keyIDs []int) (out []int64, slots []int32, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Close()
	md := rdr.MetaData()
	cols := make([]int, len(keyIDs))
	for i, id := range keyIDs {
		if cols[i] = columnByFieldID(md, id); cols[i] < 0 {
			// The file predates the key column: its rows hold a null key,
			// which no change has.
			return nil, nil, nil
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, err
	}
	var first int64 // the row group's first row in the file
	var buf []byte
	for rg := range md.NumRowGroups() {
		n := md.RowGroup(rg).NumRows()
		if ix != nil && !rowGroupMayHold(md, rg, cols[0], ix) || !bloomMayHold(rdr, rg, cols, c, ix) {
			first += n
			continue
		}
		arrays := make([]arrow.Array, len(cols))
		release := func() {
			for _, a := range arrays {
				if a != nil {
					a.Release()
				}
			}
		}
		for i, ci := range cols {
			chunked, err := fr.RowGroup(rg).Column(ci).Read(ctx)
			if err != nil {
				release()
				return nil, nil, err
			}
			a, err := concat(chunked)
			chunked.Release()
			if err != nil {
				release()
				return nil, nil, err
			}
			arrays[i] = a
		}
		kr, err := newKeyReader(arrays, ix != nil)
		if err != nil {
			release()
			return nil, nil, err
		}
		rows := arrays[0].Len()
		for i := range rows {
			if kr.null(i) >= 0 {
				continue
			}
			var slot int32
			var ok bool
			if ix != nil {
				slot, ok = ix.slot(kr.int(i))
			} else {
				buf = kr.appendBytes(buf[:0], i)
				slot, ok = c.strs[string(buf)]
			}
			if ok {
				out = append(out, first+int64(i))
				slots = append(slots, slot)
			}
		}
		release()
		first += n
	}
	return out, slots, nil
}

// columnByFieldID is the index of the leaf column with Iceberg field id
// id, or -1.
func columnByFieldID(md *metadata.FileMetaData, id int) int {
	for i := range md.Schema.NumColumns() {
		if int(md.Schema.Column(i).SchemaNode().FieldID()) == id {
			return i
		}
	}
	return -1
}

// rowGroupMayHold reports whether row group rg's statistics on the
// integer key column ci leave room for a key of the batch.
func rowGroupMayHold(md *metadata.FileMetaData, rg, ci int, ix *intIndex) bool {
	cc, err := md.RowGroup(rg).ColumnChunk(ci)
	if err != nil {
		return true
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		return true
	}
	switch s := st.(type) {
	case *metadata.Int64Statistics:
		return ix.anyIn(s.Min(), s.Max())
	case *metadata.Int32Statistics:
		return ix.anyIn(int64(s.Min()), int64(s.Max()))
	}
	return true
}

// concat turns a column chunk read into one array.
func concat(c *arrow.Chunked) (arrow.Array, error) {
	if len(c.Chunks()) == 1 {
		a := c.Chunk(0)
		a.Retain()
		return a, nil
	}
	return array.Concatenate(c.Chunks(), memory.DefaultAllocator)
}

// partitionFilter is "key IN (the batch's keys)" when the table is
// partitioned on its single key column, so that planning skips the
// partitions no key of the batch falls in; nil otherwise (bounds and the
// probe do the rest).
func partitionFilter(tbl *table.Table, c *Changes, keyIDs []int) iceberg.BooleanExpression {
	if len(keyIDs) != 1 {
		return nil
	}
	spec := tbl.Spec()
	on := false
	for _, pf := range spec.Fields() {
		on = on || pf.SourceID() == keyIDs[0]
	}
	field, ok := tbl.Schema().FindFieldByID(keyIDs[0])
	if !on || !ok {
		return nil
	}
	ref := iceberg.Reference(field.Name)
	switch field.Type.(type) {
	case iceberg.Int64Type:
		lits := make([]int64, 0, len(c.ints))
		for k := range c.ints {
			lits = append(lits, k)
		}
		return iceberg.IsIn(ref, lits...)
	case iceberg.Int32Type:
		lits := make([]int32, 0, len(c.ints))
		for k := range c.ints {
			lits = append(lits, int32(k))
		}
		return iceberg.IsIn(ref, lits...)
	case iceberg.StringType:
		lits := make([]string, 0, len(c.strs))
		for k := range c.strs {
			lits = append(lits, k)
		}
		return iceberg.IsIn(ref, lits...)
	}
	return nil
}
