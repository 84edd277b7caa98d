package maintenance

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/scan"
)

// TaskConvertEqualityDeletes is the conversion's name, as the CLI spells
// it (Flink's ConvertEqualityDeletes).
const TaskConvertEqualityDeletes = "convert-equality-deletes"

// ConvertResult reports a conversion of equality deletes into deletion
// vectors.
type ConvertResult struct {
	// RemovedEqualityDeleteFiles were converted (or applied to no row);
	// KeptEqualityDeleteFiles still apply to data files without row
	// lineage, which rewrite-data-files applies them to.
	RemovedEqualityDeleteFiles int `json:"removed_equality_delete_files"`
	KeptEqualityDeleteFiles    int `json:"kept_equality_delete_files"`
	// DataFiles got a new deletion vector holding DeletedRows rows the
	// equality deletes deleted.
	DataFiles   int     `json:"data_files"`
	DeletedRows int64   `json:"deleted_rows"`
	Snapshots   []int64 `json:"snapshot_ids"`
}

// ConvertEqualityDeletes turns the live equality deletes of a format v3
// table into deletion vectors: for each data file an equality delete
// applies to (a lower data sequence number, a matching partition), it
// finds the rows it deletes and merges their positions into the file's
// deletion vector, and removes the equality delete files, in one atomic
// commit. Reads then skip rows by position instead of matching every row
// against every key. Format v1 and v2 tables are refused (ErrConfig):
// deletion vectors need v3.
//
// Positions are found by row id (v3 row lineage): the rows a file keeps
// once the equality deletes are applied, against all of its rows. A
// concurrent commit makes the conversion start over on fresh metadata.
func ConvertEqualityDeletes(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (ConvertResult, error) {
	var res ConvertResult
	name := strings.Join(ident, ".")
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return res, fmt.Errorf("load table %s: %w", name, err)
	}
	if v := tbl.Metadata().Version(); v < 3 {
		return res, fmt.Errorf("%w: table %s is format v%d, and deletion vectors need format v3; "+
			"apply its equality deletes with `floe maintain rewrite-data-files %s --delete-file-threshold 1` instead", ingest.ErrConfig, name, v, name)
	}
	if tbl.CurrentSnapshot() == nil {
		return res, nil
	}
	committed, err := Commit(ctx, cat, ident, func(cur *table.Table) (*table.Transaction, error) {
		res = ConvertResult{}
		return convertTransaction(ctx, cur, &res)
	})
	if err != nil {
		return ConvertResult{}, fmt.Errorf("convert the equality deletes of %s: %w", name, err)
	}
	if res.RemovedEqualityDeleteFiles > 0 {
		res.Snapshots = append(res.Snapshots, committed.CurrentSnapshot().SnapshotID)
	}
	return res, nil
}

// convertTransaction stages the conversion on tbl: a row delta with the
// new deletion vectors (replacing the files' old ones), then a rewrite
// removing the equality deletes, committed together.
func convertTransaction(ctx context.Context, tbl *table.Table, res *ConvertResult) (*table.Transaction, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the files: %w", err)
	}
	// One deletion vector a file: its split tasks are one task here.
	tasks = scan.WholeFiles(tasks)
	w, err := newDVWriter(fs, tbl.Metadata())
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	var old []iceberg.DataFile
	for _, t := range tasks {
		if len(t.EqualityDeleteFiles) == 0 {
			continue
		}
		if t.FirstRowID == nil {
			for _, e := range t.EqualityDeleteFiles {
				keep[e.FilePath()] = true
			}
			continue
		}
		whole := table.FileScanTask{File: t.File, Start: 0, Length: t.File.FileSizeBytes(), FirstRowID: t.FirstRowID}
		all, err := rowIDs(ctx, tbl, whole)
		if err != nil {
			return nil, err
		}
		whole.EqualityDeleteFiles = t.EqualityDeleteFiles
		kept, err := rowIDs(ctx, tbl, whole)
		if err != nil {
			return nil, err
		}
		// The kept rows come in file order: the others are deleted.
		var gone []int64
		j := 0
		for p, id := range all {
			if j < len(kept) && kept[j] == id {
				j++
				continue
			}
			gone = append(gone, int64(p))
		}
		if len(gone) == 0 {
			continue
		}
		for _, d := range t.DeletionVectorFiles {
			bm, err := dv.ReadDV(fs, d)
			if err != nil {
				return nil, fmt.Errorf("read deletion vector %s: %w", d.FilePath(), err)
			}
			w.Load(t.File.FilePath(), bm, t.File.SpecID(), t.File.Partition())
			old = append(old, d)
		}
		if err := w.Add(t.File.FilePath(), gone, t.File.SpecID(), t.File.Partition()); err != nil {
			return nil, err
		}
		res.DataFiles++
		res.DeletedRows += int64(len(gone))
	}
	live, err := liveDeletes(fs, tbl.CurrentSnapshot())
	if err != nil {
		return nil, err
	}
	var eqs []iceberg.DataFile
	for _, d := range live {
		if d.file.ContentType() != iceberg.EntryContentEqDeletes {
			continue
		}
		if keep[d.file.FilePath()] {
			res.KeptEqualityDeleteFiles++
			continue
		}
		eqs = append(eqs, d.file)
	}
	if len(eqs) == 0 {
		return nil, nil
	}
	res.RemovedEqualityDeleteFiles = len(eqs)
	props := iceberg.Properties{ingest.SummaryMaintenance: TaskConvertEqualityDeletes}
	tx := tbl.NewTransaction()
	if res.DataFiles > 0 {
		files, err := w.Flush(ctx, dvLocation(tbl))
		if err != nil {
			return nil, fmt.Errorf("write deletion vectors: %w", err)
		}
		if err := tx.NewRowDelta(props).AddDeletes(files...).RemoveDeletes(old...).Commit(ctx); err != nil {
			return nil, fmt.Errorf("stage the deletion vectors: %w", err)
		}
	}
	rw := tx.NewRewrite(props)
	for _, f := range eqs {
		rw.DeleteFile(f)
	}
	if err := rw.Commit(ctx); err != nil {
		return nil, fmt.Errorf("stage the removal of equality deletes: %w", err)
	}
	return tx, nil
}

// rowIDs reads the row ids of a task's rows, with the deletes it carries
// applied, in file order.
func rowIDs(ctx context.Context, tbl *table.Table, t table.FileScanTask) ([]int64, error) {
	_, recs, err := tbl.Scan(table.WithRowLineage()).ReadTasks(ctx, []table.FileScanTask{t})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.File.FilePath(), err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", t.File.FilePath(), err)
		}
		idx := rec.Schema().FieldIndices("_row_id")
		if len(idx) != 1 {
			rec.Release()
			return nil, fmt.Errorf("read %s: no _row_id column", t.File.FilePath())
		}
		col, ok := rec.Column(idx[0]).(*array.Int64)
		if !ok || col.NullN() > 0 {
			rec.Release()
			return nil, fmt.Errorf("read %s: row ids missing", t.File.FilePath())
		}
		ids = append(ids, col.Int64Values()...)
		rec.Release()
	}
	return ids, nil
}
