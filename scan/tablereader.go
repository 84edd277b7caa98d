package scan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
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
	at   at              // the snapshot read
	sc   *iceberg.Schema // the schema read
	opts []table.ScanOption
	scan *table.Scan
	proj *iceberg.Schema
	// schema is what iceberg-go yields; out is what read yields.
	schema, out *arrow.Schema
	residual    *filter.Matcher
	post        *conform.Projection
	// Some files are read with fixedOpts, unfiltered, and their rows
	// checked against the whole filter (whole, nil without one): files
	// that need fixes (iceberg-go would test the filter on the NULLs it
	// reads for the columns the file lacks) and files whose statistics
	// cannot be trusted to prune (stats.go). They select the whole
	// filter's columns too (fixedProj, fixedSchema), cut to schema once
	// checked.
	fixedOpts   []table.ScanOption
	fixedScan   *table.Scan
	fixedProj   *iceberg.Schema
	fixedSchema *arrow.Schema
	whole       *filter.Matcher
	// selected are the columns the fixed scan selects, nil for all.
	selected []string
	// prunedOn are the fields iceberg-go prunes on, nil when nothing is
	// pushed.
	prunedOn []iceberg.NestedField
	// recheck holds the paths of files the plan kept against iceberg-go's
	// pruning (see plan).
	recheck map[string]bool
	// alloc is Options.Allocator.
	alloc memory.Allocator
	// floeFiles reports whether floe wrote every data file of the snapshot
	// read (floeWrote), computed once when first asked.
	floeFiles func() bool
	// pushed is the filter pushed to iceberg-go, nil when there is none.
	pushed iceberg.BooleanExpression
	// holdsSelected is set when the plan proved every data file holds a
	// selected column (planByPartition).
	holdsSelected bool
	// directIDs are the field ids of the columns a direct read selects,
	// nil when reads cannot be direct (directColumns).
	directIDs []int
	// ahead holds the files read while the plan went on, by path
	// (readAhead), when readsAhead allows it.
	readsAhead   bool
	aheadMu      sync.Mutex
	ahead        map[string]*aheadRead
	aheadStarted int
}

