package scan_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
	_ "github.com/floe-io/floe/source/files" // registers the "files" source
)

// The filter differential test: random filters over two tables that floe
// wrote, one partitioned by bucket, day and truncate and one plain, each
// of several files of several row groups, scanned by scan.Table and
// planned by Explain, against an oracle in this file. The oracle evaluates
// the generated expression on the generated Go values by the semantics
// docs/reads.md states (three-valued logic with NULL; floats ordered as
// Spark orders them: -0.0 = 0.0, NaN = NaN and above +Inf; strings by
// their UTF-8 bytes), sharing no code with package filter.
//
// The default suite runs seeds 1 and 2; the long run is
//
//	go test ./scan -run TestFilterDifferential -filter-diff-seeds 50
var filterDiffSeeds = flag.Int("filter-diff-seeds", 2, "seeds of TestFilterDifferential (1..N), each with its own tables and filterDiffExprs filters")

// filterDiffExprs filters run per seed, each on both tables.
const filterDiffExprs = 150

func TestFilterDifferential(t *testing.T) {
	t.Parallel()
	var total diffCounts
	for seed := uint64(1); seed <= uint64(*filterDiffSeeds); seed++ {
		c := runFilterDiff(t, seed)
		total.add(c)
		if t.Failed() {
			break
		}
	}
	t.Logf("%d seeds: %d filters, %d scans, %d rows compared, %d wrong rows, %d files pruned wrongly by explain, %d failed scans; tables of %d files, %d row groups",
		*filterDiffSeeds, total.exprs, total.scans, total.rows, total.wrong, total.pruned, total.errors, total.files, total.groups)
	// Pruning has something to prune: several files per table, and the
	// plain tables' files several row groups.
	if seeds := *filterDiffSeeds; total.files < 4*seeds || total.groups < total.files+seeds {
		t.Errorf("%d seeds wrote %d files of %d row groups: too few to prune", seeds, total.files, total.groups)
	}
}

// diffCounts are what a run checked and found: filters, scans, rows
// compared, rows wrongly missing or returned, files explain pruned though
// they hold a matching row, scans that failed (a crash ends the run), and
// the tables' files and row groups.
type diffCounts struct{ exprs, scans, rows, wrong, pruned, errors, files, groups int }

func (c *diffCounts) add(o diffCounts) {
	c.exprs += o.exprs
	c.scans += o.scans
	c.rows += o.rows
	c.wrong += o.wrong
	c.pruned += o.pruned
	c.errors += o.errors
	c.files += o.files
	c.groups += o.groups
}

