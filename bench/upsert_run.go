package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/scan"
)

// UpsertTable is one contender's table: the dataset's base rows ingested
// by floe (one append, not measured) into a new warehouse under Work, so
// that every contender starts from the same data files.
type UpsertTable struct {
	Dataset       UpsertDataset
	FormatVersion int
	Work          string
	Catalog       catalog.Catalog
}

// NewUpsertTable ingests dir's Parquet files (by default the dataset's
// base rows) into a new table of the given format version keyed by id.
func NewUpsertTable(ctx context.Context, ds UpsertDataset, dir string, formatVersion int, work string) (*UpsertTable, error) {
	cfg, err := sourceConfig(dir, work, 0)
	if err != nil {
		return nil, err
	}
	cfg.Checkpoint = filepath.Join(work, "checkpoint-base")
	cfg.Sink.FormatVersion = formatVersion
	cfg.Sink.IdentifierFields = []string{"id"}
	cat, _, err := runFloe(ctx, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", dir, err)
	}
	return &UpsertTable{Dataset: ds, FormatVersion: formatVersion, Work: work, Catalog: cat}, nil
}

// Close closes the catalog; the warehouse stays for the caller to remove.
func (t *UpsertTable) Close() { closeCatalog(t.Catalog) }

// Load loads the table as it is now.
func (t *UpsertTable) Load(ctx context.Context) (*table.Table, error) {
	return t.Catalog.LoadTable(ctx, benchTable)
}

// UpsertRun is one contender applying every change file of the dataset,
// one batch (and one commit) per file.
type UpsertRun struct {
	Contender     string
	FormatVersion int
	// Times holds each batch's time, in batch order.
	Times []time.Duration
	// Cost is the whole run's, opening included.
	Cost
	Changes int
	// Files are the table's live files afterwards.
	Files TableFiles
}

// Latency is the run's batch times as a series.
func (r UpsertRun) Latency() Latency { return Latency{Name: r.Contender, Times: r.Times} }

// UpsertContender is one way of applying the change files to a table.
type UpsertContender struct {
	Name string
	Run  func(ctx context.Context, t *UpsertTable) (UpsertRun, error)
}

// UpsertContenders are measured side by side by BenchmarkUpsert, in this
// order, on a format-version 3 table and then on a format-version 2 one.
var UpsertContenders = []UpsertContender{
	{Name: "floe", Run: FloeUpsert},
	{Name: "iceberg-go", Run: IcebergGoUpsert},
}

// FloeUpsert runs a floe pipeline in mode upsert keyed by id with the op
// column, available-now with max-files-per-trigger 1: one batch per
// change file. A batch's time is its progress record's
// DurationMs.TriggerExecution (whole milliseconds): planning, reading the
// file, writing the winning rows, finding and deleting the rows they
// replace, the commit and the checkpoint.
func FloeUpsert(ctx context.Context, t *UpsertTable) (UpsertRun, error) {
	run := UpsertRun{Contender: "floe", FormatVersion: t.FormatVersion, Changes: t.Dataset.Changes}
	cfg, err := sourceConfig(t.Dataset.ChangesDir, t.Work, 1)
	if err != nil {
		return run, err
	}
	cfg.Checkpoint = filepath.Join(t.Work, "checkpoint-upsert")
	cfg.Sink.Mode = "upsert"
	cfg.Sink.IdentifierFields = []string{"id"}
	cfg.Sink.CDC.OpColumn = "op"
	var warnings []string
	run.Cost, err = timed(ctx, func() error {
		p, err := floe.Open(ctx, cfg, floe.Options{Catalog: t.Catalog, Logger: quiet,
			OnWarning: func(w string) { warnings = append(warnings, w) },
			OnProgress: func(pr floe.Progress) {
				run.Times = append(run.Times, time.Duration(pr.DurationMs.TriggerExecution)*time.Millisecond)
			}})
		if err != nil {
			return err
		}
		_, err = p.Run(ctx)
		return errors.Join(err, p.Close())
	})
	if err == nil && len(warnings) > 0 {
		err = fmt.Errorf("floe warned: %s", strings.Join(warnings, "; "))
	}
	if err != nil {
		return run, fmt.Errorf("floe upsert: %w", err)
	}
	return run, run.finish(ctx, t)
}

