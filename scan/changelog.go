package scan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// The changelog's columns and change types, as Spark's changelog view
// (create_changelog_view) names them.
const (
	ChangeTypeColumn     = "_change_type"
	ChangeOrdinalColumn  = "_change_ordinal"
	CommitSnapshotColumn = "_commit_snapshot_id"

	ChangeInsert       = "INSERT"
	ChangeDelete       = "DELETE"
	ChangeUpdateBefore = "UPDATE_BEFORE"
	ChangeUpdateAfter  = "UPDATE_AFTER"
)

// ChangelogOptions choose the snapshots a changelog covers and how its
// rows are read.
type ChangelogOptions struct {
	// FromSnapshot is where the changelog starts, exclusive: its changes
	// are not in it (Spark's start-snapshot-id); 0 is before the table's
	// oldest snapshot. ToSnapshot is where it ends, inclusive; 0 is the
	// current snapshot.
	FromSnapshot, ToSnapshot int64
	// Identifier are the columns that identify a row, which pair a delete
	// and an insert of one snapshot into an update; nil takes the table's
	// identifier fields. Without any, changes are inserts and deletes.
	Identifier []string
	// Read are the filter and the columns (Filter, Columns, Drop).
	Read Options
}

// Changelog reads the row-level changes of the table's snapshots after
// FromSnapshot up to ToSnapshot, in commit order along the main history:
// each row the snapshot added (INSERT) or removed (DELETE), whether by new
// data files, deletion vectors, position or equality deletes, or files it
// removed; a delete and an insert of one identifier in one snapshot are an
// UPDATE_BEFORE and UPDATE_AFTER pair. A row removed and added unchanged
// (a rewrite) is no change, and replace snapshots (compactions) have
// none. Each row carries its change type, the snapshot's ordinal in the
// changelog (from 0) and the snapshot's id.
func Changelog(ctx context.Context, tbl *table.Table, o ChangelogOptions) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	snaps, err := changelogSnapshots(tbl, o.FromSnapshot, o.ToSnapshot)
	if err != nil {
		return nil, nil, err
	}
	cr, err := NewChangeReader(ctx, tbl, o.Identifier, o.Read)
	if err != nil {
		return nil, nil, err
	}
	return cr.Schema(), func(yield func(arrow.RecordBatch, error) bool) {
		for i, snap := range snaps {
			recs, err := cr.Changes(ctx, tbl, snap, i)
			if err != nil {
				yield(nil, err)
				return
			}
			for j, rec := range recs {
				if !yield(rec, nil) {
					for _, r := range recs[j+1:] {
						r.Release()
					}
					return
				}
			}
		}
	}, nil
}

// changelogSnapshots are the snapshots of the main history after from
// (exclusive, 0 for all) up to to (inclusive, 0 for the current one),
// oldest first, without replace snapshots.
func changelogSnapshots(tbl *table.Table, from, to int64) ([]*table.Snapshot, error) {
	name := strings.Join(tbl.Identifier(), ".")
	end := tbl.CurrentSnapshot()
	if to != 0 {
		if end = tbl.SnapshotByID(to); end == nil {
			return nil, fmt.Errorf("%w: table %s has no snapshot %d (floe table snapshots lists them)", ingest.ErrConfig, name, to)
		}
	}
	if end == nil {
		return nil, nil
	}
	if from != 0 && tbl.SnapshotByID(from) == nil {
		return nil, fmt.Errorf("%w: table %s has no snapshot %d (floe table snapshots lists them; an expired one cannot start a changelog)", ingest.ErrConfig, name, from)
	}
	var chain []*table.Snapshot
	for snap := end; snap != nil && snap.SnapshotID != from; {
		chain = append(chain, snap)
		if snap.ParentSnapshotID == nil {
			if from != 0 {
				return nil, fmt.Errorf("%w: table %s: snapshot %d is not an ancestor of snapshot %d, so no changelog leads from one to the other", ingest.ErrConfig, name, from, end.SnapshotID)
			}
			break
		}
		parent := tbl.SnapshotByID(*snap.ParentSnapshotID)
		if parent == nil && (from != 0 || *snap.ParentSnapshotID != 0) {
			return nil, fmt.Errorf("%w: table %s: snapshot %d, the parent of %d, was expired, so the changes between them cannot be read; start the changelog after it (--from-snapshot %d)",
				ingest.ErrConfig, name, *snap.ParentSnapshotID, snap.SnapshotID, snap.SnapshotID)
		}
		snap = parent
	}
	slices.Reverse(chain)
	// Compactions change no row, and Spark's changelog leaves them out of
	// the ordinals too.
	return slices.DeleteFunc(chain, func(s *table.Snapshot) bool { return s.Summary != nil && s.Summary.Operation == table.OpReplace }), nil
}