// runFilterDiff builds the two tables of seed and checks filterDiffExprs
// random filters on each.
func runFilterDiff(t *testing.T, seed uint64) diffCounts {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var batches [][]dRow
	id := int64(0)
	for range 2 {
		// Most rows of a batch fall in a few of its partitions, so that
		// the partitioned table has tens of files, not hundreds.
		home := homeValues{
			stamps: []int64{stamps[rng.IntN(len(stamps))]},
			strs:   []string{strs[rng.IntN(len(strs))], strs[rng.IntN(len(strs))]},
		}
		var b []dRow
		for range 60 {
			b = append(b, genRow(rng, id, home))
			id++
		}
		batches = append(batches, b)
	}
	var rows []dRow
	for _, b := range batches {
		rows = append(rows, b...)
	}
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	// The plain table has no decimal column, which floe writes with
	// arrow-go's Parquet encoder, so that it is written with parquet-go's,
	// floe's default; the partitioned one has it. Filters on dec are
	// checked on the partitioned table alone.
	tables := []struct {
		name, without string
		parts         []string
	}{
		{"plain", "dec", nil},
		{"parts", "", []string{"bucket(l, 2)", "day(ts)", "truncate(s, 1)"}},
	}
	type check struct {
		text string
		uses map[string]bool
		want []int64
	}
	var checks []check
	for range filterDiffExprs {
		e := genExpr(rng, 3)
		c := check{text: e.text(), uses: map[string]bool{}}
		e.columns(c.uses)
		for _, r := range rows {
			if e.eval(&r) == tTrue {
				c.want = append(c.want, r.id)
			}
		}
		checks = append(checks, c)
	}
	// The tables are checked side by side, each by a goroutine counting
	// its own.
	counts := make([]diffCounts, len(tables))
	loaded := make([]*table.Table, len(tables))
	held := make([]map[int64]string, len(tables))
	for i, tc := range tables {
		loaded[i] = writeDiffTable(t, dir, wh, tc.name, tc.without, tc.parts, batches)
		var files, groups int
		held[i], files, groups = fileOfRow(t, loaded[i])
		counts[i].files, counts[i].groups = files, groups
		if len(held[i]) != len(rows) {
			t.Fatalf("seed %d: table %s holds %d rows, want %d", seed, tc.name, len(held[i]), len(rows))
		}
	}
	var wg sync.WaitGroup
	for i, tc := range tables {
		tbl, where := loaded[i], held[i]
		wg.Go(func() {
			ctx := context.Background()
			pool := arrowpool.New()
			c := &counts[i]
			for n, ch := range checks {
				if tc.without != "" && ch.uses[tc.without] {
					continue
				}
				o := scan.Options{Filter: ch.text}
				if n%2 == 1 {
					o.Columns = []string{"id"}
				}
				if n%4 != 3 {
					o.Allocator = pool
				}
				got, err := scanIDsOf(ctx, tbl, o)
				c.exprs++
				c.scans++
				c.rows += len(rows)
				if err != nil {
					c.errors++
					t.Errorf("seed %d, table %s, filter %s: %v", seed, tc.name, ch.text, err)
					continue
				}
				if missing, extra := diffIDs(got, ch.want); len(missing)+len(extra) > 0 {
					c.wrong += len(missing) + len(extra)
					t.Errorf("seed %d, table %s, filter %s:\nmissing %v\nextra %v%s", seed, tc.name, ch.text, missing, extra, describeRows(rows, append(missing, extra...)))
				}
				planned, err := scan.ExplainFiles(ctx, tbl, scan.Options{Filter: ch.text})
				if err != nil {
					c.errors++
					t.Errorf("seed %d, table %s, explain %s: %v", seed, tc.name, ch.text, err)
					continue
				}
				pruned := map[string]bool{}
				for _, id := range ch.want {
					if f := where[id]; !slices.Contains(planned, f) && !pruned[f] {
						pruned[f] = true
						c.pruned++
						t.Errorf("seed %d, table %s, explain %s: prunes %s, which holds matching row %d", seed, tc.name, ch.text, filepath.Base(f), id)
					}
				}
			}
		})
	}
	wg.Wait()
	var total diffCounts
	for _, c := range counts {
		total.add(c)
	}
	total.exprs = len(checks)
	return total
}

// writeDiffTable lands batches, without column without, as Parquet files
// of small row groups and streams them into table db.<name> of warehouse
// wh with floe, one batch per file, partitioned by parts.
func writeDiffTable(t *testing.T, dir, wh, name, without string, parts []string, batches [][]dRow) *table.Table {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, b := range batches {
		rec := diffRecord(b)
		if idx := rec.Schema().FieldIndices(without); len(idx) == 1 {
			fields := slices.Delete(slices.Clone(rec.Schema().Fields()), idx[0], idx[0]+1)
			cols := slices.Delete(slices.Clone(rec.Columns()), idx[0], idx[0]+1)
			cut := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
			rec.Release()
			rec = cut
		}
		recs = append(recs, rec)
	}
	return streamFiles(t, dir, wh, config.Sink{Table: "db." + name, PartitionFields: parts,
		TableProperties: map[string]string{"write.parquet.row-group-size-bytes": "512"}}, recs...)
}

