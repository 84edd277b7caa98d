package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// This file reads the common data file directly: a whole Parquet file
// with no deletes, every row of which the scan returns, holding each
// selected column under its field id with the type the scan yields. Such a
// file needs none of what iceberg-go's reader does per task (schema
// projection, residual filter, deletes), and iceberg-go reads each column
// chunk into a buffer the Go heap allocates and collects, which was most
// of a full scan's CPU once the records themselves were pooled. Any other
// file, or one that turns out not to qualify when its footer is read, is
// read by iceberg-go as before.

// directBufferBytes is the read buffer of each column chunk: column
// chunks are streamed through it instead of read whole into memory.
const directBufferBytes = 256 << 10

// directIDs are the field ids of the read schema's columns (proj's
// fields, in schema's order) when every one is primitive, so that files may
// be read directly; nil otherwise.
func directIDs(proj *iceberg.Schema, schema *arrow.Schema) []int {
	fields := proj.Fields()
	if len(fields) != schema.NumFields() || len(fields) == 0 {
		return nil
	}
	ids := make([]int, len(fields))
	for i, f := range fields {
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok || schema.Field(i).Name != f.Name {
			return nil
		}
		if _, nested := schema.Field(i).Type.(arrow.NestedType); nested {
			return nil
		}
		ids[i] = f.ID
	}
	return ids
}

func arrowFieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil
}

// direct tells whether the task may be read directly: its file is whole,
// Parquet, without deletes, and all its rows match (no filter, or a
// residual the plan proved always true).
func (r *tableReader) direct(task table.FileScanTask, filtered bool) bool {
	if r.directIDs == nil || task.File.FileFormat() != iceberg.ParquetFile {
		return false
	}
	if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
		return false
	}
	if task.Start != 0 || (task.Length != 0 && task.Length < task.File.FileSizeBytes()) {
		return false
	}
	return !filtered || (task.Residual != nil && task.Residual.Equals(iceberg.AlwaysTrue{}))
}

// errNotDirect: the file's footer shows it must be read by iceberg-go.
var errNotDirect = errors.New("not directly readable")

// readDirect reads tasks, which direct accepted, runtime.GOMAXPROCS at a
// time, and yields their records in task order; a task whose footer shows
// it does not qualify is read as iceberg-go reads it. It stops at the
// first error or when yield returns false, and reports whether it read
// everything.
func (r *tableReader) readDirect(ctx context.Context, tasks []table.FileScanTask, yield func(arrow.RecordBatch, error) bool) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type item struct {
		rec arrow.RecordBatch
		err error
	}
	outs := make([]chan item, len(tasks))
	for i := range outs {
		outs[i] = make(chan item, 2)
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	go func() {
		for i, task := range tasks {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for _, out := range outs[i:] {
					close(out)
				}
				return
			}
			go func() {
				defer func() { <-sem; close(outs[i]) }()
				send := func(rec arrow.RecordBatch, err error) bool {
					select {
					case outs[i] <- item{rec, err}:
						return err == nil
					case <-ctx.Done():
						if rec != nil {
							rec.Release()
						}
						return false
					}
				}
				err := r.readFile(ctx, task, send)
				if errors.Is(err, errNotDirect) {
					err = readWith(ctx, r.scan, task, send)
				}
				if err != nil {
					send(nil, fmt.Errorf("read %s: %w", task.File.FilePath(), err))
				}
			}()
		}
	}()
	// On an early return the workers see ctx cancelled; what they had
	// sent is released here.
	defer func() {
		cancel()
		for _, out := range outs {
			for it := range out {
				if it.rec != nil {
					it.rec.Release()
				}
			}
		}
	}()
	for _, out := range outs {
		for it := range out {
			if !yield(it.rec, it.err) || it.err != nil {
				return false
			}
		}
	}
	return true
}

// readWith reads one task with iceberg-go.
func readWith(ctx context.Context, sc *table.Scan, task table.FileScanTask, send func(arrow.RecordBatch, error) bool) error {
	_, recs, err := sc.ReadTasks(ctx, []table.FileScanTask{task})
	if err != nil {
		return err
	}
	for rec, err := range recs {
		if err != nil {
			return err
		}
		if !send(rec, nil) {
			return nil
		}
	}
	return nil
}

// readFile reads one file's selected columns into r.schema's records, or
// returns errNotDirect before reading any row when the file holds one of
// them otherwise than the scan yields it.
func (r *tableReader) readFile(ctx context.Context, task table.FileScanTask, send func(arrow.RecordBatch, error) bool) error {
	fsys, err := r.rt.tbl.FS(ctx)
	if err != nil {
		return err
	}
	f, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return err
	}
	defer f.Close()
	alloc := r.alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	props := parquet.NewReaderProperties(alloc)
	props.BufferedStreamEnabled = true
	props.BufferSize = directBufferBytes
	pf, err := file.NewParquetReader(f, file.WithReadProps(props))
	if err != nil {
		return err
	}
	defer pf.Close()
	cols := make([]int, 0, len(r.directIDs))
	at := map[int]int{} // field id -> position in r.schema
	for i, id := range r.directIDs {
		at[id] = i
	}
	sch := pf.MetaData().Schema
	for c := range sch.NumColumns() {
		col := sch.Column(c)
		if _, ok := at[int(col.SchemaNode().FieldID())]; ok && len(col.ColumnPath()) == 1 {
			cols = append(cols, c)
		}
	}
	if len(cols) != len(r.directIDs) {
		return errNotDirect // a column is absent, nested or repeated
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, alloc)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	// Where each column read goes in r.schema, checked against its type.
	pos := make([]int, len(cols))
	for i, fld := range rr.Schema().Fields() {
		id, ok := arrowFieldID(fld)
		j, found := at[id]
		if !ok || !found || !arrow.TypeEqual(fld.Type, r.schema.Field(j).Type) {
			return errNotDirect
		}
		pos[i] = j
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		out := make([]arrow.Array, len(pos))
		for i, j := range pos {
			out[j] = rec.Column(i)
		}
		if !send(array.NewRecordBatch(r.schema, out, rec.NumRows()), nil) {
			return nil
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