// ChangeReader reads the changes of one snapshot at a time, in the
// table's current schema: Changelog's reader, and the Iceberg source's in
// a changelog stream.
type ChangeReader struct {
	tbl    *table.Table
	rd     *FileReader
	schema *arrow.Schema // the changelog's: the rows' and the three columns
	ident  []int         // the identifier columns' indexes in the rows

	// planned is the last snapshot's plan: the next snapshot's parent, which
	// a changelog read in order would otherwise plan twice.
	mu      sync.Mutex
	planned struct {
		id    int64
		tasks map[string]table.FileScanTask
	}
}

// NewChangeReader reads tbl's changes, identifier (nil for the table's
// identifier fields) pairing deletes and inserts into updates.
func NewChangeReader(ctx context.Context, tbl *table.Table, identifier []string, o Options) (*ChangeReader, error) {
	rd, err := NewFileReader(ctx, tbl, o)
	if err != nil {
		return nil, err
	}
	rows := rd.Schema()
	if identifier == nil {
		for _, id := range tbl.Schema().IdentifierFieldIDs {
			if f, ok := tbl.Schema().FindFieldByID(id); ok {
				identifier = append(identifier, f.Name)
			}
		}
	}
	cr := &ChangeReader{tbl: tbl, rd: rd}
	for _, name := range identifier {
		idx := rows.FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("%w: identifier column %q is not among the columns read (%s); read it, or name other identifier columns", ingest.ErrConfig, name, strings.Join(fieldNames(rows), ", "))
		}
		cr.ident = append(cr.ident, idx[0])
	}
	for _, name := range []string{ChangeTypeColumn, ChangeOrdinalColumn, CommitSnapshotColumn} {
		if len(rows.FieldIndices(name)) > 0 {
			return nil, fmt.Errorf("%w: the table has a column %s, which the changelog adds; leave it out with drop", ingest.ErrConfig, name)
		}
	}
	cr.schema = arrow.NewSchema(append(rows.Fields(),
		arrow.Field{Name: ChangeTypeColumn, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: ChangeOrdinalColumn, Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: CommitSnapshotColumn, Type: arrow.PrimitiveTypes.Int64}), nil)
	return cr, nil
}

func fieldNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// Schema is the changelog's: the rows' columns, then _change_type,
// _change_ordinal and _commit_snapshot_id.
func (c *ChangeReader) Schema() *arrow.Schema { return c.schema }

// Changes are the row changes snap made to its parent, with ordinal as
// their _change_ordinal; tbl is the table as loaded now, which knows snap
// (a stream's reader outlives the table it was made from).
func (c *ChangeReader) Changes(ctx context.Context, tbl *table.Table, snap *table.Snapshot, ordinal int) ([]arrow.RecordBatch, error) {
	if snap.Summary != nil && snap.Summary.Operation == table.OpReplace {
		return nil, nil
	}
	name := strings.Join(c.tbl.Identifier(), ".")
	after, err := c.plan(ctx, tbl, snap.SnapshotID)
	if err != nil {
		return nil, fmt.Errorf("table %s: plan snapshot %d: %w", name, snap.SnapshotID, err)
	}
	var before map[string]table.FileScanTask
	if snap.ParentSnapshotID != nil {
		if before, err = c.plan(ctx, tbl, *snap.ParentSnapshotID); err != nil {
			return nil, fmt.Errorf("table %s: plan snapshot %d, the parent of %d: %w", name, *snap.ParentSnapshotID, snap.SnapshotID, err)
		}
	}
	// Only files whose rows the snapshot may have changed are read: added
	// or removed ones, and ones whose deletes changed.
	var was, is []table.FileScanTask
	for path, t := range before {
		if u, ok := after[path]; !ok || deleteSet(u) != deleteSet(t) {
			was = append(was, t)
		}
	}
	for path, t := range after {
		if u, ok := before[path]; !ok || deleteSet(u) != deleteSet(t) {
			is = append(is, t)
		}
	}
	sortTasks(was)
	sortTasks(is)
	old, err := c.read(ctx, was)
	if err != nil {
		return nil, fmt.Errorf("table %s: read snapshot %d's parent: %w", name, snap.SnapshotID, err)
	}
	defer old.Release()
	cur, err := c.read(ctx, is)
	if err != nil {
		return nil, fmt.Errorf("table %s: read snapshot %d: %w", name, snap.SnapshotID, err)
	}
	defer cur.Release()
	return c.diff(old, cur, int32(ordinal), snap.SnapshotID)
}