// streamFiles lands each record as a Parquet file of 16-row groups in the
// table's folder of dir and streams them with floe, one batch per file,
// into the table of sink in warehouse wh, which it returns loaded; a later
// call for the same table streams its new files. It releases the records.
func streamFiles(t *testing.T, dir, wh string, sink config.Sink, recs ...arrow.RecordBatch) *table.Table {
	t.Helper()
	name := strings.ReplaceAll(sink.Table, ".", "-")
	landing := filepath.Join(dir, "landing-"+name)
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(16))
	landed, _ := filepath.Glob(filepath.Join(landing, "*.parquet")) // by an earlier call
	for i, rec := range recs {
		err := fixture.WriteParquetWith(filepath.Join(landing, fmt.Sprintf("part-%03d.parquet", len(landed)+i)), props, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := &config.Pipeline{
		Catalog:    config.Catalog{Warehouse: wh},
		Source:     config.Source{Path: landing, Format: "parquet", MaxFilesPerTrigger: 1},
		Sink:       sink,
		Checkpoint: filepath.Join(dir, "checkpoint-"+name),
	}
	cfg.SetDefaults()
	cfg.Maintenance.Enabled = ptr(false)
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cat, _ := fixture.CatalogAt(t, wh)
	ident, err := floe.ParseIdent(sink.Table)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// fileOfRow maps each row's id to the data file holding it, read with
// arrow-go's Parquet reader, and counts the table's files and row groups.
func fileOfRow(t *testing.T, tbl *table.Table) (where map[int64]string, files, groups int) {
	t.Helper()
	out := map[int64]string{}
	fixture.EachParquetFile(t, tbl, fixture.LiveDataFiles(t, tbl), func(path string, rdr *file.Reader) {
		files++
		groups += rdr.NumRowGroups()
		for g := range rdr.NumRowGroups() {
			col, err := rdr.RowGroup(g).Column(0)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, rdr.RowGroup(g).NumRows())
			if _, _, err := col.(*file.Int64ColumnChunkReader).ReadBatch(int64(len(ids)), ids, nil, nil); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				out[id] = path
			}
		}
	})
	return out, files, groups
}

