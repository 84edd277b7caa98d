// Package upsert merges a batch into a table by key: it reads the batch's
// changes, keeps the last change of each key (Changes), finds the table's
// rows those keys replace, and stages their deletes for the batch's
// commit (Deletes): deletion vectors on format-version 3 tables, equality
// deletes on format-version 2.
package upsert

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// Spec says how a batch's rows change the table.
type Spec struct {
	// Keys are the key columns.
	Keys []string
	// OrderBy orders the changes to one key; empty: input order.
	OrderBy []string
	// OpColumn holds each row's operation code; empty: all upserts.
	OpColumn string
	// Ops maps operation codes to config.OpUpsert or config.OpDelete.
	Ops map[string]string
	// WriteOp keeps the op column in the rows written.
	WriteOp bool
	// IntKey reads the key as one int64 (see isIntKey); the caller
	// decides it from the table's key columns.
	IntKey bool
	// Distinct refuses a key changed in two parts: the parts are the key
	// sets of a cluster's workers, whose changes of one key cannot be
	// ordered (see MergeKeys).
	Distinct bool
}

// The columns source.format debezium-json adds to each row, as
// Debezium's ExtractNewRecordState transform names them.
const (
	DebeziumOp  = "__op"
	DebeziumLSN = "__source_lsn"
	DebeziumTs  = "__ts_ms"
)

// SpecFor is the spec of a pipeline in mode upsert with key columns keys.
// Debezium's change events say their operation in __op and are ordered by
// their source LSN, then their time, unless the sink says otherwise.
func SpecFor(p *config.Pipeline, keys []string, intKey bool) Spec {
	s := &p.Sink
	spec := Spec{Keys: keys, OrderBy: s.Upsert.OrderBy, OpColumn: s.CDC.OpColumn, Ops: s.CDC.OpCodes(),
		WriteOp: s.CDC.WriteOpColumn, IntKey: intKey}
	switch {
	case p.Source.Format == "debezium-json" || p.Source.Format == "debezium-avro":
		if spec.OpColumn == "" {
			spec.OpColumn = DebeziumOp
		}
		if len(spec.OrderBy) == 0 {
			spec.OrderBy = []string{DebeziumLSN, DebeziumTs}
		}
	case spec.OpColumn == "" && tombstones(&p.Source):
		spec.OpColumn = DebeziumOp
	}
	return spec
}

// tombstones tells whether src's input may delete keys without a row:
// Kafka values of rows (not Debezium's events, whose tombstones follow
// their delete event and are skipped), whose null values are the deletes
// of their keys.
func tombstones(src *config.Source) bool {
	if src.Type != "kafka" || strings.TrimSpace(src.Options["objectNotifications"]) != "" {
		return false
	}
	switch src.Format {
	case "json", "avro", "protobuf", "json-schema":
		return true
	}
	return false
}

// SourceUpsert is what a source of pipeline p hands its deletes over
// with (source.Env.Upsert): nil unless p upserts rows of a Kafka topic.
// Without an op column of
// the sink's, a Kafka source of rows adds __op, so that its tombstones
// can delete.
func SourceUpsert(p *config.Pipeline) *source.Upsert {
	if !p.Sink.Upserts() || !tombstones(&p.Source) {
		return nil
	}
	spec := SpecFor(p, nil, false)
	u := &source.Upsert{Keys: p.Sink.IdentifierFields, OpColumn: spec.OpColumn, AddOp: p.Sink.CDC.OpColumn == "" && tombstones(&p.Source)}
	codes := slices.Sorted(maps.Keys(spec.Ops))
	for _, pref := range []string{"d", "u"} {
		if spec.Ops[pref] == config.OpDelete && u.Delete == "" {
			u.Delete = pref
		}
		if spec.Ops[pref] == config.OpUpsert && u.Upsert == "" {
			u.Upsert = pref
		}
	}
	for _, c := range codes {
		if spec.Ops[c] == config.OpDelete && u.Delete == "" {
			u.Delete = c
		}
		if spec.Ops[c] == config.OpUpsert && u.Upsert == "" {
			u.Upsert = c
		}
	}
	return u
}

// Written is the schema of the rows a batch with input schema in writes:
// without the op column, unless it is written.
func (s Spec) Written(in *arrow.Schema) *arrow.Schema {
	if s.OpColumn == "" || s.WriteOp {
		return in
	}
	idx := in.FieldIndices(s.OpColumn)
	if len(idx) != 1 {
		return in
	}
	md := in.Metadata()
	return arrow.NewSchema(slices.Delete(slices.Clone(in.Fields()), idx[0], idx[0]+1), &md)
}