// plan is the whole-file tasks of a snapshot, with the deletes that apply
// to each, by data file path.
func (c *ChangeReader) plan(ctx context.Context, tbl *table.Table, id int64) (map[string]table.FileScanTask, error) {
	c.mu.Lock()
	if c.planned.id == id && c.planned.tasks != nil {
		defer c.mu.Unlock()
		return c.planned.tasks, nil
	}
	c.mu.Unlock()
	tasks, err := tbl.Scan(table.WithSnapshotID(id)).PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]table.FileScanTask{}
	for _, t := range WholeFiles(tasks) {
		out[t.File.FilePath()] = t
	}
	c.mu.Lock()
	c.planned.id, c.planned.tasks = id, out
	c.mu.Unlock()
	return out, nil
}

// deleteSet names the delete files that apply to a task.
func deleteSet(t table.FileScanTask) string {
	var paths []string
	for _, fs := range [][]string{pathsOf(t.DeleteFiles), pathsOf(t.EqualityDeleteFiles), pathsOf(t.DeletionVectorFiles)} {
		paths = append(paths, fs...)
	}
	slices.Sort(paths)
	return strings.Join(paths, "\n")
}

func pathsOf(files []iceberg.DataFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.FilePath()
	}
	return out
}

func sortTasks(ts []table.FileScanTask) {
	slices.SortFunc(ts, func(a, b table.FileScanTask) int { return strings.Compare(a.File.FilePath(), b.File.FilePath()) })
}

// read reads tasks' live rows into one record (nil when there are none).
func (c *ChangeReader) read(ctx context.Context, tasks []table.FileScanTask) (arrow.RecordBatch, error) {
	schema := c.rd.Schema()
	if len(tasks) == 0 {
		return emptyRecord(schema), nil
	}
	rr := c.rd.Open(ctx, tasks)
	defer rr.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return emptyRecord(schema), nil
	}
	tbl := array.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i := range cols {
		a, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = a
	}
	return array.NewRecordBatch(schema, cols, tbl.NumRows()), nil
}

func emptyRecord(schema *arrow.Schema) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
	}
	rec := array.NewRecordBatch(schema, cols, 0)
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// change is one row of the changelog: a row of the parent's (old) or the
// snapshot's (cur) live rows.
type change struct {
	cur  bool
	row  int
	kind string
}

