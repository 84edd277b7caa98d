package upsert

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"golang.org/x/sync/errgroup"
)

// Row lineage (format-version 3): an upsert of a key whose row the table
// holds is an update of that row, as Spark's MERGE writes one, so it keeps
// the row's _row_id; its _last_updated_sequence_number is left out of the
// file, which the spec reads as the data sequence number of the commit
// that writes it. The rows are looked up before they are written, since
// the id goes into the data file; the lookup is the one Stage makes, and
// the first Stage takes it when the table has not moved since.

// located is what a lookup found in one snapshot of the table: the rows
// the batch replaces and the deletion vectors their files have.
type located struct {
	snapshot int64
	hits     []hits
	earlier  []earlierVector
}

// rowIDField is the column of row ids Upserts adds after KeepRowIDs:
// v3's reserved _row_id, by its field id.
var rowIDField = arrow.Field{Name: iceberg.RowIDColumnName, Type: arrow.PrimitiveTypes.Int64, Nullable: true,
	Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(iceberg.RowIDFieldID)})}

// KeepRowIDs looks up the live rows of tbl that the batch's keys replace
// and has Upserts write each upsert of such a key with the row's _row_id;
// kept reports that the rows Upserts returns have the column (null for
// new keys), which a table without rows, or with a column of that name of
// its own, does not get. A row that a position delete file or an equality
// delete may delete (a table upgraded from format-version 2, or written by
// an equality-delete writer) is not taken: its key gets a new id, as those
// writers give it.
func (d *Deletes) KeepRowIDs(ctx context.Context, tbl *table.Table) (kept bool, err error) {
	snap := tbl.CurrentSnapshot()
	c := d.Changes
	if _, ok := tbl.Schema().FindFieldByName(iceberg.RowIDColumnName); ok || snap == nil || c.Keys() == 0 {
		return false, nil
	}
	keyIDs, err := KeyFieldIDs(tbl.Schema(), d.Keys)
	if err != nil {
		return false, err
	}
	found, err := locate(ctx, tbl, c, keyIDs, d.Index)
	if err != nil {
		return false, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return false, err
	}
	earlier, err := readEarlier(fs, found)
	if err != nil {
		return false, err
	}
	d.pre = &located{snapshot: snap.SnapshotID, hits: found, earlier: earlier}
	index := d.Index
	if !c.spec.IntKey {
		index = nil // it holds integer keys
	}
	deleted := make(map[string]*dv.RoaringPositionBitmap, len(earlier))
	for _, e := range earlier {
		deleted[e.data.FilePath()] = e.bitmap
	}
	ids := make([][]int64, len(found))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, h := range found {
		if h.task.FirstRowID == nil || len(h.task.DeleteFiles) > 0 || len(h.task.EqualityDeleteFiles) > 0 {
			continue
		}
		g.Go(func() error {
			var err error
			ids[i], err = rowIDsAt(gctx, fs, h, deleted[h.task.File.FilePath()], index)
			if err != nil {
				return fmt.Errorf("read the row ids of %s: %w", h.task.File.FilePath(), err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	c.rowIDs = make([]int64, c.Keys())
	for i := range c.rowIDs {
		c.rowIDs[i] = -1
	}
	// A key with more than one live row (appended twice by another
	// writer) keeps the smallest id: its rows are all replaced by one.
	for i, h := range found {
		for j, id := range ids[i] {
			if s := h.slots[j]; id >= 0 && (c.rowIDs[s] < 0 || id < c.rowIDs[s]) {
				c.rowIDs[s] = id
			}
		}
	}
	return true, nil
}

// rowIDsAt returns the _row_id of each of h's positions, -1 for those a
// deletion vector deletes: the file's own value where it has one (a row
// updated or rewritten before), else its first row id plus the position.
// A file the key index holds has its own values read whole and kept
// there, so that later batches read them no more than its keys.
func rowIDsAt(ctx context.Context, fs iceio.IO, h hits, deleted *dv.RoaringPositionBitmap, index *KeyIndex) ([]int64, error) {
	ids := make([]int64, len(h.positions))
	live := false
	for i, p := range h.positions {
		if deleted != nil && deleted.Contains(uint64(p)) {
			ids[i] = -1
			continue
		}
		ids[i] = *h.task.FirstRowID + p
		live = true
	}
	df := h.task.File
	if n, ok := df.NullValueCounts()[iceberg.RowIDFieldID]; !live || ok && n == df.Count() {
		// No live row, or a file of new rows alone, whose ids all inherit.
		return ids, nil
	}
	path := df.FilePath()
	if own, ok := index.fileRowIDs(path); ok {
		for i, p := range h.positions {
			if ids[i] >= 0 && own != nil && own[p] >= 0 {
				ids[i] = own[p]
			}
		}
		return ids, nil
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	md := rdr.MetaData()
	ci := columnByFieldID(md, iceberg.RowIDFieldID)
	whole := index.lookup(path) != nil
	if ci < 0 {
		if whole {
			index.keepRowIDs(path, nil)
		}
		return ids, nil
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	var own []int64
	if whole {
		own = make([]int64, 0, md.NumRows)
	}
	var first int64 // the row group's first row in the file
	at := 0         // the first of h.positions not yet past
	for rg := range md.NumRowGroups() {
		n := md.RowGroup(rg).NumRows()
		end, _ := slices.BinarySearch(h.positions[at:], first+n)
		end += at
		if !whole && (!slices.ContainsFunc(ids[at:end], func(id int64) bool { return id >= 0 }) || allNull(md, rg, ci)) {
			at, first = end, first+n
			continue
		}
		chunked, err := fr.RowGroup(rg).Column(ci).Read(ctx)
		if err != nil {
			return nil, err
		}
		col, err := concat(chunked)
		chunked.Release()
		if err != nil {
			return nil, err
		}
		vals, ok := col.(*array.Int64)
		if !ok {
			col.Release()
			return nil, fmt.Errorf("its _row_id column is %s, not a long", col.DataType())
		}
		for i := at; i < end; i++ {
			if r := int(h.positions[i] - first); ids[i] >= 0 && vals.IsValid(r) {
				ids[i] = vals.Value(r)
			}
		}
		if whole {
			for r := range vals.Len() {
				if vals.IsValid(r) {
					own = append(own, vals.Value(r))
				} else {
					own = append(own, -1)
				}
			}
		}
		col.Release()
		at, first = end, first+n
	}
	if whole {
		index.keepRowIDs(path, own)
	}
	return ids, nil
}

// allNull reports whether row group rg's statistics tell that column ci
// is null throughout (a file of new rows alone).
func allNull(md *metadata.FileMetaData, rg, ci int) bool {
	cc, err := md.RowGroup(rg).ColumnChunk(ci)
	if err != nil {
		return false
	}
	st, err := cc.Statistics()
	return err == nil && st != nil && st.HasNullCount() && st.NullCount() == cc.NumValues()
}