func scanIDsOf(ctx context.Context, tbl *table.Table, o scan.Options) ([]int64, error) {
	_, recs, err := scan.Table(ctx, tbl, o)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		idx := rec.Schema().FieldIndices("id")
		if len(idx) != 1 {
			rec.Release()
			return nil, fmt.Errorf("records without id: %s", rec.Schema())
		}
		ids = append(ids, rec.Column(idx[0]).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	return ids, nil
}

// diffIDs returns the ids of want that got lacks and those got has too
// many times or that want does not hold.
func diffIDs(got, want []int64) (missing, extra []int64) {
	n := map[int64]int{}
	for _, id := range got {
		n[id]++
	}
	for _, id := range want {
		if n[id] == 0 {
			missing = append(missing, id)
		}
		n[id]--
	}
	for id, c := range n {
		for range c {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	return missing, extra
}

func describeRows(rows []dRow, ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 5 {
			b.WriteString("\n  ...")
			break
		}
		fmt.Fprintf(&b, "\n  %s", rows[id].String())
	}
	return b.String()
}

// dRow is a generated row; nil is NULL. ts is in microseconds, dt in days,
// dec the unscaled value of a decimal(9,2).
type dRow struct {
	id  int64
	l   *int64
	i   *int32
	d   *float64
	s   *string
	ts  *int64
	dt  *int32
	dec *int64
	b   *bool
}

func (r dRow) String() string {
	show := func(name string, v any, null bool) string {
		if null {
			return name + "=NULL"
		}
		if s, ok := v.(string); ok && len(s) > 24 {
			return fmt.Sprintf("%s=%q...(%d bytes)", name, s[:12], len(s))
		}
		return fmt.Sprintf("%s=%#v", name, v)
	}
	parts := []string{fmt.Sprintf("id=%d", r.id)}
	for _, c := range diffColumns {
		v, ok := c.get(&r)
		parts = append(parts, show(c.name, v, !ok))
	}
	return strings.Join(parts, " ")
}

func ptr[T any](v T) *T { return &v }

// pick returns one of vs, or nil (NULL) one time in twelve.
func pick[T any](rng *rand.Rand, vs []T) *T {
	if rng.IntN(12) == 0 {
		return nil
	}
	return ptr(vs[rng.IntN(len(vs))])
}

var (
	longs  = []int64{0, 1, -1, 7, 42, -42, 1 << 40, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 100, -100}
	ints   = []int32{0, 1, -1, 3, 17, -17, math.MaxInt32, math.MinInt32, 50}
	floats = []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1, -1, 0.5, 5, 2.25, -2.25,
		1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64}
	strs = []string{"", "a", "ab", "abc", "b", "é", "éa", "日本", "日本語", "Z", "it's", "a%b", "a_b",
		strings.Repeat("a", 16), strings.Repeat("a", 17), strings.Repeat("a", 15) + "\U0010FFFF" + "b",
		strings.Repeat("\U0010FFFF", 17), "\uffff\uffff", strings.Repeat("x", 4097), "é" + strings.Repeat("é", 2100),
		strings.Repeat("ab", 2600) + "c", "a" + strings.Repeat("z", 5000)}
	dayMicros = int64(86_400_000_000)
	stamps    = []int64{-1, 0, -dayMicros, dayMicros - 1, 1, -dayMicros + 1, 12*3600*1_000_000 + 345_678, -5 * 3600 * 1_000_000}
	dates     = []int32{0, -1, 1, 19782, -719162, 2932896, 10000}
	decs      = []int64{0, 1, -1, 99_999_999, -99_999_999, 12_345, -12_345, 50}
)

// homeValues are the values of the partition source columns that most
// rows of a batch take.
type homeValues struct {
	stamps []int64
	strs   []string
}

func genRow(rng *rand.Rand, id int64, home homeValues) dRow {
	r := dRow{id: id, l: pick(rng, longs), i: pick(rng, ints), d: pick(rng, floats), s: pick(rng, strs),
		ts: pick(rng, stamps), dt: pick(rng, dates), dec: pick(rng, decs), b: pick(rng, []bool{true, false})}
	if rng.IntN(20) != 0 {
		r.s = pick(rng, home.strs)
		r.ts = pick(rng, home.stamps)
	}
	if r.l != nil && rng.IntN(3) == 0 {
		r.l = ptr(rng.Int64N(201) - 100)
	}
	if r.d != nil && rng.IntN(4) == 0 {
		r.d = ptr(float64(rng.IntN(41)-20) / 4)
	}
	return r
}

// diffSchema is the landed files' schema; floe creates the tables from it.
var diffSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

func diffRecord(rows []dRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, diffSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		appendOr(b.Field(1), r.l, func(v int64) { b.Field(1).(*array.Int64Builder).Append(v) })
		appendOr(b.Field(2), r.i, func(v int32) { b.Field(2).(*array.Int32Builder).Append(v) })
		appendOr(b.Field(3), r.d, func(v float64) { b.Field(3).(*array.Float64Builder).Append(v) })
		appendOr(b.Field(4), r.s, func(v string) { b.Field(4).(*array.StringBuilder).Append(v) })
		appendOr(b.Field(5), r.ts, func(v int64) { b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(v)) })
		appendOr(b.Field(6), r.dt, func(v int32) { b.Field(6).(*array.Date32Builder).Append(arrow.Date32(v)) })
		appendOr(b.Field(7), r.dec, func(v int64) { b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(v)) })
		appendOr(b.Field(8), r.b, func(v bool) { b.Field(8).(*array.BooleanBuilder).Append(v) })
	}
	return b.NewRecordBatch()
}

func appendOr[T any](b array.Builder, v *T, app func(T)) {
	if v == nil {
		b.AppendNull()
		return
	}
	app(*v)
}

// diffColumn is a filtered column: how to read it from a row, order two
// of its values, spell a value as a filter literal and make up literals.
type diffColumn struct {
	name string
	get  func(r *dRow) (any, bool)
	cmp  func(a, b any) int
	lit  func(v any) string
	gen  func(rng *rand.Rand) any
}

func getter[T any](f func(r *dRow) *T) func(r *dRow) (any, bool) {
	return func(r *dRow) (any, bool) {
		p := f(r)
		if p == nil {
			return nil, false
		}
		return *p, true
	}
}

