package upsert

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// Deletes stage a batch's deletes of the rows its keys replace: on a
// format-version 3 table, deletion vectors for the rows found by looking
// the keys up in the live data files, each merged with the file's earlier
// vector, which it replaces; on format-version 2, one equality delete per
// key, which spares the batch's own rows (they share its sequence
// number). Stage is called for every commit attempt, against the table as
// the attempt sees it, so that a concurrent compaction or upsert moving
// rows is seen before the deletes are written.
type Deletes struct {
	Changes *Changes
	// Keys are the key columns' names.
	Keys []string
	// Index, when set, keeps the table's integer keys from batch to batch.
	Index *KeyIndex
	// Found counts the rows the last Stage deleted by position; Vectors
	// tells that it staged deletion vectors (v3), which count them.
	Found   int64
	Vectors bool
	// pre is what KeepRowIDs found before the write, which the first
	// Stage takes when the table has not moved since.
	pre *located
}

// Stage writes the delete files for tbl, staged in txn's row delta by the
// caller, and returns them with the deletion vectors they replace.
func (d *Deletes) Stage(ctx context.Context, txn *table.Transaction, tbl *table.Table) (add, remove []iceberg.DataFile, err error) {
	if d.Changes.Keys() == 0 {
		return nil, nil, nil
	}
	if err := CheckTable(tbl, d.Keys); err != nil {
		return nil, nil, err
	}
	keyIDs, err := KeyFieldIDs(tbl.Schema(), d.Keys)
	if err != nil {
		return nil, nil, err
	}
	if tbl.Metadata().Version() >= 3 {
		return d.vectors(ctx, tbl, keyIDs)
	}
	add, err = d.equality(ctx, txn, tbl, keyIDs)
	return add, nil, err
}

// KeyFieldIDs are the field ids of the key columns in sc, which must be
// top-level primitive columns of a type keys can be compared in.
func KeyFieldIDs(sc *iceberg.Schema, keys []string) ([]int, error) {
	ids := make([]int, len(keys))
	for i, k := range keys {
		f, ok := sc.FindFieldByName(k)
		if !ok {
			return nil, fmt.Errorf("%w: key column %s is not in the table (its columns: %s)", ingest.ErrConfig, k, topNames(sc))
		}
		switch f.Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			return nil, floatKeyError(k, f.Type.String())
		case iceberg.NestedType:
			return nil, fmt.Errorf("%w: key column %s is %s; a key is made of primitive columns", ingest.ErrConfig, k, f.Type)
		}
		ids[i] = f.ID
	}
	return ids, nil
}

func topNames(sc *iceberg.Schema) string {
	names := make([]string, 0, len(sc.Fields()))
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return fmt.Sprint(names)
}

// CheckTable checks that tbl can take upserts keyed by keys: key columns
// it can compare, a format version that records deletes, and on
// format-version 2 a partitioning the key fixes.
func CheckTable(tbl *table.Table, keys []string) error {
	name := ingest.JoinIdent(tbl.Identifier())
	keyIDs, err := KeyFieldIDs(tbl.Schema(), keys)
	if err != nil {
		return fmt.Errorf("table %s: %w", name, err)
	}
	if tbl.Metadata().Version() < 2 {
		return fmt.Errorf("%w: table %s is format-version 1, which cannot record deletes; upsert into a format-version 2 or 3 table", ingest.ErrConfig, name)
	}
	if tbl.Metadata().Version() > 2 {
		return nil
	}
	var names []string
	spec := tbl.Spec()
	for _, pf := range spec.Fields() {
		if !slices.Contains(keyIDs, pf.SourceID()) {
			n, _ := tbl.Schema().FindColumnName(pf.SourceID())
			names = append(names, n)
		}
	}
	return PartitionError(name, names)
}

// PartitionError refuses format-version 2 upserts into a table
// partitioned by columns outside the key (names); nil when there are none.
func PartitionError(table string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	cols := strings.Join(names, ", ")
	return fmt.Errorf("%w: table %s is format-version 2 and partitioned by %s, which is not a key column: an equality delete applies within one partition, so a changed row moved to another partition would survive; add %s to the key (identifier-fields), or upsert into a format-version 3 table (deletion vectors)", ingest.ErrConfig, table, cols, cols)
}

// IsIntKey reports whether the key columns of sc are read as one int64.
func IsIntKey(sc *iceberg.Schema, keys []string) bool {
	fields := make([]iceberg.NestedField, 0, len(keys))
	for _, k := range keys {
		f, ok := sc.FindFieldByName(k)
		if !ok {
			return false
		}
		fields = append(fields, f)
	}
	return isIntKey(fields)
}

