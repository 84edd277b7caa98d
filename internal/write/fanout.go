package write

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go/format"
)

// batch is one Write call: the destinations it touched and the files it
// keeps open.
type batch struct {
	w     *Writer
	fixed *dest

	mu    sync.Mutex // guards dests
	dests map[string]*dest

	maxOpen     int
	bufferLimit int64
	open        atomic.Int64 // partitioned files open, against maxOpen
	live        atomic.Int64 // data files open
	peakOpen    atomic.Int64
	buffered    atomic.Int64 // bytes of rows waiting for a file
	clock       atomic.Int64 // counts appends, for least-recently-used
	flushMu     sync.Mutex   // one flush of waiting rows at a time
	seq         atomic.Int64

	errMu sync.Mutex
	err   error // see fail
}

// dest is one table a batch writes.
type dest struct {
	name string
	tbl  *table.Table
	// fileSchema is the table's schema, with _row_id when the writer
	// writes it; schema is its Arrow form, which the rows are made to fit.
	fileSchema *iceberg.Schema
	schema     *arrow.Schema
	opts       fileOptions
	wfs        icebergio.WriteFileIO
	locs       table.LocationProvider
	part       *partitioner // nil when unpartitioned
	// defaults are the table's columns with a write-default, which an
	// input without them is written with.
	defaults map[string]iceberg.NestedField

	maxOpen     int
	bufferLimit int64

	confMu sync.Mutex
	conf   map[*arrow.Schema]*conform.Conformer
	plans  []*copyPlan // under confMu

	// copyable is set when Parquet inputs may be copied by column chunk
	// (chunkcopy.go); template is the footer their files take, made with
	// the first plan (under confMu).
	copyable bool
	template *format.FileMetaData
	// values is set when Parquet inputs whose columns are the table's
	// may be written by their values (values.go).
	values bool

	mu    sync.Mutex // guards slots, files and rows
	slots map[any]*slot
	files []ingest.DataFile
	rows  int64
}

// slot is where one partition's rows go (or one goroutine's, for an
// unpartitioned table): its open file, or the rows waiting for one.
type slot struct {
	mu      sync.Mutex
	key     *partitionKey
	dir     string // the partition's directory under data/
	file    *openFile
	waiting []arrow.RecordBatch
	waitB   int64
	used    atomic.Int64
	// holds is set while the slot holds a place under the open-file cap,
	// for evictIdle to read without the slot's lock.
	holds atomic.Bool
}

type openFile struct {
	path string
	out  *countingWriter
	enc  fileEncoder
	rows int64
	// counted is set for files held against the open-file cap.
	counted bool
}

func (b *batch) newDest(ctx context.Context, name string, tbl *table.Table) (*dest, error) {
	props := tbl.Properties()
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if err := config.CheckTableProperty(k, props[k]); err != nil {
			return nil, fmt.Errorf("%w: table %s has property %s=%q, which floe cannot write with: %v (change it with ALTER TABLE ... SET TBLPROPERTIES in Spark, or any Iceberg client)", ingest.ErrConfig, name, k, props[k], err)
		}
	}
	if err := config.CheckTablePropertyColumns(props, tbl.Schema()); err != nil {
		return nil, fmt.Errorf("table %s: %w: %v (change it with ALTER TABLE ... SET TBLPROPERTIES in Spark, or any Iceberg client)", name, ingest.ErrConfig, err)
	}
	fileSchema := tbl.Schema()
	if b.w.RowIDs {
		fileSchema = iceberg.SchemaWithRowID(fileSchema)
	}
	schema, err := table.SchemaToArrowSchema(fileSchema, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("table %s schema: %w", name, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s storage: %w", name, err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("table %s: its storage does not support writing files; check the warehouse location and credentials", name)
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return nil, fmt.Errorf("table %s locations: %w", name, err)
	}
	opts, err := newFileOptions(tbl, schema)
	if err != nil {
		return nil, err
	}
	if b.w.TargetFileSize > 0 {
		opts.target = b.w.TargetFileSize
	}
	d := &dest{name: name, tbl: tbl, fileSchema: fileSchema, schema: schema, opts: opts, wfs: wfs, locs: locs, slots: map[any]*slot{}, defaults: conform.WriteDefaults(tbl.Schema())}
	maxOpen, err := intProp(tbl.Properties(), MaxOpenFilesKey, maxOpenFilesDefault)
	if err != nil {
		return nil, err
	}
	if b.w.MaxOpenFiles > 0 {
		maxOpen = int64(b.w.MaxOpenFiles)
	}
	d.maxOpen = int(maxOpen)
	if d.bufferLimit, err = intProp(tbl.Properties(), BufferBytesKey, bufferBytesDefault); err != nil {
		return nil, err
	}
	if b.maxOpen == 0 {
		// The cap is the batch's: the first table's settings fix it.
		b.maxOpen, b.bufferLimit = d.maxOpen, d.bufferLimit
	}
	if spec := tbl.Spec(); !spec.IsUnpartitioned() {
		if d.part, err = newPartitioner(spec, tbl.Schema(), schema); err != nil {
			return nil, fmt.Errorf("table %s partition spec %s: %w", name, spec, err)
		}
		// Every open file buffers its row group: with many open, smaller
		// groups keep the total within the budget.
		d.opts.rowGroup = min(d.opts.rowGroup, max(4<<20, d.bufferLimit/maxOpen))
	}
	d.copyChunksFor()
	d.valuesFor()
	return d, nil
}

