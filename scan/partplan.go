package scan

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// This file plans the filtered scans a table's partitioning decides.
// iceberg-go plans a filtered scan by decoding every manifest entry with
// the metrics of every column (value, null and NaN counts, lower and upper
// bounds) and testing them. When the filter names only columns the
// partition spec captures exactly (identity columns; ranges of a time or
// truncated column that start and end where the transform's values do, a
// whole day for a day(ts) table), a file's partition tuple alone tells
// whether all its rows match or none does, so the metrics are not needed.
// Decoding the entries without them saves little of a plan (the scan
// benchmark's: 2.7–2.9 ms against iceberg-go's 2.8–3.0 ms; parsing the
// manifest's header and inflating it remain); what counts is that every
// file planned is known to match whole, so it is read unfiltered, and
// directly (direct.go), and the first ones while the plan goes on
// (readahead.go).

// planByPartition plans the scan of r's snapshot from the manifests'
// partition tuples alone when they decide r's pushed filter for every data
// file; ok is false, with nothing planned, when they do not, and iceberg-go
// plans. It needs floe to have written every data file of the snapshot
// (floeWrote): such a file holds every column of the schema it was written
// with, so when a selected column is in every schema the table has had,
// every file holds it, which the manifests' column sizes would otherwise
// have to tell (holdsAny).
func (r *tableReader) planByPartition(ctx context.Context) (tasks []table.FileScanTask, ok bool, err error) {
	meta := r.rt.tbl.Metadata()
	if r.pushed == nil || (len(r.selected) > 0 && !heldSinceFirstSchema(meta, r.proj)) {
		return nil, false, nil
	}
	snap, err := r.scan.ResolveSnapshot()
	if err != nil || snap == nil || !r.floeFiles() {
		return nil, false, nil // iceberg-go's plan says what is wrong, if anything
	}
	bound, err := iceberg.BindExpr(r.sc, r.pushed, true)
	if err != nil {
		return nil, false, nil
	}
	fs, err := r.rt.tbl.FS(ctx)
	if err != nil {
		return nil, false, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, false, err
	}
	deciders := map[int32]*partitionDecider{}
	var read []iceberg.ManifestFile
	var decide []*partitionDecider
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			return nil, false, nil // deletes: iceberg-go matches them to data files
		}
		d, seen := deciders[m.PartitionSpecID()]
		if !seen {
			d = newPartitionDecider(meta.PartitionSpecByID(int(m.PartitionSpecID())), r.sc, bound)
			deciders[m.PartitionSpecID()] = d
		}
		if d == nil {
			return nil, false, nil
		}
		if (m.HasAddedFiles() || m.HasExistingFiles()) && d.mayMatch(m) {
			read = append(read, m)
			decide = append(decide, d)
		}
	}
	target := r.rt.tbl.Properties().GetInt64(table.ReadSplitTargetSizeKey, table.ReadSplitTargetSizeDefault)
	per := make([][]table.FileScanTask, len(read))
	var undecided atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, m := range read {
		g.Go(func() error {
			for e, err := range iceberg.EntriesWithProjection(fs, m, true, iceberg.ManifestEntryProjection{}) {
				if err != nil {
					return err
				}
				if gctx.Err() != nil || undecided.Load() {
					return gctx.Err()
				}
				df := e.DataFile()
				if df.ContentType() != iceberg.EntryContentData {
					undecided.Store(true) // iceberg-go reports the broken manifest
					return nil
				}
				match, ok := decide[i].matches(df)
				if !ok {
					undecided.Store(true)
					return nil
				}
				if !match || df.Count() == 0 {
					continue
				}
				task := table.FileScanTask{
					File:       df,
					Length:     df.FileSizeBytes(),
					Residual:   iceberg.AlwaysTrue{},
					FirstRowID: df.FirstRowID(),
				}
				if seq := e.SequenceNum(); seq >= 0 {
					task.DataSequenceNumber = &seq
				}
				split := splitTask(task, target)
				per[i] = append(per[i], split...)
				if len(split) == 1 {
					r.readAhead(ctx, task)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, false, err
	}
	if undecided.Load() {
		return nil, false, nil
	}
	for _, p := range per {
		tasks = append(tasks, p...)
	}
	r.holdsSelected = true
	return tasks, true, nil
}

// heldSinceFirstSchema reports whether a leaf column of proj is in every
// schema of the table, its first (id 0) among them: field ids are never
// reused, so such a column was in the schema every file was written with.
func heldSinceFirstSchema(meta table.Metadata, proj *iceberg.Schema) bool {
	schemas := meta.Schemas()
	first := false
	for _, s := range schemas {
		first = first || s.ID == 0
	}
	if !first {
		return false
	}
	for _, id := range leafIDs(proj.Fields(), nil) {
		all := true
		for _, s := range schemas {
			if _, ok := s.FindFieldByID(id); !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// partitionDecider decides a filter for the data files of one partition
// spec from their partition tuples.
type partitionDecider struct {
	fields []iceberg.NestedField // the spec's partition fields, in order
	// expr is the filter on the partition fields, exactly: a file's tuple
	// satisfies it if and only if every row of the file satisfies the
	// filter, and fails it if and only if none does.
	expr iceberg.BooleanExpression
	eval func(iceberg.StructLike) (bool, error)
}

// newPartitionDecider returns the decider of bound (bound to sc) for the
// files of spec, or nil when the spec does not decide it.
func newPartitionDecider(spec *iceberg.PartitionSpec, sc *iceberg.Schema, bound iceberg.BooleanExpression) *partitionDecider {
	if spec == nil {
		return nil
	}
	expr, err := iceberg.VisitExpr(bound, exactProjection{spec: spec})
	if err != nil || expr == nil {
		return nil
	}
	fields := spec.PartitionType(sc).FieldList
	partSchema := iceberg.NewSchema(0, fields...)
	eval, err := iceberg.ExpressionEvaluator(partSchema, expr, true)
	if err != nil {
		return nil
	}
	if expr, err = iceberg.BindExpr(partSchema, expr, true); err != nil {
		return nil
	}
	return &partitionDecider{fields: fields, expr: expr, eval: eval}
}

// matches decides df; ok is false when its tuple cannot be evaluated (a
// value of another type than the spec's, say).
func (d *partitionDecider) matches(df iceberg.DataFile) (match, ok bool) {
	match, err := d.eval(partitionTuple{fields: d.fields, values: df.Partition()})
	return match, err == nil
}

// mayMatch reports whether a file of manifest m may match, by the bounds
// of its partition fields the manifest list records.
func (d *partitionDecider) mayMatch(m iceberg.ManifestFile) bool {
	ok, err := iceberg.VisitExpr(d.expr, summaryTest{fields: d.fields, sums: m.Partitions()})
	return ok || err != nil
}

// partitionTuple is a data file's partition values as a StructLike over
// the spec's partition fields.
type partitionTuple struct {
	fields []iceberg.NestedField
	values map[int]any
}

func (p partitionTuple) Size() int        { return len(p.fields) }
func (p partitionTuple) Get(i int) any    { return p.values[p.fields[i].ID] }
func (p partitionTuple) Set(i int, v any) { p.values[p.fields[i].ID] = v }

// exactProjection maps a bound filter onto the partition fields of spec,
// leaf by leaf, or yields nil when a leaf has no exact image. A comparison
// carries the partition field's NOT NULL: iceberg-go's evaluator orders a
// NULL below every value, where a filter matches no NULL.
type exactProjection struct{ spec *iceberg.PartitionSpec }

func (exactProjection) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (exactProjection) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }

// VisitNot has no exact image: NOT of a NULL partition value's comparison
// would match it. Bound filters carry NOT on their leaves alone.
func (exactProjection) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression { return nil }

func (exactProjection) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	if l == nil || r == nil {
		return nil
	}
	return iceberg.NewAnd(l, r)
}

func (exactProjection) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	if l == nil || r == nil {
		return nil
	}
	return iceberg.NewOr(l, r)
}

func (exactProjection) VisitUnbound(iceberg.UnboundPredicate) iceberg.BooleanExpression { return nil }

func (p exactProjection) VisitBound(pred iceberg.BoundPredicate) iceberg.BooleanExpression {
	id := pred.Ref().Field().ID
	for _, pf := range p.spec.Fields() {
		if len(pf.SourceIDs) != 1 || pf.SourceIDs[0] != id {
			continue
		}
		if e := exactLeaf(pf, pred); e != nil {
			return e
		}
	}
	return nil
}

// exactLeaf is pred on the partition field pf when pf's values decide it
// exactly, nil otherwise.
func exactLeaf(pf iceberg.PartitionField, pred iceberg.BoundPredicate) iceberg.BooleanExpression {
	ref := iceberg.Reference(pf.Name)
	op := pred.Op()
	if op == iceberg.OpIsNull || op == iceberg.OpNotNull {
		// Every transform but void maps NULL, and only NULL, to NULL.
		if _, void := pf.Transform.(iceberg.VoidTransform); void {
			return nil
		}
		return iceberg.UnaryPredicate(op, ref)
	}
	notNull := iceberg.NotNull(ref)
	switch t := pf.Transform.(type) {
	case iceberg.IdentityTransform:
		switch pred.Ref().Field().Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			return nil // NaN orders differently in a filter and in iceberg-go's evaluator
		}
		switch pred := pred.(type) {
		case iceberg.BoundLiteralPredicate:
			return iceberg.NewAnd(notNull, pred.AsUnbound(ref, pred.Literal()))
		case iceberg.BoundSetPredicate:
			return iceberg.NewAnd(notNull, pred.AsUnbound(ref, pred.Literals().Members()))
		}
		return nil
	case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform, iceberg.HourTransform, iceberg.TruncateTransform:
		switch pred.Ref().Field().Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
		default:
			return nil
		}
		lp, ok := pred.(iceberg.BoundLiteralPredicate)
		if !ok {
			return nil
		}
		lit, ok := lp.Literal().(iceberg.NumericLiteral)
		if !ok {
			return nil
		}
		// The transform is monotonic, so c < L holds exactly when
		// t(c) < t(L) if L-1 falls in an earlier partition than L: L
		// starts its partition. Likewise c <= L when L ends its own.
		var lo, hi iceberg.Literal
		switch op {
		case iceberg.OpLT, iceberg.OpGTEQ:
			lo, hi = lit.Decrement(), lit
		case iceberg.OpLTEQ, iceberg.OpGT:
			lo, hi = lit, lit.Increment()
		default:
			return nil
		}
		tl, th := t.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lo}), t.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: hi})
		if !tl.Valid || !th.Valid {
			return nil
		}
		if c, ok := compareLiterals(tl.Val, th.Val); !ok || c >= 0 {
			return nil
		}
		at := t.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
		if !at.Valid {
			return nil
		}
		return iceberg.NewAnd(notNull, iceberg.LiteralPredicate(op, ref, at.Val))
	}
	return nil
}