// vectors writes one Puffin file of deletion vectors: for each data file
// holding rows the batch replaces, its earlier vector (if any) with the
// new positions added.
func (d *Deletes) vectors(ctx context.Context, tbl *table.Table, keyIDs []int) (add, remove []iceberg.DataFile, err error) {
	d.Found, d.Vectors = 0, true
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	pre := d.pre
	d.pre = nil
	var found []hits
	var earlier []earlierVector
	if pre != nil && pre.snapshot == tbl.CurrentSnapshot().SnapshotID {
		found, earlier = pre.hits, pre.earlier
	} else {
		if found, err = locate(ctx, tbl, d.Changes, keyIDs, d.Index); err != nil {
			return nil, nil, err
		}
		if earlier, err = readEarlier(fs, found); err != nil {
			return nil, nil, err
		}
	}
	if len(found) == 0 {
		return nil, nil, nil
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, nil, errors.New("the table's file system cannot write files")
	}
	specs := tbl.Metadata().PartitionSpecs()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec {
		for i := range specs {
			if int32(specs[i].ID()) == id {
				return &specs[i]
			}
		}
		return nil
	})
	for _, e := range earlier {
		w.Load(e.data.FilePath(), e.bitmap, e.data.SpecID(), e.data.Partition())
		remove = append(remove, e.dv)
	}
	for _, h := range found {
		df := h.task.File
		if err := w.Add(df.FilePath(), h.positions, df.SpecID(), df.Partition()); err != nil {
			return nil, nil, err
		}
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return nil, nil, err
	}
	if add, err = w.Flush(ctx, locs.NewDataLocation(uuid.NewString()+"-deletes.puffin")); err != nil {
		return nil, nil, err
	}
	// A position deleted before (a key deleted, then inserted again) is
	// found again; the vectors' cardinalities count each row once.
	for _, f := range add {
		d.Found += f.Count()
	}
	for _, f := range remove {
		d.Found -= f.Count()
	}
	return add, remove, nil
}

// earlierVector is a deletion vector the table has for a data file holding
// rows the batch replaces.
type earlierVector struct {
	data   iceberg.DataFile // the data file it deletes from
	dv     iceberg.DataFile
	bitmap *dv.RoaringPositionBitmap
}

// readEarlier reads the deletion vectors of the data files found. A
// batch's vectors share one Puffin file, whose footer lists them all: they
// are read by Puffin file, each footer once.
func readEarlier(fs iceio.IO, found []hits) ([]earlierVector, error) {
	byPuffin := map[string][]earlierVector{}
	for _, h := range found {
		for _, old := range h.task.DeletionVectorFiles {
			byPuffin[old.FilePath()] = append(byPuffin[old.FilePath()], earlierVector{data: h.task.File, dv: old})
		}
	}
	var out []earlierVector
	for _, path := range slices.Sorted(maps.Keys(byPuffin)) {
		olds := byPuffin[path]
		dvs := make([]iceberg.DataFile, len(olds))
		for i, o := range olds {
			dvs[i] = o.dv
		}
		bms, err := dv.ReadDVs(fs, dvs)
		if err != nil {
			return nil, fmt.Errorf("read the deletion vectors in %s: %w", path, err)
		}
		for i := range olds {
			olds[i].bitmap = bms[i]
		}
		out = append(out, olds...)
	}
	return out, nil
}

// equality writes the batch's keys as equality deletes. On a partitioned
// table each delete applies to one partition only, so the key must fix
// the partition: every partition source column must be a key column.
func (d *Deletes) equality(ctx context.Context, txn *table.Transaction, tbl *table.Table, keyIDs []int) ([]iceberg.DataFile, error) {
	if err := CheckTable(tbl, d.Keys); err != nil {
		return nil, err
	}
	keySchema, err := tbl.Schema().Select(true, d.Keys...)
	if err != nil {
		return nil, err
	}
	out, err := table.SchemaToArrowSchema(keySchema, nil, false, false)
	if err != nil {
		return nil, err
	}
	recs, err := d.Changes.KeyRecords(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	name := ingest.JoinIdent(tbl.Identifier())
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			c, err := conform.NewConformer(name, r.Schema(), out, conform.Options{AllowNullable: true, AllowReorder: true})
			if err != nil {
				yield(nil, err)
				return
			}
			rec, err := c.Conform(ctx, r, -1)
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
	// iceberg-go's writer makes every bloom filter its maximum size (1 MiB
	// by default): write through the transaction's table as it stands,
	// with the maximum cut to what the batch's keys need.
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, err
	}
	sized, err := write.BloomSizedFor(staged.Table, int64(d.Changes.Keys()))
	if err != nil {
		return nil, err
	}
	return sized.NewTransaction().WriteEqualityDeletes(ctx, keyIDs, iter.Seq2[arrow.RecordBatch, error](seq))
}
