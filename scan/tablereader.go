package scan

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/filter"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

// tableReader reads given data files of one table the way Table reads
// them: with the fixes of readTable, the residual filter and the column
// selection applied. It does not choose the files, so that the Iceberg
// streaming source reads the files it picked exactly as a scan would.
type tableReader struct {
	rt   *readTable
	opts []table.ScanOption
	scan *table.Scan
	proj *iceberg.Schema
	// schema is what iceberg-go yields; out is what read yields.
	schema, out *arrow.Schema
	residual    *filter.Matcher
	post        *conform.Projection
	// A file that needs fixes is read with fixedOpts, unfiltered, and its
	// fixed rows are checked against the whole filter (whole, nil without
	// one): iceberg-go would test the filter on the NULLs it reads for the
	// columns the file lacks.
	fixedOpts []table.ScanOption
	fixedScan *table.Scan
	whole     *filter.Matcher
}

func newTableReader(ctx context.Context, tbl *table.Table, o Options, snap int64, bound *filter.Bound) (*tableReader, error) {
	rt, err := newReadTable(tbl)
	if err != nil {
		return nil, err
	}
	r := &tableReader{rt: rt, opts: o.scanOptions(snap, bound, schemaOf(rt.tbl, snap))}
	r.scan = rt.tbl.Scan(r.opts...)
	r.fixedOpts, r.fixedScan = r.opts, r.scan
	if bound != nil {
		r.fixedOpts = o.scanOptions(snap, bound.Unpushed(), schemaOf(rt.tbl, snap))
		r.fixedScan = rt.tbl.Scan(r.fixedOpts...)
	}
	if r.proj, err = r.scan.Projection(); err != nil {
		return nil, err
	}
	// The schema iceberg-go's reads yield, computed as ReadTasks does.
	schema, err := table.SchemaToArrowSchemaWithOptions(r.proj, table.ArrowSchemaOptions{TableProperties: rt.tbl.Metadata().Properties()})
	if err != nil {
		return nil, err
	}
	r.schema, r.out = schema, schema
	if bound != nil && bound.Residual != nil {
		if r.residual, err = bound.ResidualMatcher(schema); err != nil {
			return nil, err
		}
	}
	if bound != nil {
		if r.whole, err = bound.Matcher(schema); err != nil {
			return nil, err
		}
	}
	switch {
	case len(o.Drop) > 0:
		r.post = conform.NewProjection(nil, o.Drop, "")
	case bound != nil && len(o.Columns) > 0:
		r.post = conform.NewProjection(o.Columns, nil, "")
	}
	if r.post != nil {
		if r.out, err = r.post.Schema(schema); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// read yields the rows of tasks, at most limit of them when limit > 0 (the
// limit counts rows after the residual filter).
func (r *tableReader) read(ctx context.Context, tasks []table.FileScanTask, limit int64) iter.Seq2[arrow.RecordBatch, error] {
	inner := limit // what the raw read stops at
	if r.residual != nil {
		inner = 0 // rows the residual drops must not count
	}
	raw := r.raw(ctx, tasks, inner)
	if r.residual == nil && r.post == nil {
		return raw
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		var n int64
		for rec, err := range raw {
			if err == nil && r.residual != nil {
				in := rec
				rec, err = r.residual.Filter(ctx, in)
				in.Release()
			}
			if err == nil && r.post != nil {
				in := rec
				rec, err = r.post.Apply(in)
				in.Release()
			}
			if err == nil && rec.NumRows() == 0 {
				rec.Release()
				continue
			}
			if err == nil && limit > 0 && n+rec.NumRows() > limit {
				in := rec
				rec = in.NewSlice(0, limit-n)
				in.Release()
			}
			if err == nil {
				n += rec.NumRows()
			}
			if !yield(rec, err) || err != nil || (limit > 0 && n >= limit) {
				return
			}
		}
	}
}

// raw yields the rows iceberg-go reads for tasks, fixed, stopping once
// stopAfter rows were yielded when stopAfter > 0.
func (r *tableReader) raw(ctx context.Context, tasks []table.FileScanTask, stopAfter int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		// Files that need no fix are read in one call, which iceberg-go
		// reads concurrently; the others one by one, each with its own
		// fixes.
		var plain []table.FileScanTask
		type fixedTask struct {
			task      table.FileScanTask
			fixes     []fix
			plainUUID bool // read through rt.uuidTbl, then re-typed
		}
		var fixed []fixedTask
		for _, task := range tasks {
			fixes, plainUUID, err := r.rt.fixesFor(ctx, task, r.proj)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(fixes) == 0 && !plainUUID {
				plain = append(plain, task)
			} else {
				fixed = append(fixed, fixedTask{task, fixes, plainUUID})
			}
		}
		var n int64
		// emit yields one record; false means stop.
		emit := func(rec arrow.RecordBatch) bool {
			n += rec.NumRows()
			return yield(rec, nil) && (stopAfter <= 0 || n < stopAfter)
		}
		if len(plain) > 0 {
			_, recs, err := r.scan.ReadTasks(ctx, plain)
			if err != nil {
				yield(nil, err)
				return
			}
			for rec, err := range recs {
				if err != nil {
					yield(nil, err)
					return
				}
				if !emit(rec) {
					return
				}
			}
		}
		for _, ft := range fixed {
			sc := r.fixedScan
			if ft.plainUUID {
				sc = r.rt.uuidTbl.Scan(r.fixedOpts...)
			}
			_, recs, err := sc.ReadTasks(ctx, []table.FileScanTask{ft.task})
			if err != nil {
				yield(nil, fmt.Errorf("read %s: %w", ft.task.File.FilePath(), err))
				return
			}
			for rec, err := range recs {
				if err == nil && ft.plainUUID {
					rec, err = retypeRecord(rec, r.schema)
				}
				if err == nil {
					rec, err = applyFixes(rec, ft.fixes)
				}
				if err == nil && r.whole != nil {
					in := rec
					rec, err = r.whole.Filter(ctx, in)
					in.Release()
				}
				if err != nil {
					yield(nil, fmt.Errorf("read %s: %w", ft.task.File.FilePath(), err))
					return
				}
				if rec.NumRows() == 0 {
					rec.Release()
					continue
				}
				if !emit(rec) {
					return
				}
			}
		}
	}
}

// FileReader reads chosen data files of a table in its current schema, as
// Table would read them, with a filter and a column selection: the
// Iceberg streaming source's reader.
type FileReader struct{ r *tableReader }

// NewFileReader prepares reads of tbl's data files with the options'
// Filter, Columns and Drop; the options that choose a snapshot must be
// unset, since the caller chooses the files.
func NewFileReader(ctx context.Context, tbl *table.Table, o Options) (*FileReader, error) {
	if o.SnapshotID != 0 || o.AsOfMs != 0 || o.Branch != "" || o.Tag != "" || o.Limit != 0 {
		return nil, fmt.Errorf("%w: a file reader reads the files it is given: no snapshot, time, branch, tag or limit", ingest.ErrConfig)
	}
	bound, err := o.bind(ctx, tbl, 0)
	if err != nil {
		return nil, err
	}
	r, err := newTableReader(ctx, tbl, o, 0, bound)
	if err != nil {
		return nil, err
	}
	return &FileReader{r: r}, nil
}

// Schema is the schema of the records Open yields.
func (f *FileReader) Schema() *arrow.Schema { return f.r.out }

// Open reads tasks, which must be the table's, as one stream of records.
func (f *FileReader) Open(ctx context.Context, tasks []table.FileScanTask) array.RecordReader {
	return newSeqReader(f.r.out, f.r.read(ctx, tasks, 0))
}