// Changes are a batch's changes, the last one of each key kept.
type Changes struct {
	spec  Spec
	parts []*partRecs
	ints  map[int64]int32
	strs  map[string]int32
	wins  []win
	bloom bloomKeys
	// rowIDs, set by Deletes.KeepRowIDs, is the _row_id each key's upsert
	// keeps, by slot, -1 for a new one.
	rowIDs []int64
	// Rows counts the batch's input rows; Deletes the keys whose last
	// change deletes them.
	Rows, Deletes int64
}

// partRecs are the records of one input part.
type partRecs struct {
	name string
	recs []arrow.RecordBatch
}

// win is the change that wins for one key: where its row is, whether it
// deletes the key, and its order-by values.
type win struct {
	part, rec, row int32
	del            bool
	order          []ordVal
}

// Collect reads every part of a batch (keep, drop and only applied) and
// keeps the last change of each key. A null key, a missing or unknown
// operation code or an order-by value of another type than the column's
// earlier ones is bad input, naming the part and the row.
func Collect(ctx context.Context, parts []ingest.Part, project *conform.Projection, spec Spec) (*Changes, error) {
	c := &Changes{spec: spec, parts: make([]*partRecs, len(parts))}
	if spec.IntKey {
		c.ints = map[int64]int32{}
	} else {
		c.strs = map[string]int32{}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range parts {
		g.Go(func() error {
			recs, err := readPart(gctx, p, project)
			c.parts[i] = &partRecs{name: p.Name(), recs: recs}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		c.Release()
		return nil, err
	}
	for pi, p := range c.parts {
		var row int64 // rows of the part before the record
		for ri, rec := range p.recs {
			if err := c.add(int32(pi), int32(ri), rec, row); err != nil {
				c.Release()
				if errors.Is(err, ingest.ErrConfig) {
					// A key no table can have is the pipeline's fault,
					// not the file's.
					return nil, err
				}
				return nil, &ingest.BadFileError{Path: p.name, Err: err}
			}
			row += rec.NumRows()
		}
		c.Rows += row
	}
	for _, w := range c.wins {
		if w.del {
			c.Deletes++
		}
	}
	return c, nil
}

// readPart reads one part's records, projected, whole.
func readPart(ctx context.Context, p ingest.Part, project *conform.Projection) (recs []arrow.RecordBatch, err error) {
	rdr, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	defer func() {
		if err != nil {
			for _, r := range recs {
				r.Release()
			}
			recs = nil
		}
	}()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if project != nil {
			if rec, err = project.Apply(rec); err != nil {
				return recs, err
			}
		} else {
			rec.Retain()
		}
		recs = append(recs, rec)
	}
	return recs, rdr.Err()
}

// add merges the changes of one record, whose first row is the part's
// row-th.
func (c *Changes) add(part, ri int32, rec arrow.RecordBatch, row int64) error {
	keys := make([]arrow.Array, len(c.spec.Keys))
	for i, k := range c.spec.Keys {
		a, err := column(rec, k, "key column")
		if err != nil {
			return err
		}
		if err := checkKeyType(k, a.DataType()); err != nil {
			return err
		}
		keys[i] = a
	}
	kr, err := newKeyReader(keys, c.spec.IntKey)
	if err != nil {
		return err
	}
	var ops bytesColumn
	var opArr arrow.Array
	if c.spec.OpColumn != "" {
		if opArr, err = column(rec, c.spec.OpColumn, "op column (sink.cdc.op-column)"); err != nil {
			return err
		}
		if ops, err = asBytes(opArr); err != nil {
			return fmt.Errorf("op column %s: %w", c.spec.OpColumn, err)
		}
	}
	orders := make([]ordColumn, len(c.spec.OrderBy))
	for i, name := range c.spec.OrderBy {
		a, err := column(rec, name, "order-by column (sink.upsert.order-by)")
		if err != nil {
			return err
		}
		if orders[i], err = newOrdColumn(a); err != nil {
			return fmt.Errorf("order-by column %s: %w", name, err)
		}
	}
	var buf []byte
	for i := range int(rec.NumRows()) {
		if n := kr.null(i); n >= 0 {
			return fmt.Errorf("row %d: key column %s is null; every change needs its key", row+int64(i)+1, c.spec.Keys[n])
		}
		del := false
		if ops != nil {
			if opArr.IsNull(i) {
				return fmt.Errorf("row %d: op column %s is null; every change needs an operation code (%s)", row+int64(i)+1, c.spec.OpColumn, c.codes())
			}
			buf = ops(buf[:0], i)
			op, ok := c.spec.Ops[string(buf)]
			if !ok {
				return fmt.Errorf("row %d: operation code %q in column %s is not one of %s; map it with sink.cdc.ops", row+int64(i)+1, buf, c.spec.OpColumn, c.codes())
			}
			del = op == config.OpDelete
		}
		w := win{part: part, rec: ri, row: int32(i), del: del}
		if len(orders) > 0 {
			w.order = make([]ordVal, len(orders))
			for j, o := range orders {
				w.order[j] = o(i)
			}
		}
		var slot int32
		var seen bool
		if c.spec.IntKey {
			k := kr.int(i)
			if slot, seen = c.ints[k]; !seen {
				c.ints[k] = int32(len(c.wins))
			}
		} else {
			buf = kr.appendBytes(buf[:0], i)
			if slot, seen = c.strs[string(buf)]; !seen {
				c.strs[string(buf)] = int32(len(c.wins))
			}
		}
		if !seen {
			c.wins = append(c.wins, w)
			continue
		}
		if c.spec.Distinct && c.wins[slot].part != part {
			return &MovedKeyError{Key: keyString(c.spec.Keys, keys, i), Parts: [2]string{c.parts[c.wins[slot].part].name, c.parts[part].name}}
		}
		cmp, err := compareOrder(w.order, c.wins[slot].order)
		if err != nil {
			return fmt.Errorf("row %d: %w", row+int64(i)+1, err)
		}
		if cmp >= 0 { // a later change wins a tie
			c.wins[slot] = w
		}
	}
	return nil
}

// codes lists the operation codes understood, for messages.
func (c *Changes) codes() string {
	return strings.Join(slices.Sorted(maps.Keys(c.spec.Ops)), ", ")
}

// column is rec's column name, or an error naming what it was asked for.
func column(rec arrow.RecordBatch, name, what string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: the input has no %s %s (its columns: %s)", ingest.ErrSchemaMismatch, what, name, columnNames(rec.Schema()))
	}
	return rec.Column(idx[0]), nil
}

func columnNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Keys is the number of keys the batch changes.
func (c *Changes) Keys() int { return len(c.wins) }

// HasInt reports whether the batch changes the integer key k.
func (c *Changes) HasInt(k int64) bool {
	_, ok := c.ints[k]
	return ok
}

// HasBytes reports whether the batch changes the key encoded as k.
func (c *Changes) HasBytes(k []byte) bool {
	_, ok := c.strs[string(k)]
	return ok
}

// Upserts are the rows the batch writes, one part per input part: the
// winning upserts, without the op column unless it is written, and after
// Deletes.KeepRowIDs with their _row_id column.
func (c *Changes) Upserts(ctx context.Context) ([]ingest.Part, error) {
	masks := c.masks(func(w win) bool { return !w.del })
	var ids [][][]int64
	if c.rowIDs != nil {
		var err error
		if ids, err = c.rowIDValues(masks); err != nil {
			return nil, err
		}
	}
	var out []ingest.Part
	for pi, p := range c.parts {
		mp := &memPart{name: p.name}
		for ri, rec := range p.recs {
			if ids != nil && ids[pi][ri] != nil {
				rec = withRowIDs(rec, ids[pi][ri])
			} else {
				rec.Retain()
			}
			kept, err := filterRecord(ctx, rec, masks[pi][ri])
			rec.Release()
			if err != nil {
				mp.release()
				ReleaseParts(out)
				return nil, err
			}
			if kept == nil {
				continue
			}
			if out := c.spec.Written(kept.Schema()); out != kept.Schema() {
				in := kept
				kept = removeColumn(in, in.Schema().FieldIndices(c.spec.OpColumn)[0])
				in.Release()
			}
			mp.recs = append(mp.recs, c.requireKeys(kept))
		}
		if len(mp.recs) > 0 {
			out = append(out, mp)
		}
	}
	return out, nil
}

// rowIDValues are the row ids of the records holding upserts, per part
// and record (nil for the others): each upsert's kept id, -1 for the rest.
func (c *Changes) rowIDValues(masks [][][]bool) ([][][]int64, error) {
	vals := make([][][]int64, len(c.parts))
	for pi, p := range c.parts {
		vals[pi] = make([][]int64, len(p.recs))
		for ri, rec := range p.recs {
			if masks[pi][ri] == nil {
				continue
			}
			if rec.Schema().HasField(rowIDField.Name) {
				return nil, fmt.Errorf("%w: the input has a column %s, which format-version 3 reserves for row lineage; drop it from the input (sink.drop) or rename it", ingest.ErrSchemaMismatch, rowIDField.Name)
			}
			v := make([]int64, rec.NumRows())
			for i := range v {
				v[i] = -1
			}
			vals[pi][ri] = v
		}
	}
	for slot, w := range c.wins {
		if !w.del {
			vals[w.part][w.rec][w.row] = c.rowIDs[slot]
		}
	}
	return vals, nil
}

// withRowIDs is rec with the column of row ids ids added last (null where
// an id is -1).
func withRowIDs(rec arrow.RecordBatch, ids []int64) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	valid := make([]bool, len(ids))
	for i, id := range ids {
		valid[i] = id >= 0
	}
	b.AppendValues(ids, valid)
	col := b.NewArray()
	defer col.Release()
	md := rec.Schema().Metadata()
	fields := append(slices.Clone(rec.Schema().Fields()), rowIDField)
	cols := append(slices.Clone(rec.Columns()), col)
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}