func orderOf[T int64 | int32 | string](a, b any) int {
	x, y := a.(T), b.(T)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// sparkFloatOrder is the documented order of floats: -0.0 = 0.0, NaN
// equal to itself and above everything else.
func sparkFloatOrder(a, b any) int {
	x, y := a.(float64), b.(float64)
	xn, yn := x != x, y != y
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func floatLit(v any) string {
	f := v.(float64)
	switch {
	case math.IsNaN(f):
		return "'NaN'"
	case math.IsInf(f, 1):
		return "'Infinity'"
	case math.IsInf(f, -1):
		return "'-Infinity'"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quoted(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func fromPool[T any](vs []T, extra func(rng *rand.Rand) T) func(rng *rand.Rand) any {
	return func(rng *rand.Rand) any {
		if extra != nil && rng.IntN(3) == 0 {
			return extra(rng)
		}
		return vs[rng.IntN(len(vs))]
	}
}

func decLit(v any) string {
	n := v.(int64)
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	if n%100 == 0 && n%7 == 0 {
		return sign + strconv.FormatInt(n/100, 10)
	}
	return fmt.Sprintf("%s%d.%02d", sign, n/100, n%100)
}

var diffColumns = []diffColumn{
	{"l", getter(func(r *dRow) *int64 { return r.l }), orderOf[int64], func(v any) string { return strconv.FormatInt(v.(int64), 10) },
		fromPool(longs, func(rng *rand.Rand) int64 { return rng.Int64N(221) - 110 })},
	{"i", getter(func(r *dRow) *int32 { return r.i }), orderOf[int32], func(v any) string { return strconv.Itoa(int(v.(int32))) },
		fromPool(ints, func(rng *rand.Rand) int32 { return rng.Int32N(61) - 30 })},
	{"d", getter(func(r *dRow) *float64 { return r.d }), sparkFloatOrder, floatLit,
		fromPool(floats, func(rng *rand.Rand) float64 { return float64(rng.IntN(45)-22) / 4 })},
	{"s", getter(func(r *dRow) *string { return r.s }), orderOf[string], func(v any) string { return quoted(v.(string)) },
		fromPool(strs, func(rng *rand.Rand) string {
			s := strs[rng.IntN(len(strs))]
			rs := []rune(s)
			return string(rs[:rng.IntN(len(rs)+1)]) // a prefix
		})},
	{"ts", getter(func(r *dRow) *int64 { return r.ts }), orderOf[int64],
		func(v any) string {
			return "TIMESTAMP '" + time.UnixMicro(v.(int64)).UTC().Format("2006-01-02 15:04:05.000000") + "'"
		},
		fromPool(stamps, func(rng *rand.Rand) int64 { return rng.Int64N(4*dayMicros) - 2*dayMicros })},
	{"dt", getter(func(r *dRow) *int32 { return r.dt }), orderOf[int32],
		func(v any) string {
			return "DATE '" + time.Unix(int64(v.(int32))*86400, 0).UTC().Format("2006-01-02") + "'"
		},
		fromPool(dates, func(rng *rand.Rand) int32 { return rng.Int32N(41) - 20 })},
	{"dec", getter(func(r *dRow) *int64 { return r.dec }), orderOf[int64], decLit,
		fromPool(decs, func(rng *rand.Rand) int64 { return rng.Int64N(20001) - 10000 })},
	{"b", getter(func(r *dRow) *bool { return r.b }),
		func(a, b any) int { return orderOf[int64](boolNum(a.(bool)), boolNum(b.(bool))) },
		func(v any) string { return strings.ToUpper(strconv.FormatBool(v.(bool))) },
		fromPool([]bool{true, false}, nil)},
}

func boolNum(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// tv is a truth value of SQL's three-valued logic.
type tv int

const (
	tFalse tv = iota
	tTrue
	tUnknown
)

func tvOf(b bool) tv {
	if b {
		return tTrue
	}
	return tFalse
}

func tvAnd(a, b tv) tv {
	switch {
	case a == tFalse || b == tFalse:
		return tFalse
	case a == tUnknown || b == tUnknown:
		return tUnknown
	}
	return tTrue
}

func tvOr(a, b tv) tv {
	switch {
	case a == tTrue || b == tTrue:
		return tTrue
	case a == tUnknown || b == tUnknown:
		return tUnknown
	}
	return tFalse
}

func tvNot(a tv) tv {
	switch a {
	case tTrue:
		return tFalse
	case tFalse:
		return tTrue
	}
	return tUnknown
}

// dExpr is a generated filter: its text, its value on a row and the
// columns it reads.
type dExpr interface {
	text() string
	eval(r *dRow) tv
	columns(into map[string]bool)
}

func (e dAnd) columns(into map[string]bool)     { e.l.columns(into); e.r.columns(into) }
func (e dOr) columns(into map[string]bool)      { e.l.columns(into); e.r.columns(into) }
func (e dNot) columns(into map[string]bool)     { e.x.columns(into) }
func (dConst) columns(map[string]bool)          {}
func (e dCmp) columns(into map[string]bool)     { into[e.col.name] = true }
func (e dIn) columns(into map[string]bool)      { into[e.col.name] = true }
func (e dBetween) columns(into map[string]bool) { into[e.col.name] = true }
func (e dIsNull) columns(into map[string]bool)  { into[e.col.name] = true }
func (e dLike) columns(into map[string]bool)    { into[e.col.name] = true }

type dAnd struct{ l, r dExpr }
type dOr struct{ l, r dExpr }
type dNot struct{ x dExpr }
type dConst bool
type dCmp struct {
	col     diffColumn
	op      string
	lit     any
	swapped bool // written literal first
}
type dIn struct {
	col  diffColumn
	lits []any
	neg  bool
}
type dBetween struct {
	col    diffColumn
	lo, hi any
	neg    bool
}
type dIsNull struct {
	col diffColumn
	neg bool
}
type dLike struct {
	col     diffColumn
	pattern string
	neg     bool
}

func (e dAnd) text() string { return "(" + e.l.text() + ") AND (" + e.r.text() + ")" }
func (e dOr) text() string  { return "(" + e.l.text() + ") OR (" + e.r.text() + ")" }
func (e dNot) text() string { return "NOT (" + e.x.text() + ")" }
func (e dConst) text() string {
	return strings.ToUpper(strconv.FormatBool(bool(e)))
}
func (e dCmp) text() string {
	if e.swapped {
		flip := map[string]string{"=": "=", "<>": "<>", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
		return e.col.lit(e.lit) + " " + flip[e.op] + " " + e.col.name
	}
	return e.col.name + " " + e.op + " " + e.col.lit(e.lit)
}
func (e dIn) text() string {
	lits := make([]string, len(e.lits))
	for i, l := range e.lits {
		lits[i] = e.col.lit(l)
	}
	return e.col.name + notText(e.neg) + " IN (" + strings.Join(lits, ", ") + ")"
}
func (e dBetween) text() string {
	return e.col.name + notText(e.neg) + " BETWEEN " + e.col.lit(e.lo) + " AND " + e.col.lit(e.hi)
}
func (e dIsNull) text() string { return e.col.name + " IS" + notText(e.neg) + " NULL" }
func (e dLike) text() string   { return e.col.name + notText(e.neg) + " LIKE " + quoted(e.pattern) }

func notText(neg bool) string {
	if neg {
		return " NOT"
	}
	return ""
}

func (e dAnd) eval(r *dRow) tv    { return tvAnd(e.l.eval(r), e.r.eval(r)) }
func (e dOr) eval(r *dRow) tv     { return tvOr(e.l.eval(r), e.r.eval(r)) }
func (e dNot) eval(r *dRow) tv    { return tvNot(e.x.eval(r)) }
func (e dConst) eval(*dRow) tv    { return tvOf(bool(e)) }
func (e dIsNull) eval(r *dRow) tv { _, ok := e.col.get(r); return tvOf(ok == e.neg) }

func (e dCmp) eval(r *dRow) tv {
	v, ok := e.col.get(r)
	if !ok {
		return tUnknown
	}
	c := e.col.cmp(v, e.lit)
	switch e.op {
	case "=":
		return tvOf(c == 0)
	case "<>", "!=":
		return tvOf(c != 0)
	case "<":
		return tvOf(c < 0)
	case "<=":
		return tvOf(c <= 0)
	case ">":
		return tvOf(c > 0)
	}
	return tvOf(c >= 0)
}

// IN is the OR of its equalities, NOT IN the NOT of that.
func (e dIn) eval(r *dRow) tv {
	out := tFalse
	for _, l := range e.lits {
		out = tvOr(out, dCmp{col: e.col, op: "=", lit: l}.eval(r))
	}
	if e.neg {
		return tvNot(out)
	}
	return out
}

func (e dBetween) eval(r *dRow) tv {
	out := tvAnd(dCmp{col: e.col, op: ">=", lit: e.lo}.eval(r), dCmp{col: e.col, op: "<=", lit: e.hi}.eval(r))
	if e.neg {
		return tvNot(out)
	}
	return out
}

func (e dLike) eval(r *dRow) tv {
	v, ok := e.col.get(r)
	if !ok {
		return tUnknown
	}
	return tvOf(likeMatch([]rune(v.(string)), []rune(e.pattern)) != e.neg)
}

// likeMatch matches SQL LIKE without escapes: % any run of characters,
// _ exactly one; by dynamic programming over characters.
func likeMatch(s, p []rune) bool {
	// at[j]: p[:i] matches s[:j].
	at := make([]bool, len(s)+1)
	at[0] = true
	for _, pr := range p {
		next := make([]bool, len(s)+1)
		switch pr {
		case '%':
			seen := false
			for j := range at {
				seen = seen || at[j]
				next[j] = seen
			}
		default:
			for j := 1; j <= len(s); j++ {
				next[j] = at[j-1] && (pr == '_' || s[j-1] == pr)
			}
		}
		at = next
	}
	return at[len(s)]
}

var cmpOps = []string{"=", "<>", "!=", "<", "<=", ">", ">="}

func genExpr(rng *rand.Rand, depth int) dExpr {
	if depth > 0 {
		switch rng.IntN(6) {
		case 0:
			return dAnd{genExpr(rng, depth-1), genExpr(rng, depth-1)}
		case 1:
			return dOr{genExpr(rng, depth-1), genExpr(rng, depth-1)}
		case 2:
			if rng.IntN(2) == 0 {
				return dNot{genExpr(rng, depth-1)}
			}
		}
	}
	if rng.IntN(40) == 0 {
		return dConst(rng.IntN(2) == 0)
	}
	col := diffColumns[rng.IntN(len(diffColumns))]
	kinds := 5
	if col.name == "s" {
		kinds = 6
	}
	switch rng.IntN(kinds) {
	case 0, 1:
		return dCmp{col: col, op: cmpOps[rng.IntN(len(cmpOps))], lit: col.gen(rng), swapped: rng.IntN(5) == 0}
	case 2:
		lits := make([]any, 1+rng.IntN(4))
		for i := range lits {
			lits[i] = col.gen(rng)
		}
		return dIn{col: col, lits: lits, neg: rng.IntN(2) == 0}
	case 3:
		return dBetween{col: col, lo: col.gen(rng), hi: col.gen(rng), neg: rng.IntN(3) == 0}
	case 4:
		return dIsNull{col: col, neg: rng.IntN(2) == 0}
	}
	return dLike{col: col, pattern: genPattern(rng), neg: rng.IntN(3) == 0}
}

// genPattern makes a LIKE pattern from the strings of the table: a piece
// of one with wildcards around or inside.
func genPattern(rng *rand.Rand) string {
	rs := []rune(strs[rng.IntN(len(strs))])
	from := rng.IntN(len(rs) + 1)
	to := from + rng.IntN(min(len(rs)-from, 4)+1)
	piece := strings.NewReplacer("%", "", "_", "").Replace(string(rs[from:to]))
	switch rng.IntN(6) {
	case 0:
		return piece + "%"
	case 1:
		return "%" + piece
	case 2:
		return "%" + piece + "%"
	case 3:
		if utf8.RuneCountInString(piece) > 0 {
			r := []rune(piece)
			r[rng.IntN(len(r))] = '_'
			return string(r)
		}
		return "_"
	case 4:
		return piece
	}
	return "%"
}

func TestKeepTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 0x5eed))
	_ = rng
}