// destFor returns the destination for a routed table name, opening (or
// creating) its table on first use.
func (b *batch) destFor(ctx context.Context, name string, in *arrow.Schema) (*dest, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.dests[name]; ok {
		return d, nil
	}
	tbl, err := b.w.Tables.Table(ctx, name, in)
	if err != nil {
		return nil, err
	}
	d, err := b.newDest(ctx, name, tbl)
	if err != nil {
		return nil, err
	}
	b.dests[name] = d
	return d, nil
}

func (d *dest) conformer(s *arrow.Schema, opts conform.Options) (*conform.Conformer, error) {
	d.confMu.Lock()
	defer d.confMu.Unlock()
	for in, c := range d.conf {
		if in == s || in.Equal(s) {
			return c, nil
		}
	}
	opts.Defaults = d.defaults
	c, err := conform.NewConformer(d.name, s, d.schema, opts)
	if err != nil {
		return nil, err
	}
	if d.conf == nil {
		d.conf = map[*arrow.Schema]*conform.Conformer{}
	}
	d.conf[s] = c
	return c, nil
}

// writePart reads one part through projection, routing, conformance and
// partitioning into the slots.
func (b *batch) writePart(ctx context.Context, worker int, p ingest.Part) error {
	if pp, ok := p.(ingest.ParquetPart); ok {
		if written, err := b.parquetPart(ctx, worker, pp); written || err != nil {
			return err
		}
	}
	rdr, err := p.Open(ctx)
	if err != nil {
		return err
	}
	defer rdr.Release()
	var rows int64
	bad := func(err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr // a cancelled cast says nothing about the file
		}
		if ingest.NamesInput(err) {
			return err
		}
		return &ingest.BadFileError{Path: p.Name(), Err: err}
	}
	for rdr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := rdr.RecordBatch()
		n := rec.NumRows()
		if n == 0 {
			continue
		}
		if err := b.writeRecord(ctx, worker, p.Name(), rec, rows); err != nil {
			if errors.Is(err, ingest.ErrBadInput) || errors.Is(err, ingest.ErrSchemaMismatch) {
				return bad(err)
			}
			return err
		}
		rows += n
	}
	if err := rdr.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		var uf *ingest.UnstableFileError
		if errors.As(err, &uf) {
			return err
		}
		return bad(err)
	}
	return nil
}