// KeyRecords are the key columns of every key the batch changes, one row
// per key, read from the winning rows.
func (c *Changes) KeyRecords(ctx context.Context) ([]arrow.RecordBatch, error) {
	masks := c.masks(func(win) bool { return true })
	var out []arrow.RecordBatch
	for pi, p := range c.parts {
		for ri, rec := range p.recs {
			cols := make([]arrow.Array, len(c.spec.Keys))
			fields := make([]arrow.Field, len(c.spec.Keys))
			for i, k := range c.spec.Keys {
				idx := rec.Schema().FieldIndices(k)
				cols[i], fields[i] = rec.Column(idx[0]), rec.Schema().Field(idx[0])
			}
			keys := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
			kept, err := filterRecord(ctx, keys, masks[pi][ri])
			keys.Release()
			if err != nil {
				for _, r := range out {
					r.Release()
				}
				return nil, err
			}
			if kept != nil {
				out = append(out, kept)
			}
		}
	}
	return out, nil
}

// masks marks, per part and record, the winning rows that keep selects.
func (c *Changes) masks(keep func(win) bool) [][][]bool {
	m := make([][][]bool, len(c.parts))
	for pi, p := range c.parts {
		m[pi] = make([][]bool, len(p.recs))
	}
	for _, w := range c.wins {
		if !keep(w) {
			continue
		}
		rm := &m[w.part][w.rec]
		if *rm == nil {
			*rm = make([]bool, c.parts[w.part].recs[w.rec].NumRows())
		}
		(*rm)[w.row] = true
	}
	return m
}