// summaryTest tells whether a manifest may hold a file matching a filter
// on its partition fields, from the manifest list's summaries of them; it
// says true when it cannot tell.
type summaryTest struct {
	fields []iceberg.NestedField
	sums   []iceberg.FieldSummary
}

func (summaryTest) VisitTrue() bool                            { return true }
func (summaryTest) VisitFalse() bool                           { return false }
func (summaryTest) VisitNot(bool) bool                         { return true }
func (summaryTest) VisitAnd(l, r bool) bool                    { return l && r }
func (summaryTest) VisitOr(l, r bool) bool                     { return l || r }
func (summaryTest) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

func (s summaryTest) VisitBound(pred iceberg.BoundPredicate) bool {
	i := -1
	for j, f := range s.fields {
		if f.ID == pred.Ref().Field().ID {
			i = j
		}
	}
	if i < 0 || i >= len(s.sums) {
		return true
	}
	sum, typ := s.sums[i], s.fields[i].Type
	switch pred.Op() {
	case iceberg.OpIsNull:
		return sum.ContainsNull
	case iceberg.OpNotNull:
		// No lower bound with NULLs means NULLs alone, except for
		// strings and binary values: iceberg-go writes an empty one's
		// bound as null (see lostLowerBound), so '' and NULL read so too.
		switch typ.(type) {
		case iceberg.StringType, iceberg.BinaryType:
			return true
		}
		return !sum.ContainsNull || sum.LowerBound != nil
	}
	lower, upper := boundLiteral(typ, sum.LowerBound), boundLiteral(typ, sum.UpperBound)
	if lower == nil || upper == nil {
		return true
	}
	// within reports whether lit may lie in [lower, upper].
	within := func(lit iceberg.Literal, op iceberg.Operation) bool {
		cl, okl := compareLiterals(lower, lit)
		cu, oku := compareLiterals(upper, lit)
		if !okl || !oku {
			return true
		}
		switch op {
		case iceberg.OpLT:
			return cl < 0
		case iceberg.OpLTEQ:
			return cl <= 0
		case iceberg.OpGT:
			return cu > 0
		case iceberg.OpGTEQ:
			return cu >= 0
		case iceberg.OpEQ, iceberg.OpIn:
			return cl <= 0 && cu >= 0
		}
		return true
	}
	switch pred := pred.(type) {
	case iceberg.BoundLiteralPredicate:
		return within(pred.Literal(), pred.Op())
	case iceberg.BoundSetPredicate:
		if pred.Op() != iceberg.OpIn {
			return true
		}
		for _, lit := range pred.Literals().Members() {
			if within(lit, iceberg.OpIn) {
				return true
			}
		}
		return false
	}
	return true
}

// boundLiteral decodes a summary bound, nil when absent or unreadable.
func boundLiteral(typ iceberg.Type, b *[]byte) iceberg.Literal {
	if b == nil {
		return nil
	}
	lit, err := iceberg.LiteralFromBytes(typ, *b)
	if err != nil {
		return nil
	}
	return lit
}