func newTableReader(ctx context.Context, tbl *table.Table, o Options, a at, bound *filter.Bound) (*tableReader, error) {
	rt, err := newReadTable(tbl)
	if err != nil {
		return nil, err
	}
	sc := a.schema(rt.tbl)
	r := &tableReader{rt: rt, at: a, sc: sc, opts: o.scanOptions(bound, sc), alloc: o.Allocator}
	r.floeFiles = sync.OnceValue(func() bool { return floeWrote(rt.tbl, a.snapshot(rt.tbl)) })
	if r.scan, err = a.scan(rt.tbl, r.opts...); err != nil {
		return nil, err
	}
	r.fixedOpts, r.fixedScan, r.selected = r.opts, r.scan, o.readColumns(bound, sc)
	if bound != nil {
		r.fixedOpts = o.scanOptions(bound.Unpushed(), sc)
		if r.fixedScan, err = a.scan(rt.tbl, r.fixedOpts...); err != nil {
			return nil, err
		}
		r.selected = o.readColumns(bound.Unpushed(), sc)
		if !bound.Pushed.Equals(iceberg.AlwaysTrue{}) {
			r.prunedOn = prunedOn(bound.Filter, sc)
			r.pushed = bound.Pushed
		}
	}
	if r.proj, r.schema, err = readSchema(rt, r.scan); err != nil {
		return nil, err
	}
	r.fixedProj, r.fixedSchema = r.proj, r.schema
	r.directIDs = directColumns(r.proj, r.schema)
	if r.fixedScan != r.scan {
		if r.fixedProj, r.fixedSchema, err = readSchema(rt, r.fixedScan); err != nil {
			return nil, err
		}
	}
	r.out = r.schema
	if bound != nil && bound.Residual != nil {
		if r.residual, err = bound.ResidualMatcher(r.schema); err != nil {
			return nil, err
		}
	}
	if bound != nil {
		if r.whole, err = bound.Matcher(r.fixedSchema); err != nil {
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
		if r.out, err = r.post.Schema(r.schema); err != nil {
			return nil, err
		}
		if r.out.Equal(r.schema) {
			// The read selects the kept columns alone (the residual
			// reads none): nothing to cut from each record.
			r.post, r.out = nil, r.schema
		}
	}
	return r, nil
}

// readSchema is the projection of sc and the schema its reads yield,
// computed as ReadTasks does.
func readSchema(rt *readTable, sc *table.Scan) (*iceberg.Schema, *arrow.Schema, error) {
	proj, err := sc.Projection()
	if err != nil {
		return nil, nil, err
	}
	schema, err := table.SchemaToArrowSchemaWithOptions(proj, table.ArrowSchemaOptions{TableProperties: rt.tbl.Metadata().Properties()})
	return proj, schema, err
}

// planReader makes the reader of the options and plans its tasks. iceberg-go
// 0.7 cannot plan a filter on a column whose type was widened (int to long,
// float to double) while a manifest still holds the narrower bounds
// ("invalid binary serialization"): the plan is then made without pushing
// the filter, which is checked on every row instead. The bound returned is
// the one planned with. read tells that the tasks are read next, so that
// the plan may read the first of them ahead (readAhead); a plan only
// explained reads nothing.
func planReader(ctx context.Context, tbl *table.Table, o Options, a at, bound *filter.Bound, read bool) (*tableReader, []table.FileScanTask, *filter.Bound, error) {
	r, err := newTableReader(ctx, tbl, o, a, bound)
	if err != nil {
		return nil, nil, bound, err
	}
	r.readsAhead = read
	tasks, err := r.plan(ctx)
	if err != nil && bound != nil && errors.Is(err, iceberg.ErrInvalidBinSerialization) && !bound.Pushed.Equals(iceberg.AlwaysTrue{}) {
		bound = bound.Unpushed()
		if r, err = newTableReader(ctx, tbl, o, a, bound); err != nil {
			return nil, nil, bound, err
		}
		r.readsAhead = read
		tasks, err = r.plan(ctx)
	}
	return r, tasks, bound, err
}

// plan lists the tasks of a scan of the snapshot: the plan of its
// partitions when they decide the filter (planByPartition), otherwise
// iceberg-go's plan with the pushed filter, plus every file it pruned
// whose manifest metrics on the filter's columns contradict themselves,
// which the read then checks row by row.
func (r *tableReader) plan(ctx context.Context) ([]table.FileScanTask, error) {
	if tasks, ok, err := r.planByPartition(ctx); ok || err != nil {
		return tasks, err
	}
	tasks, err := r.scan.PlanFiles(ctx)
	if err != nil || len(r.prunedOn) == 0 {
		return tasks, err
	}
	planned := map[string]bool{}
	for _, t := range tasks {
		planned[t.File.FilePath()] = true
	}
	if s := r.at.snapshot(r.rt.tbl); s != nil && s.Summary != nil {
		if n, err := strconv.Atoi(s.Summary.Properties["total-data-files"]); err == nil && n == len(planned) {
			return tasks, nil // nothing pruned
		}
	}
	if r.floeFiles() {
		return tasks, nil // floe's metrics never contradict themselves
	}
	all, err := r.fixedScan.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		path := t.File.FilePath()
		if planned[path] || fileStatsTrusted(t.File, r.prunedOn) {
			continue
		}
		if r.recheck == nil {
			r.recheck = map[string]bool{}
		}
		r.recheck[path] = true
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// read yields the rows of tasks, at most limit of them when limit > 0 (the
// limit counts rows after the residual filter).
func (r *tableReader) read(ctx context.Context, tasks []table.FileScanTask, limit int64) iter.Seq2[arrow.RecordBatch, error] {
	inner := limit // what the raw read stops at
	if r.residual != nil {
		inner = 0 // rows the residual drops must not count
	}
	raw := r.raw(ctx, tasks, inner)
	if r.residual == nil && r.post == nil && limit <= 0 {
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

// taskRead is how one task is read.
type taskRead struct {
	task      table.FileScanTask
	fixes     []fix
	plainUUID bool // read through rt.uuidTbl, then re-typed
	// unpushed: read with fixedOpts and checked against the whole filter.
	unpushed bool
	// anchor is a column of the file read along with the selection when
	// the file holds none of the selected columns (iceberg-go cannot read
	// a file for no column), then dropped.
	anchor string
	// noColumn is set when the file holds no column of the schema at all
	// (as a file without field ids whose names the name mapping gives no
	// field): its rows are nullRows rows of nulls, before the fixes.
	noColumn bool
	nullRows int64
}

// footerReads bounds the Parquet footers read at once while tasks are
// sorted: enough to hide an object store's latency, few enough not to
// crowd the read that follows.
const footerReads = 8

// sortTasks decides how each task is read, reading the footers that takes
// footerReads at a time. The caller sorts the last task itself rather
// than start a goroutine and wait for it: for a plan of one file that
// start and wake-up were all the overlap bought.
func (r *tableReader) sortTasks(ctx context.Context, tasks []table.FileScanTask) ([]taskRead, error) {
	out := make([]taskRead, len(tasks))
	errs := make([]error, len(tasks))
	sem := make(chan struct{}, footerReads)
	var wg sync.WaitGroup
	for i, task := range tasks {
		sem <- struct{}{}
		if i == len(tasks)-1 {
			out[i], errs[i] = r.sortTask(ctx, task)
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = r.sortTask(ctx, task)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (r *tableReader) sortTask(ctx context.Context, task table.FileScanTask) (taskRead, error) {
	tr := taskRead{task: task, unpushed: r.recheck[task.File.FilePath()]}
	var md *metadata.FileMetaData
	footer := func() (*metadata.FileMetaData, error) {
		if md != nil {
			return md, nil
		}
		var err error
		md, err = r.rt.footer(ctx, task.File.FilePath())
		return md, err
	}
	var err error
	// Fixes cover the filter's columns too: a file lacking one is read
	// unfiltered and checked on the rows, with the column filled.
	if tr.fixes, tr.plainUUID, err = r.rt.fixesFor(task, r.fixedProj, footer, r.floeFiles); err != nil {
		return tr, err
	}
	if len(tr.fixes) > 0 || tr.plainUUID {
		tr.unpushed = true
	}
	// A file without field ids may hold none of the columns its manifest
	// has metrics for: what it holds is what the current name mapping
	// names.
	if (len(r.selected) > 0 && !r.holdsSelected && !holdsAny(task.File, r.proj)) || r.rt.mapping != nil {
		md, err := footer()
		if err != nil {
			return tr, err
		}
		ids, _ := r.rt.fileFieldIDs(md)
		if !holdsLeaf(r.proj, ids) {
			// The plain read would select no column of the file: read it
			// with the filter's columns, and an anchor if it lacks those;
			// a file holding no column of the schema at all is made of
			// its number of rows.
			tr.unpushed = true
			if !holdsLeaf(r.fixedProj, ids) {
				tr.anchor = anchorFor(r.sc, ids)
				if tr.anchor == "" {
					tr.nullRows, err = rowsIn(md, task)
					tr.noColumn = true
					if err != nil {
						return tr, err
					}
				}
			}
		}
	}
	// A task whose residual is true is read unfiltered: no row group is
	// pruned.
	if !tr.unpushed && len(r.prunedOn) > 0 && !residualTrue(task) && mayMisreadRowGroups(task.File, r.prunedOn) {
		md, err := footer()
		if err != nil {
			return tr, err
		}
		tr.unpushed = !rowGroupStatsTrusted(md, r.prunedOn)
	}
	return tr, nil
}

// holdsAny reports whether the manifest shows the data file holding a
// column of proj, by its value counts or column sizes; false may only mean
// it does not say.
func holdsAny(df iceberg.DataFile, proj *iceberg.Schema) bool {
	counts, sizes := df.ValueCounts(), df.ColumnSizes()
	for _, id := range leafIDs(proj.Fields(), nil) {
		if _, ok := counts[id]; ok {
			return true
		}
		if _, ok := sizes[id]; ok {
			return true
		}
	}
	return false
}

// holdsLeaf reports whether a file holding the field ids ids holds a leaf
// column of proj.
func holdsLeaf(proj *iceberg.Schema, ids map[int]bool) bool {
	for _, id := range leafIDs(proj.Fields(), nil) {
		if ids[id] {
			return true
		}
	}
	return false
}

// anchorFor names a primitive column of sc the file holds (ids), nested
// as a.b; "" when it holds none.
func anchorFor(sc *iceberg.Schema, ids map[int]bool) string {
	var find func(prefix string, fields []iceberg.NestedField) string
	find = func(prefix string, fields []iceberg.NestedField) string {
		for _, f := range fields {
			if !ids[f.ID] || strings.Contains(f.Name, ".") {
				continue
			}
			switch t := f.Type.(type) {
			case iceberg.PrimitiveType:
				return prefix + f.Name
			case *iceberg.StructType:
				if name := find(prefix+f.Name+".", t.FieldList); name != "" {
					return name
				}
			}
		}
		return ""
	}
	return find("", sc.Fields())
}

// leafIDs appends the ids of the primitive fields of fields, at any depth.
func leafIDs(fields []iceberg.NestedField, into []int) []int {
	for _, f := range fields {
		switch t := f.Type.(type) {
		case *iceberg.StructType:
			into = leafIDs(t.FieldList, into)
		case *iceberg.ListType:
			into = leafIDs([]iceberg.NestedField{t.ElementField()}, into)
		case *iceberg.MapType:
			into = leafIDs([]iceberg.NestedField{t.KeyField(), t.ValueField()}, into)
		default:
			into = append(into, f.ID)
		}
	}
	return into
}

// raw yields the rows iceberg-go reads for tasks, fixed, stopping once
// stopAfter rows were yielded when stopAfter > 0.
func (r *tableReader) raw(ctx context.Context, tasks []table.FileScanTask, stopAfter int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if r.alloc != nil {
			ctx = compute.WithAllocator(ctx, r.alloc)
		}
		if len(tasks) > 0 && r.rt.mappingErr != nil {
			yield(nil, r.rt.mappingErr)
			return
		}
		sorted, err := r.sortTasks(ctx, tasks)
		if err != nil {
			yield(nil, err)
			return
		}
		// Files read as iceberg-go reads them go in one call, which reads
		// them concurrently, and so do the files read unfiltered that need
		// nothing else; the others one by one, each with its own fixes.
		var plain, unpushed []table.FileScanTask
		var fixed []taskRead
		for _, tr := range sorted {
			switch {
			case !tr.unpushed:
				plain = append(plain, tr.task)
			case len(tr.fixes) == 0 && !tr.plainUUID && tr.anchor == "" && !tr.noColumn:
				unpushed = append(unpushed, unfiltered(tr.task))
			default:
				tr.task = unfiltered(tr.task)
				fixed = append(fixed, tr)
			}
		}
		var n int64
		// emit yields one record; false means stop.
		emit := func(rec arrow.RecordBatch) bool {
			n += rec.NumRows()
			return yield(rec, nil) && (stopAfter <= 0 || n < stopAfter)
		}
		for _, part := range []struct {
			read  func() (iter.Seq2[arrow.RecordBatch, error], error)
			tasks []table.FileScanTask
			check *filter.Matcher
		}{{
			func() (iter.Seq2[arrow.RecordBatch, error], error) {
				return r.readPlain(ctx, plain, compute.GetAllocator(ctx)), nil
			}, plain, nil,
		}, {
			func() (iter.Seq2[arrow.RecordBatch, error], error) {
				_, recs, err := r.fixedScan.ReadTasks(ctx, unpushed)
				return recs, err
			}, unpushed, r.whole,
		}} {
			if len(part.tasks) == 0 {
				continue
			}
			recs, err := part.read()
			if err != nil {
				yield(nil, err)
				return
			}
			for rec, err := range recs {
				if err == nil && part.check != nil {
					rec, err = r.check(ctx, rec)
				}
				if err != nil {
					yield(nil, err)
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
		for _, ft := range fixed {
			tbl := r.rt.tbl
			if ft.plainUUID {
				tbl = r.rt.uuidTbl
			}
			opts := r.fixedOpts
			if ft.anchor != "" {
				opts = append(slices.Clone(opts), table.WithSelectedFields(append(slices.Clone(r.selected), ft.anchor)...))
			}
			var recs iter.Seq2[arrow.RecordBatch, error]
			if ft.noColumn {
				recs, err = r.readNoColumn(ctx, ft)
			} else {
				var sc *table.Scan
				if sc, err = r.at.scan(tbl, opts...); err == nil {
					_, recs, err = sc.ReadTasks(ctx, []table.FileScanTask{ft.task})
				}
			}
			if err != nil {
				yield(nil, fmt.Errorf("read %s: %w", ft.task.File.FilePath(), err))
				return
			}
			for rec, err := range recs {
				if err == nil && ft.anchor != "" {
					rec, err = selectFields(rec, r.fixedSchema)
				}
				if err == nil && ft.plainUUID {
					rec, err = retypeRecord(rec, r.fixedSchema)
				}
				if err == nil {
					rec, err = applyFixes(rec, ft.fixes)
				}
				if err == nil {
					rec, err = r.check(ctx, rec)
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

// check keeps the rows of rec, read with the fixed scan, that pass the
// whole filter, cut to the columns of the plain scan.
func (r *tableReader) check(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if r.whole != nil {
		in := rec
		var err error
		rec, err = r.whole.Filter(ctx, in)
		in.Release()
		if err != nil {
			return nil, err
		}
	}
	if r.fixedSchema == r.schema {
		return rec, nil
	}
	return selectFields(rec, r.schema)
}

// residualTrue reports whether the plan found every row of task to match
// the filter: iceberg-go then neither filters its rows nor prunes its row
// groups.
func residualTrue(task table.FileScanTask) bool {
	return task.Residual != nil && task.Residual.Equals(iceberg.AlwaysTrue{})
}

// unfiltered is task without the residual filter iceberg-go's plan put on
// it: ReadTasks filters a task's rows by its residual whatever the scan's
// own filter.
func unfiltered(task table.FileScanTask) table.FileScanTask {
	task.Residual = nil
	return task
}

// selectFields keeps the columns of rec that schema names, in its order,
// and of their structs the fields schema names: rec was read with an
// anchor column the selection does not hold. The record takes schema
// itself where the types agree (they differ only for uuid columns read as
// fixed[16], which retypeRecord relabels).
func selectFields(rec arrow.RecordBatch, schema *arrow.Schema) (arrow.RecordBatch, error) {
	defer rec.Release()
	cols := make([]arrow.Array, schema.NumFields())
	fields := make([]arrow.Field, schema.NumFields())
	same := true
	for i, f := range schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("internal: column %s read %d times", f.Name, len(idx))
		}
		d, err := pickFields(rec.Column(idx[0]).Data(), f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
		defer cols[i].Release()
		fields[i] = rec.Schema().Field(idx[0])
		fields[i].Type = cols[i].DataType()
		same = same && arrow.TypeEqual(f.Type, fields[i].Type)
	}
	out := schema
	if !same {
		out = arrow.NewSchema(fields, nil)
	}
	return array.NewRecordBatch(out, cols, rec.NumRows()), nil
}

// pickFields cuts struct data d to the fields of struct type dt, by name,
// at any depth; other data is returned as it is. The result takes dt
// itself where the types agree.
func pickFields(d arrow.ArrayData, dt arrow.DataType) (arrow.ArrayData, error) {
	want, ok := dt.(*arrow.StructType)
	have, isStruct := d.DataType().(*arrow.StructType)
	if !ok || !isStruct {
		d.Retain()
		return d, nil
	}
	children := make([]arrow.ArrayData, want.NumFields())
	fields := make([]arrow.Field, want.NumFields())
	for i, f := range want.Fields() {
		j, found := have.FieldIdx(f.Name)
		if !found {
			return nil, fmt.Errorf("internal: field %s was not read", f.Name)
		}
		c, err := pickFields(d.Children()[j], f.Type)
		if err != nil {
			return nil, err
		}
		defer c.Release()
		children[i], fields[i] = c, have.Field(j)
		fields[i].Type = c.DataType()
	}
	var out arrow.DataType = arrow.StructOf(fields...)
	if arrow.TypeEqual(out, dt) {
		out = dt
	}
	// A struct's children are indexed from its own offset, so they are
	// kept as they are.
	return array.NewData(out, d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), nil
}

// FileReader reads chosen data files of a table in its current schema, as
// Table would read them, with a filter and a column selection: the
// Iceberg streaming source's reader.
type FileReader struct{ r *tableReader }

// NewFileReader prepares reads of tbl's data files with the options'
// Filter, Columns and Drop; the options that choose a snapshot must be
// unset, since the caller chooses the files.
func NewFileReader(ctx context.Context, tbl *table.Table, o Options) (*FileReader, error) {
	if o.SnapshotID != 0 || o.AsOfMs != nil || o.Branch != "" || o.Tag != "" || o.Limit != 0 {
		return nil, fmt.Errorf("%w: a file reader reads the files it is given: no snapshot, time, branch, tag or limit", ingest.ErrConfig)
	}
	bound, err := o.bind(ctx, tbl, at{})
	if err != nil {
		return nil, err
	}
	r, err := newTableReader(ctx, tbl, o, at{}, bound)
	if err != nil {
		return nil, err
	}
	// The reader outlives the table it was made from (the streaming source
	// keeps it while the schema holds), and files another engine adds
	// later may lack an identity-partition column: their footers are read.
	r.floeFiles = func() bool { return false }
	return &FileReader{r: r}, nil
}

// Schema is the schema of the records Open yields.
func (f *FileReader) Schema() *arrow.Schema { return f.r.out }

// Open reads tasks, which must be the table's, as one stream of records.
func (f *FileReader) Open(ctx context.Context, tasks []table.FileScanTask) array.RecordReader {
	return newSeqReader(f.r.out, f.r.read(ctx, tasks, 0))
}