// IcebergGoUpsert applies each change file with iceberg-go's public API
// alone: the file read, the last change of each key kept, then one
// transaction holding Transaction.Delete of `id IN (every key the file
// updates or deletes)` under write.delete.mode=merge-on-read (set on the
// table before the run) and Transaction.Append of the winning inserted and
// updated rows, committed. A batch's time is all of that.
func IcebergGoUpsert(ctx context.Context, t *UpsertTable) (UpsertRun, error) {
	run := UpsertRun{Contender: "iceberg-go", FormatVersion: t.FormatVersion, Changes: t.Dataset.Changes}
	tbl, err := t.Load(ctx)
	if err != nil {
		return run, err
	}
	txn := tbl.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		return run, err
	}
	if tbl, err = txn.Commit(ctx); err != nil {
		return run, fmt.Errorf("iceberg-go: set %s: %w", table.WriteDeleteModeKey, err)
	}
	run.Cost, err = timed(ctx, func() error {
		for _, p := range t.Dataset.ChangePaths {
			t0 := time.Now()
			next, err := icebergGoBatch(ctx, tbl, p)
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(p), err)
			}
			tbl = next
			run.Times = append(run.Times, time.Since(t0))
		}
		return nil
	})
	if err != nil {
		return run, fmt.Errorf("iceberg-go upsert: %w", err)
	}
	return run, run.finish(ctx, t)
}

// icebergGoBatch applies one change file to tbl in one transaction.
func icebergGoBatch(ctx context.Context, tbl *table.Table, path string) (*table.Table, error) {
	rec, err := readWhole(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	deleted, rows, err := lastChanges(ctx, rec)
	if err != nil {
		return nil, err
	}
	txn := tbl.NewTransaction()
	if len(deleted) > 0 {
		if err := txn.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), deleted...), nil); err != nil {
			if rows != nil {
				rows.Release()
			}
			return nil, fmt.Errorf("delete: %w", err)
		}
	}
	if rows != nil {
		rdr, err := array.NewRecordReader(rows.Schema(), []arrow.RecordBatch{rows})
		rows.Release()
		if err != nil {
			return nil, err
		}
		err = txn.Append(ctx, rdr, nil)
		rdr.Release()
		if err != nil {
			return nil, fmt.Errorf("append: %w", err)
		}
	}
	return txn.Commit(ctx)
}

