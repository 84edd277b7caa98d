package scan

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// A data file may hold no column of the schema read: a file without field
// ids whose names the table's name mapping no longer gives any field, or
// one whose every column was dropped since. Iceberg Java reads its rows
// with every column NULL (or its default or identity-partition value);
// iceberg-go fails ("no leaf column readers matched"), having no column to
// read them by, so floe makes them from the file's row count.

// rowsIn counts the rows of task's part of the file whose footer is md:
// the row groups that start within it.
func rowsIn(md *metadata.FileMetaData, task table.FileScanTask) (int64, error) {
	if task.Start == 0 && task.Length >= task.File.FileSizeBytes() {
		return md.NumRows, nil
	}
	var n int64
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		start := rg.FileOffset()
		if rg.NumColumns() > 0 {
			cc, err := rg.ColumnChunk(0)
			if err != nil {
				return 0, fmt.Errorf("read Parquet footer of %s: %w", task.File.FilePath(), err)
			}
			start = cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < start {
				start = cc.DictionaryPageOffset()
			}
		}
		if start >= task.Start && start < task.Start+task.Length {
			n += rg.NumRows()
		}
	}
	return n, nil
}

// readNoColumn yields the rows of tr, whose file holds no column of the
// schema read, as tr.nullRows rows of nulls in the fixed scan's schema;
// raw then applies tr.fixes. A required column no fix fills cannot be
// read, as in iceberg-go; nor can rows a delete file may remove, since
// nothing identifies them.
func (r *tableReader) readNoColumn(ctx context.Context, tr taskRead) (iter.Seq2[arrow.RecordBatch, error], error) {
	if len(tr.task.DeleteFiles)+len(tr.task.EqualityDeleteFiles)+len(tr.task.DeletionVectorFiles) > 0 {
		return nil, fmt.Errorf("the data file holds no column of table %s's schema (no field id, and no name the name mapping gives a field), and delete files apply to it: which of its rows they delete cannot be known",
			ingest.JoinIdent(r.rt.tbl.Identifier()))
	}
	filled := map[int]bool{}
	for _, fx := range tr.fixes {
		if len(fx.path) == 1 {
			filled[fx.path[0]] = true
		}
	}
	for i, f := range r.fixedProj.Fields() {
		if f.Required && !filled[i] {
			return nil, fmt.Errorf("required column %s of table %s is missing from the data file and has no default value (Iceberg Java refuses it too: \"Missing required field\")",
				f.Name, ingest.JoinIdent(r.rt.tbl.Identifier()))
		}
	}
	mem := compute.GetAllocator(ctx)
	cols := make([]arrow.Array, r.fixedSchema.NumFields())
	for i, f := range r.fixedSchema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, int(tr.nullRows))
		defer cols[i].Release()
	}
	rec := array.NewRecordBatch(r.fixedSchema, cols, tr.nullRows)
	return func(yield func(arrow.RecordBatch, error) bool) {
		if tr.nullRows == 0 {
			rec.Release()
			return
		}
		yield(rec, nil)
	}, nil
}