// filterRecord keeps the rows of rec that mask marks; nil when none.
func filterRecord(ctx context.Context, rec arrow.RecordBatch, mask []bool) (arrow.RecordBatch, error) {
	if mask == nil {
		return nil, nil
	}
	if !slices.Contains(mask, false) {
		rec.Retain()
		return rec, nil
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(mask, nil)
	m := b.NewArray()
	defer m.Release()
	return compute.FilterRecordBatch(ctx, rec, m, compute.DefaultFilterOptions())
}

// Release frees the batch's records.
func (c *Changes) Release() {
	for _, p := range c.parts {
		if p == nil {
			continue
		}
		for _, r := range p.recs {
			r.Release()
		}
		p.recs = nil
	}
}

// memPart is a part held in memory: rows already read.
type memPart struct {
	name string
	recs []arrow.RecordBatch
}

func (p *memPart) Name() string     { return p.name }
func (p *memPart) SizeBytes() int64 { return -1 }

func (p *memPart) Open(context.Context) (array.RecordReader, error) {
	if len(p.recs) == 0 {
		return nil, errors.New("internal: empty part")
	}
	return array.NewRecordReader(p.recs[0].Schema(), p.recs)
}

func (p *memPart) release() {
	for _, r := range p.recs {
		r.Release()
	}
	p.recs = nil
}

// ReleaseParts frees the parts Upserts returned, once written.
func ReleaseParts(parts []ingest.Part) {
	for _, p := range parts {
		if mp, ok := p.(*memPart); ok {
			mp.release()
		}
	}
}

// removeColumn is rec without its column i.
func removeColumn(rec arrow.RecordBatch, i int) arrow.RecordBatch {
	cols := slices.Delete(slices.Clone(rec.Columns()), i, i+1)
	fields := slices.Delete(slices.Clone(rec.Schema().Fields()), i, i+1)
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}

// requireKeys marks rec's key columns required: Collect found no null in
// them, and the table's identifier fields are required columns.
func (c *Changes) requireKeys(rec arrow.RecordBatch) arrow.RecordBatch {
	fields := slices.Clone(rec.Schema().Fields())
	changed := false
	for i, f := range fields {
		if f.Nullable && slices.Contains(c.spec.Keys, f.Name) {
			fields[i].Nullable = false
			changed = true
		}
	}
	if !changed {
		return rec
	}
	md := rec.Schema().Metadata()
	out := array.NewRecordBatch(arrow.NewSchema(fields, &md), rec.Columns(), rec.NumRows())
	rec.Release()
	return out
}