// lastChanges reads a change file's record as the iceberg-go contender
// needs it: the keys its updates and deletes name (the rows to delete),
// and the last change of each key that is not a delete, without the op
// column (the rows to append); rows is nil when there are none.
func lastChanges(ctx context.Context, rec arrow.RecordBatch) (deleted []int64, rows arrow.RecordBatch, err error) {
	ids, ok1 := rec.Column(0).(*array.Int64)
	ops, ok2 := rec.Column(rec.Schema().NumFields() - 1).(*array.String)
	if !ok1 || !ok2 || rec.Schema().Field(rec.Schema().NumFields()-1).Name != "op" {
		return nil, nil, fmt.Errorf("change file schema %s: want id first and op last", rec.Schema())
	}
	n := int(rec.NumRows())
	last := make(map[int64]int, n)
	seen := make(map[int64]bool, n)
	for i := range n {
		id := ids.Value(i)
		last[id] = i
		if op := ops.Value(i); op != "c" && !seen[id] {
			seen[id] = true
			deleted = append(deleted, id)
		}
	}
	mask := make([]bool, n)
	kept := false
	for _, i := range last {
		if ops.Value(i) != "d" {
			mask[i], kept = true, true
		}
	}
	if !kept {
		return deleted, nil, nil
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(mask, nil)
	m := b.NewArray()
	defer m.Release()
	cols := rec.Columns()[:rec.Schema().NumFields()-1]
	sc := arrow.NewSchema(rec.Schema().Fields()[:len(cols)], nil)
	noOp := array.NewRecordBatch(sc, cols, rec.NumRows())
	defer noOp.Release()
	rows, err = compute.FilterRecordBatch(ctx, noOp, m, compute.DefaultFilterOptions())
	return deleted, rows, err
}

// finish checks the run's batch count and records the table's files.
func (r *UpsertRun) finish(ctx context.Context, t *UpsertTable) error {
	if len(r.Times) != t.Dataset.Batches {
		return fmt.Errorf("%s: %d batches timed, want %d", r.Contender, len(r.Times), t.Dataset.Batches)
	}
	tbl, err := t.Load(ctx)
	if err != nil {
		return err
	}
	r.Files, err = liveFiles(ctx, tbl)
	return err
}

// TableFiles counts a snapshot's live files by kind.
type TableFiles struct {
	Data, DeletionVectors, PositionDeletes, EqualityDeletes int
	// Snapshots is the number of snapshots the table holds.
	Snapshots int
}

// Deletes is the number of delete files of any kind.
func (f TableFiles) Deletes() int { return f.DeletionVectors + f.PositionDeletes + f.EqualityDeletes }

// DeleteKinds names the kinds of delete files present, for the report.
func (f TableFiles) DeleteKinds() string {
	var kinds []string
	for _, k := range []struct {
		n    int
		name string
	}{{f.DeletionVectors, "deletion vectors"}, {f.PositionDeletes, "position deletes"}, {f.EqualityDeletes, "equality deletes"}} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.name))
		}
	}
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, ", ")
}

// liveFiles counts the live files of tbl's current snapshot.
func liveFiles(ctx context.Context, tbl *table.Table) (TableFiles, error) {
	f := TableFiles{Snapshots: len(tbl.Metadata().Snapshots())}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return f, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return f, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return f, err
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return f, err
		}
		for _, e := range entries {
			df := e.DataFile()
			switch {
			case df.ContentType() == iceberg.EntryContentData:
				f.Data++
			case table.IsDeletionVector(df):
				f.DeletionVectors++
			case df.ContentType() == iceberg.EntryContentPosDeletes:
				f.PositionDeletes++
			default:
				f.EqualityDeletes++
			}
		}
	}
	return f, nil
}

// KeyedSumOf reads id and v of every row of the table's current snapshot
// with iceberg-go's own scanner (deletes applied by iceberg-go, not floe)
// and sums them as the oracle does.
func KeyedSumOf(ctx context.Context, tbl *table.Table) (KeyedSum, error) {
	var k KeyedSum
	_, recs, err := tbl.Scan(table.WithSelectedFields("id", "v")).ToArrowRecords(ctx)
	if err != nil {
		return k, err
	}
	for rec, err := range recs {
		if err != nil {
			return k, err
		}
		var ids *array.Int64
		var vs *array.Float64
		if idx := rec.Schema().FieldIndices("id"); len(idx) == 1 {
			ids, _ = rec.Column(idx[0]).(*array.Int64)
		}
		if idx := rec.Schema().FieldIndices("v"); len(idx) == 1 {
			vs, _ = rec.Column(idx[0]).(*array.Float64)
		}
		if ids == nil || vs == nil {
			schema := rec.Schema()
			rec.Release()
			return k, fmt.Errorf("records %s: want int64 id and float64 v", schema)
		}
		for i := range ids.Len() {
			k.add(ids.Value(i), vs.Value(i))
		}
		rec.Release()
	}
	return k, nil
}