// writeRecord routes one input record (before keep, drop or only, so that
// a template may name a column the table does not keep; dead letters keep
// every input column) and writes its rows.
func (b *batch) writeRecord(ctx context.Context, worker int, file string, rec arrow.RecordBatch, firstRow int64) error {
	if b.w.Route == nil {
		rec, err := b.project(rec)
		if err != nil {
			return err
		}
		defer rec.Release()
		d := b.fixed
		if d == nil {
			if d, err = b.destFor(ctx, b.w.Name, rec.Schema()); err != nil {
				return err
			}
		}
		return b.writeTo(ctx, worker, d, rec, firstRow)
	}
	groups, err := b.w.Route.route(ctx, rec, file, firstRow, b.w.Batch)
	if err != nil {
		return err
	}
	defer func() {
		for _, g := range groups {
			g.rec.Release()
		}
	}()
	for i, g := range groups {
		if g.table != b.w.Route.deadLetter || g.dead == 0 {
			p, err := b.project(g.rec)
			if err != nil {
				return err
			}
			g.rec.Release()
			groups[i].rec, g.rec = p, p
		}
		d, err := b.destFor(ctx, g.table, g.rec.Schema())
		if err != nil {
			return err
		}
		// A routed record's rows are not contiguous in the file, so a
		// conformance error cannot name the row.
		at := firstRow
		if len(groups) > 1 {
			at = -1
		}
		if err := b.writeTo(ctx, worker, d, g.rec, at); err != nil {
			return err
		}
	}
	return nil
}

// project applies keep, drop or only; the result must be released.
func (b *batch) project(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if b.w.Project == nil {
		rec.Retain()
		return rec, nil
	}
	return b.w.Project.Apply(rec)
}

func (b *batch) writeTo(ctx context.Context, worker int, d *dest, rec arrow.RecordBatch, firstRow int64) error {
	c, err := d.conformer(rec.Schema(), b.w.Conform)
	if err != nil {
		return err
	}
	out, err := c.Conform(ctx, rec, firstRow)
	if err != nil {
		return err
	}
	defer out.Release()
	if err := checkValueSizes(d.name, out, firstRow); err != nil {
		return err
	}
	d.mu.Lock()
	d.rows += out.NumRows()
	d.mu.Unlock()
	if d.part == nil {
		s := d.slot(b.fileOf(worker), nil)
		s.mu.Lock()
		defer s.mu.Unlock()
		return b.appendTo(d, s, out)
	}
	b.clock.Add(1)
	groups, err := d.part.split(ctx, out)
	if err != nil {
		return fmt.Errorf("table %s: partition rows: %w", d.name, err)
	}
	defer func() {
		for _, g := range groups {
			g.rec.Release()
		}
	}()
	// Goroutines splitting records of the same partitions would queue on
	// the same files in the same order, one behind the other: each takes
	// the files that are free first, starting at its own offset, and waits
	// only when all that remain are taken.
	slots := make([]*slot, len(groups))
	for i, g := range groups {
		slots[i] = d.slot(g.key, g.key)
	}
	pending := make([]int, 0, len(groups))
	for i := range groups {
		pending = append(pending, (i+worker*len(groups)/2)%len(groups))
	}
	for len(pending) > 0 {
		left := pending[:0]
		for _, i := range pending {
			if !slots[i].mu.TryLock() {
				left = append(left, i)
				continue
			}
			if err := b.place(ctx, d, slots[i], groups[i].rec); err != nil {
				return err
			}
		}
		if len(left) == len(pending) {
			slots[left[0]].mu.Lock()
			if err := b.place(ctx, d, slots[left[0]], groups[left[0]].rec); err != nil {
				return err
			}
			left = left[1:]
		}
		pending = left
	}
	return nil
}

// fileOf keys the slot of a goroutine's file in an unpartitioned table.
func (b *batch) fileOf(worker int) int {
	if b.w.OneFile {
		return 0
	}
	return worker
}

func (d *dest) slot(id any, key *partitionKey) *slot {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.slots[id]
	if !ok {
		s = &slot{key: key}
		if key != nil {
			s.dir = safePath(key.path)
		}
		d.slots[id] = s
	}
	return s
}