// diff pairs the rows live before and after: equal rows on both sides are
// unchanged (a file rewritten, a deletion vector re-written), the rest
// deletes and inserts, and a delete and an insert of one identifier an
// update.
func (c *ChangeReader) diff(old, cur arrow.RecordBatch, ordinal int32, snapshot int64) ([]arrow.RecordBatch, error) {
	key := func(rec arrow.RecordBatch, row int, cols []int) string {
		var b strings.Builder
		for _, i := range cols {
			v := "\x00null"
			if col := rec.Column(i); col.IsValid(row) {
				v = col.ValueStr(row)
			}
			fmt.Fprintf(&b, "%d:%s|", len(v), v)
		}
		return b.String()
	}
	all := make([]int, old.NumCols())
	for i := range all {
		all[i] = i
	}
	oldRows := map[string][]int{}
	for r := 0; r < int(old.NumRows()); r++ {
		k := key(old, r, all)
		oldRows[k] = append(oldRows[k], r)
	}
	var inserted []int
	for r := 0; r < int(cur.NumRows()); r++ {
		k := key(cur, r, all)
		if rows := oldRows[k]; len(rows) > 0 {
			oldRows[k] = rows[1:]
			continue
		}
		inserted = append(inserted, r)
	}
	var deleted []int
	for _, rows := range oldRows {
		deleted = append(deleted, rows...)
	}
	slices.Sort(deleted)
	var out []change
	if len(c.ident) > 0 {
		byKey := map[string][]int{}
		for _, r := range inserted {
			k := key(cur, r, c.ident)
			byKey[k] = append(byKey[k], r)
		}
		paired := map[int]bool{}
		for _, r := range deleted {
			k := key(old, r, c.ident)
			if rows := byKey[k]; len(rows) > 0 {
				byKey[k] = rows[1:]
				paired[rows[0]] = true
				out = append(out, change{row: r, kind: ChangeUpdateBefore}, change{cur: true, row: rows[0], kind: ChangeUpdateAfter})
				continue
			}
			out = append(out, change{row: r, kind: ChangeDelete})
		}
		for _, r := range inserted {
			if !paired[r] {
				out = append(out, change{cur: true, row: r, kind: ChangeInsert})
			}
		}
	} else {
		for _, r := range deleted {
			out = append(out, change{row: r, kind: ChangeDelete})
		}
		for _, r := range inserted {
			out = append(out, change{cur: true, row: r, kind: ChangeInsert})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return c.changeRecords(old, cur, out, ordinal, snapshot)
}

// changeRecords builds the changelog rows of changes, at most BatchRows a
// record.
func (c *ChangeReader) changeRecords(old, cur arrow.RecordBatch, changes []change, ordinal int32, snapshot int64) ([]arrow.RecordBatch, error) {
	both, err := concatRecords(old, cur)
	if err != nil {
		return nil, err
	}
	defer both.Release()
	var out []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, r := range out {
			r.Release()
		}
		return nil, err
	}
	const batchRows = 64 * 1024
	for len(changes) > 0 {
		n := min(len(changes), batchRows)
		idx := array.NewInt64Builder(memory.DefaultAllocator)
		kinds := array.NewStringBuilder(memory.DefaultAllocator)
		for _, ch := range changes[:n] {
			r := int64(ch.row)
			if ch.cur {
				r += old.NumRows()
			}
			idx.Append(r)
			kinds.Append(ch.kind)
		}
		changes = changes[n:]
		ia, ka := idx.NewArray(), kinds.NewArray()
		idx.Release()
		kinds.Release()
		taken, err := compute.Take(context.Background(), *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(both), compute.NewDatumWithoutOwning(ia))
		ia.Release()
		if err != nil {
			ka.Release()
			return fail(fmt.Errorf("gather the changed rows: %w", err))
		}
		rows := taken.(*compute.RecordDatum).Value
		ord, err := scalar.MakeArrayFromScalar(scalar.NewInt32Scalar(ordinal), n, memory.DefaultAllocator)
		if err != nil {
			rows.Release()
			ka.Release()
			return fail(err)
		}
		snap, err := scalar.MakeArrayFromScalar(scalar.NewInt64Scalar(snapshot), n, memory.DefaultAllocator)
		if err != nil {
			rows.Release()
			ka.Release()
			ord.Release()
			return fail(err)
		}
		cols := append(slices.Clone(rows.Columns()), ka, ord, snap)
		out = append(out, array.NewRecordBatch(c.schema, cols, int64(n)))
		rows.Release()
		for _, a := range cols[len(cols)-3:] {
			a.Release()
		}
	}
	return out, nil
}

// concatRecords is a's rows, then b's.
func concatRecords(a, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if !a.Schema().Equal(b.Schema()) {
		return nil, errors.New("the snapshot and its parent were read with different columns")
	}
	cols := make([]arrow.Array, a.NumCols())
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{a.Column(i), b.Column(i)}, memory.DefaultAllocator)
		if err != nil {
			for _, x := range cols[:i] {
				x.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(a.Schema(), cols, a.NumRows()+b.NumRows())
	for _, x := range cols {
		x.Release()
	}
	return rec, nil
}
