package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// This file reads the files a scan reads as they are: no delete to apply,
// no row to filter, every column the scan selects stored in the file under
// its field id with the very Arrow type the scan yields. That is every
// file of a table floe alone writes, read without a filter or with one its
// partitions decide, and arrow-go reads it straight into the records
// iceberg-go would yield, without iceberg-go's per-file pipeline (the scan
// benchmark's one planned file: 0.87 ms read directly, 1.6 ms through
// ReadTasks). Any other file, or one whose columns differ, iceberg-go
// reads.

// directColumns is how r reads a file directly: the scan's columns, all of
// them top-level primitives of the table, by field id in the order of
// r.schema; nil when r's reads never can be direct.
func directColumns(proj *iceberg.Schema, schema *arrow.Schema) []int {
	if len(proj.Fields()) != schema.NumFields() || schema.NumFields() == 0 {
		return nil
	}
	ids := make([]int, 0, schema.NumFields())
	for i, f := range proj.Fields() {
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok || f.ID >= metadataFieldIDs {
			return nil
		}
		if _, nested := schema.Field(i).Type.(arrow.NestedType); nested {
			return nil
		}
		ids = append(ids, f.ID)
	}
	return ids
}

// metadataFieldIDs is where Iceberg's reserved field ids (row lineage,
// _file, _pos and the like) begin: iceberg-go computes those columns.
const metadataFieldIDs = 2147483447

// direct reports whether task may be read directly, before its file is
// opened: a whole Parquet file with nothing to delete and no row
// iceberg-go would filter.
func (r *tableReader) direct(task table.FileScanTask) bool {
	return r.directIDs != nil &&
		task.File.FileFormat() == iceberg.ParquetFile &&
		task.Start == 0 && task.Length == task.File.FileSizeBytes() &&
		len(task.DeleteFiles) == 0 && len(task.EqualityDeleteFiles) == 0 && len(task.DeletionVectorFiles) == 0 &&
		(r.pushed == nil || residualTrue(task))
}

// openDirect opens task's file for a direct read; ok is false, with the
// file closed, when its columns are not the scan's as they are.
func (r *tableReader) openDirect(ctx context.Context, task table.FileScanTask, alloc memory.Allocator) (rr pqarrow.RecordReader, done func(), ok bool, err error) {
	fsys, err := r.rt.tbl.FS(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	path := task.File.FilePath()
	f, err := fsys.Open(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("open data file: %w", err)
	}
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(alloc)))
	if err != nil {
		f.Close()
		return nil, nil, false, fmt.Errorf("read Parquet footer of %s: %w", path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, alloc)
	if err != nil {
		pf.Close()
		return nil, nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	leaves, ok := r.directLeaves(fr)
	if !ok {
		pf.Close()
		return nil, nil, false, nil
	}
	if rr, err = fr.GetRecordReader(ctx, leaves, nil); err != nil {
		pf.Close()
		return nil, nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	// pqarrow yields the columns in the order of leaves: the scan's.
	return rr, func() { rr.Release(); pf.Close() }, true, nil
}

// directLeaves are the file's leaf columns of the scan's field ids; ok is
// false when one is missing, nested, or of another type than the scan
// yields.
func (r *tableReader) directLeaves(fr *pqarrow.FileReader) (leaves []int, ok bool) {
	sc := fr.ParquetReader().MetaData().Schema
	root := sc.Root()
	byID := map[int]int{}
	for i := 0; i < root.NumFields(); i++ {
		byID[int(root.Field(i).FieldID())] = i
	}
	leaves = make([]int, 0, len(r.directIDs))
	for k, id := range r.directIDs {
		top, ok := byID[id]
		if !ok || top >= len(fr.Manifest.Fields) {
			return nil, false
		}
		field := fr.Manifest.Fields[top]
		if !field.IsLeaf() || !arrow.TypeEqual(field.Field.Type, r.schema.Field(k).Type) {
			return nil, false
		}
		leaves = append(leaves, field.ColIndex)
	}
	return leaves, true
}

// readPlain yields the records of tasks in order, each read directly when
// it can be and by iceberg-go otherwise: the tasks before the last are
// read in goroutines, up to GOMAXPROCS files ahead of the one yielded, and
// the caller reads the last itself, as sortTasks sorts it (for a plan of
// one file a goroutine only added its start and a wake-up).
func (r *tableReader) readPlain(ctx context.Context, tasks []table.FileScanTask, alloc memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if len(tasks) == 0 {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type result struct {
			rec arrow.RecordBatch
			err error
		}
		before := tasks[:len(tasks)-1]
		outs := make([]chan result, len(before))
		for i := range outs {
			outs[i] = make(chan result, 2)
		}
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		go func() {
			for i, task := range before {
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
					for rec, err := range r.readOne(ctx, task, alloc) {
						select {
						case outs[i] <- result{rec, err}:
						case <-ctx.Done():
							if rec != nil {
								rec.Release()
							}
							return
						}
					}
				}()
			}
		}()
		stopped := false
		for _, out := range outs {
			for res := range out {
				if stopped {
					if res.rec != nil {
						res.rec.Release()
					}
					continue
				}
				if !yield(res.rec, res.err) || res.err != nil {
					stopped = true
					cancel()
				}
			}
		}
		if !stopped {
			r.readOne(ctx, tasks[len(tasks)-1], alloc)(yield)
		}
	}
}

// readOne reads one task: directly when it can be, from what was read
// ahead of it if anything was, by iceberg-go otherwise.
func (r *tableReader) readOne(ctx context.Context, task table.FileScanTask, alloc memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if r.direct(task) {
			if a := r.takeAhead(task.File.FilePath()); a != nil {
				<-a.done
				if a.handled {
					a.yield(yield)
					return
				}
			} else if r.readDirect(ctx, task, alloc, yield) {
				return
			}
		}
		_, recs, err := r.scan.ReadTasks(ctx, []table.FileScanTask{task})
		if err != nil {
			yield(nil, err)
			return
		}
		for rec, err := range recs {
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// readDirect reads task's file directly into yield; it returns false,
// having yielded nothing, when the file's columns are not the scan's as
// they are.
func (r *tableReader) readDirect(ctx context.Context, task table.FileScanTask, alloc memory.Allocator, yield func(arrow.RecordBatch, error) bool) bool {
	rr, done, ok, err := r.openDirect(ctx, task, alloc)
	if err != nil {
		yield(nil, err)
		return true
	}
	if !ok {
		return false
	}
	defer done()
	for rr.Next() {
		in := rr.RecordBatch()
		if !yield(array.NewRecordBatch(r.schema, in.Columns(), in.NumRows()), nil) {
			return true
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		yield(nil, fmt.Errorf("read %s: %w", task.File.FilePath(), err))
	}
	return true
}