// place appends a partition's rows to its open file, opens one when the cap
// allows, or leaves them waiting. s.mu is held, and released on return.
func (b *batch) place(ctx context.Context, d *dest, s *slot, rec arrow.RecordBatch) error {
	// Waiting rows count as use too, so that idle files are told apart.
	s.used.Store(b.clock.Load())
	if s.file == nil && !b.w.Clustered && b.reserve(s) {
		s.file = &openFile{counted: true} // opened by appendTo
	}
	if s.file != nil {
		err := b.takeWaiting(d, s)
		if err == nil {
			err = b.appendTo(d, s, rec)
		}
		s.mu.Unlock()
		return err
	}
	n := recordSize(rec)
	rec, err := ownRows(ctx, rec, n)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.waiting = append(s.waiting, rec)
	s.waitB += n
	s.mu.Unlock()
	if b.buffered.Add(n) > b.bufferLimit {
		return b.flushWaiting(ctx, false)
	}
	return nil
}

// reserve takes one place under the open-file cap for slot s, closing the
// least recently used file when it has been idle for a while: time-ordered
// input leaves yesterday's partitions idle, and holding their files would
// make today's rows wait.
func (b *batch) reserve(s *slot) bool {
	limit := int64(b.maxOpen)
	for {
		n := b.open.Load()
		if n >= limit {
			if !b.evict(s, idleRecords) {
				return false
			}
			// The victim's place was given back; take it like any other.
			continue
		}
		if b.open.CompareAndSwap(n, n+1) {
			s.holds.Store(true)
			return true
		}
	}
}

// release gives back slot s's place under the open-file cap; its file, if
// it had one, is closed.
func (b *batch) release(s *slot) {
	s.holds.Store(false)
	b.open.Add(-1)
}

// idleRecords is how many records a partition may miss before its file
// counts as idle: rows spread over more partitions than the cap touch
// most of them in every record, and closing their files would only make
// small ones; time-ordered input stops touching yesterday's for good.
const idleRecords = 4

// evict gives back the place of the least recently used slot holding one,
// closing its file, if none of the last idle records had rows for it. It
// reports whether a place was given back.
func (b *batch) evict(self *slot, idle int64) bool {
	now := b.clock.Load()
	var victim *slot
	var vd *dest
	b.mu.Lock()
	for _, d := range b.dests {
		d.mu.Lock()
		for _, s := range d.slots {
			if s == self || !s.holds.Load() {
				continue
			}
			u := s.used.Load()
			if now-u < idle {
				continue
			}
			if victim == nil || u < victim.used.Load() {
				victim, vd = s, d
			}
		}
		d.mu.Unlock()
	}
	b.mu.Unlock()
	if victim == nil || !victim.mu.TryLock() {
		return false
	}
	defer victim.mu.Unlock()
	if victim.file == nil || !victim.file.counted {
		return false
	}
	if err := b.roll(vd, victim, false); err != nil {
		// The file is lost with its rows: the batch must fail.
		b.fail(err)
	}
	return true
}

// fail records an error met where it cannot be returned (closing another
// slot's file); the batch fails with it when it finishes.
func (b *batch) fail(err error) {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// appendTo writes rec to the slot's file, opening it first, and rolls the
// file when it reaches the target size, in the middle of rec if need be;
// s.mu is held.
func (b *batch) appendTo(d *dest, s *slot, rec arrow.RecordBatch) error {
	rec.Retain()
	defer func() { rec.Release() }()
	for {
		if s.file == nil || s.file.enc == nil {
			counted := s.file != nil && s.file.counted
			f, err := b.create(d, s, rec)
			if err != nil {
				if counted {
					b.release(s) // create closed what it opened
				}
				s.file = nil
				return err
			}
			f.counted = counted
			s.file = f
		}
		f := s.file
		taken, full, err := f.enc.Write(rec)
		if err != nil {
			return fmt.Errorf("encode data file %s: %w", f.path, err)
		}
		f.rows += taken
		if full {
			// Keep the slot's place under the cap for its next rows.
			if err := b.roll(d, s, true); err != nil {
				return err
			}
		}
		if taken == rec.NumRows() {
			return nil
		}
		rest := rec.NewSlice(taken, rec.NumRows())
		rec.Release()
		rec = rest
	}
}

func (b *batch) create(d *dest, s *slot, first arrow.RecordBatch) (*openFile, error) {
	return b.openFile(d, s.dir, func(out *countingWriter) (fileEncoder, error) {
		return d.opts.newEncoder(d.schema, out, first)
	})
}

// openFile creates a data file of d in dir (under data/) and starts its
// encoder.
func (b *batch) openFile(d *dest, dir string, start func(*countingWriter) (fileEncoder, error)) (*openFile, error) {
	name := fmt.Sprintf("%s-%s-%05d.parquet", b.w.FilePrefix, uuid.NewString()[:8], b.seq.Add(1))
	if dir != "" {
		name = dir + "/" + name
	}
	path := d.locs.NewDataLocation(name)
	fw, err := d.wfs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", path, err)
	}
	out := &countingWriter{w: fw}
	enc, err := start(out)
	if err != nil {
		_ = fw.Close()
		_ = d.wfs.Remove(path)
		return nil, fmt.Errorf("start data file %s: %w", path, err)
	}
	b.opened()
	return &openFile{path: path, out: out, enc: enc}, nil
}