// Check compares the contender's table with the oracle.
func (t *UpsertTable) Check(ctx context.Context, o *UpsertOracle) error {
	tbl, err := t.Load(ctx)
	if err != nil {
		return err
	}
	got, err := KeyedSumOf(ctx, tbl)
	if err != nil {
		return fmt.Errorf("read the table back: %w", err)
	}
	if got != o.KeyedSum {
		return fmt.Errorf("the table holds %d rows, (id, v) checksum %x; the oracle %d rows, checksum %x", got.Rows, got.Sum, o.Rows, o.Sum)
	}
	return nil
}

// UpsertScan is one full scan of a table with floe's scan.Table: every
// column of every row, counted and checksummed.
type UpsertScan struct {
	// Table says which table and in what state.
	Table string
	Rows  int64
	// Sum is an order-insensitive checksum of every column of every row.
	Sum   uint64
	Files TableFiles
	Cost
}

// FullScan reads every column of the table's current snapshot through
// scan.Table, timed, and counts and checksums the rows.
func FullScan(ctx context.Context, cat catalog.Catalog, name string) (UpsertScan, error) {
	s := UpsertScan{Table: name}
	tbl, err := cat.LoadTable(ctx, benchTable)
	if err != nil {
		return s, err
	}
	if s.Files, err = liveFiles(ctx, tbl); err != nil {
		return s, err
	}
	s.Cost, err = timed(ctx, func() error {
		_, recs, err := scan.Table(ctx, tbl, scan.Options{})
		if err != nil {
			return err
		}
		for rec, err := range recs {
			if err != nil {
				return err
			}
			hs, err := rowHashes(rec)
			if err != nil {
				rec.Release()
				return err
			}
			for _, h := range hs {
				s.Sum += h
			}
			s.Rows += rec.NumRows()
			rec.Release()
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("scan %s: %w", name, err)
	}
	return s, nil
}

// UpsertCompaction is maintenance.RewriteDataFiles on a table after the
// batches.
type UpsertCompaction struct {
	Table  string
	Result maintenance.RewriteResult
	Cost
}

// CompactUpsert rewrites the table's data files with the default options,
// which applies the deletes of every file it rewrites.
func CompactUpsert(ctx context.Context, t *UpsertTable, name string) (UpsertCompaction, error) {
	c := UpsertCompaction{Table: name}
	var err error
	c.Cost, err = timed(ctx, func() error {
		c.Result, err = maintenance.RewriteDataFiles(ctx, t.Catalog, benchTable, maintenance.RewriteOptions{})
		return err
	})
	if err != nil {
		return c, fmt.Errorf("compact %s: %w", name, err)
	}
	return c, nil
}

// FloeAppendChanges appends the change files, op column and all, with
// floe in mode append into a new table, one batch per file: floe's
// append rate on the same files and batch sizes as the upserts.
func FloeAppendChanges(ctx context.Context, ds UpsertDataset, work string) (UpsertRun, error) {
	run := UpsertRun{Contender: "floe append", Changes: ds.Changes}
	cfg, err := sourceConfig(ds.ChangesDir, work, 1)
	if err != nil {
		return run, err
	}
	var cat catalog.Catalog
	run.Cost, err = timed(ctx, func() error {
		cat, _, err = runFloe(ctx, cfg, func(pr floe.Progress) {
			run.Times = append(run.Times, time.Duration(pr.DurationMs.TriggerExecution)*time.Millisecond)
		})
		return err
	})
	if err != nil {
		return run, fmt.Errorf("floe append: %w", err)
	}
	defer closeCatalog(cat)
	res, err := tableResult(ctx, run.Contender, cat, Cost{})
	if err != nil {
		return run, err
	}
	if want := int64(ds.Batches * ds.Changes); res.Rows != want || len(run.Times) != ds.Batches {
		return run, fmt.Errorf("floe append: %d rows in %d batches, want %d in %d", res.Rows, len(run.Times), want, ds.Batches)
	}
	run.Files.Data = res.Files
	return run, nil
}