// opened counts a data file opened.
func (b *batch) opened() {
	n := b.live.Add(1)
	for {
		p := b.peakOpen.Load()
		if n <= p || b.peakOpen.CompareAndSwap(p, n) {
			break
		}
	}
}

// roll closes the slot's file and turns its footer into a data-file entry;
// keep leaves the slot its place under the open-file cap.
func (b *batch) roll(d *dest, s *slot, keep bool) error {
	f := s.file
	if f == nil {
		return nil
	}
	keep = keep && f.counted
	if keep {
		s.file = &openFile{counted: true}
	} else {
		s.file = nil
	}
	if f.enc == nil {
		if f.counted && !keep {
			b.release(s)
		}
		return nil
	}
	meta, err := f.enc.Close()
	// The place is given back only once the file is closed: given back
	// before, another slot would open a file while this one still is.
	b.live.Add(-1)
	if f.counted && !keep {
		b.release(s)
	}
	if err != nil {
		_ = d.wfs.Remove(f.path)
		return fmt.Errorf("finish data file %s: %w", f.path, err)
	}
	args := table.DataFileArgs{
		Schema:     d.fileSchema,
		Spec:       d.tbl.Spec(),
		Format:     iceberg.ParquetFile,
		Metadata:   meta,
		FilePath:   f.path,
		FileSize:   f.out.n,
		Content:    iceberg.EntryContentData,
		Properties: metricsProperties(d.tbl.Properties(), meta),
		// SortOrderID stays 0, unsorted: rows are written in the order they
		// arrive, and the table's sort order id would tell engines the file
		// is sorted by it.
		FormatVersion: d.tbl.Metadata().Version(),
	}
	if s.key != nil {
		args.PartitionValues = s.key.values
	}
	df, err := table.DataFileFromMetadata(args)
	if err != nil {
		_ = d.wfs.Remove(f.path)
		return fmt.Errorf("data file %s statistics: %w", f.path, err)
	}
	d.mu.Lock()
	d.files = append(d.files, ingest.DataFile{Table: d.name, Path: f.path, SizeBytes: f.out.n, Rows: f.rows, File: df})
	d.mu.Unlock()
	return nil
}

// flushWaiting writes waiting rows, largest partitions first, until they
// fit half the budget (all of them when all is set), one partition at a
// time into a file of its own (or its open file).
func (b *batch) flushWaiting(ctx context.Context, all bool) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	type waiting struct {
		d *dest
		s *slot
		n int64
	}
	var ws []waiting
	b.mu.Lock()
	for _, d := range b.dests {
		d.mu.Lock()
		for _, s := range d.slots {
			ws = append(ws, waiting{d, s, 0})
		}
		d.mu.Unlock()
	}
	b.mu.Unlock()
	for i := range ws {
		ws[i].s.mu.Lock()
		ws[i].n = ws[i].s.waitB
		ws[i].s.mu.Unlock()
	}
	slices.SortFunc(ws, func(a, c waiting) int { return int(c.n - a.n) })
	for _, w := range ws {
		if w.n == 0 || (!all && b.buffered.Load() <= b.bufferLimit/2) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.drain(w.d, w.s); err != nil {
			return err
		}
	}
	return nil
}

// drain writes a slot's waiting rows; a file opened for them alone is
// closed after. That file counts against the cap too: when no place is
// free, the least recently used file is closed, idle or not, since the
// waiting rows must go somewhere.
func (b *batch) drain(d *dest, s *slot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) == 0 {
		return nil
	}
	own := s.file == nil
	if own {
		for !b.reserve(s) {
			if !b.evict(s, 0) {
				// Every place is held by a slot being written right now;
				// they are released within one append.
				runtime.Gosched()
			}
		}
		s.file = &openFile{counted: true}
	}
	err := b.takeWaiting(d, s)
	if own && s.file != nil {
		err = errors.Join(err, b.roll(d, s, false))
	}
	return err
}

// takeWaiting appends the slot's waiting rows to its file (opening one if
// it has none); s.mu is held.
func (b *batch) takeWaiting(d *dest, s *slot) error {
	recs, n := s.waiting, s.waitB
	if len(recs) == 0 {
		return nil
	}
	s.waiting, s.waitB = nil, 0
	b.buffered.Add(-n)
	var err error
	for _, r := range recs {
		if err == nil {
			err = b.appendTo(d, s, r)
		}
		r.Release()
	}
	return err
}

// finish writes what still waits and closes every file, on all cores: the
// last row groups and footers are a good part of the encoding.
func (b *batch) finish(ctx context.Context, workers int) error {
	type job struct {
		d *dest
		s *slot
	}
	// First the open files, each taking its waiting rows; then the
	// partitions that only have rows waiting, each in a file of its own,
	// no more at once than the cap allows.
	var open, waiting []job
	for _, d := range b.dests {
		for _, s := range d.slots {
			if s.file != nil {
				open = append(open, job{d, s})
			} else if len(s.waiting) > 0 {
				waiting = append(waiting, job{d, s})
			}
		}
	}
	run := func(jobs []job, workers int) error {
		next := make(chan job)
		errs := make(chan error, workers)
		for range workers {
			go func() {
				var first error
				for j := range next {
					if first != nil || ctx.Err() != nil {
						continue
					}
					if first = b.drain(j.d, j.s); first != nil {
						continue
					}
					j.s.mu.Lock()
					first = b.roll(j.d, j.s, false)
					j.s.mu.Unlock()
				}
				errs <- first
			}()
		}
		for _, j := range jobs {
			next <- j
		}
		close(next)
		var err error
		for range workers {
			err = errors.Join(err, <-errs)
		}
		return err
	}
	err := run(open, workers)
	if err == nil {
		err = run(waiting, max(1, min(workers, b.maxOpen)))
	}
	if err == nil {
		err = ctx.Err()
	}
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return errors.Join(b.err, err)
}

// abort drops waiting rows and removes files still open after a failure.
func (b *batch) abort() {
	for _, d := range b.dests {
		for _, s := range d.slots {
			s.mu.Lock()
			for _, r := range s.waiting {
				r.Release()
			}
			s.waiting = nil
			if f := s.file; f != nil && f.enc != nil {
				_, _ = f.enc.Close()
				_ = d.wfs.Remove(f.path)
			}
			s.file = nil
			s.mu.Unlock()
		}
	}
}

// safePath turns a Hive-style partition path (name=value/..., values
// URL-escaped) into one whose characters need no escaping in any URL or
// file system. Readers take partition values from the manifests, never the
// path; but an escaped path is a trap between engines: Iceberg's Java
// FileIO keeps "%3A" literally in the file name, iceberg-go decodes it, so
// each would look for the other's files under another name.
func safePath(p string) string {
	var b strings.Builder
	for i, seg := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if v, err := url.QueryUnescape(seg); err == nil {
			seg = v
		}
		for _, r := range seg {
			if r == '=' || r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

func recordSize(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += rawSize(c)
	}
	return n
}

func (b *batch) result() Result {
	res := Result{Tables: map[string]*table.Table{}, PeakOpenFiles: int(b.peakOpen.Load())}
	for name, d := range b.dests {
		res.Files = append(res.Files, d.files...)
		res.Rows += d.rows
		res.Tables[name] = d.tbl
	}
	return res
}
