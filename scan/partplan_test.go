package scan

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
)

// partRow is a row of the partitioned test table; nil is NULL.
type partRow struct {
	id  int64
	ts  *time.Time
	cat *string
	n   *int32
}

// partRows are 360 rows over three days, four categories (one NULL), n in
// 0..59 with NULLs, and some NULL timestamps.
func partRows() []partRow {
	cats := []*string{ptr("a"), ptr("b"), ptr("ab"), nil}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []partRow
	for i := range 360 {
		r := partRow{id: int64(i), cat: cats[i%4]}
		if i%17 != 0 {
			ts := day.Add(time.Duration(i) * 12 * time.Minute) // 3 days
			r.ts = &ts
		}
		if i%11 != 0 {
			n := int32(i % 60)
			r.n = &n
		}
		rows = append(rows, r)
	}
	return rows
}

// partTable is a table partitioned by day(ts), category and
// truncate(10, n), holding partRows in files of three appends, each
// snapshot marked as floe's.
func partTable(t *testing.T) *table.Table {
	t.Helper()
	ctx := context.Background()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "category", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int32})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "category", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1002, Name: "n_trunc", Transform: iceberg.TruncateTransform{Width: 10}})
	cat := fixture.Catalog(t)
	tbl := fixture.CreateIcebergTable(t, cat, table.Identifier{"db", "parts"}, sc,
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	rows := partRows()
	for part := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for _, r := range rows[part*120 : (part+1)*120] {
			b.Field(0).(*array.Int64Builder).Append(r.id)
			if r.ts == nil {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
			}
			if r.cat == nil {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(*r.cat)
			}
			if r.n == nil {
				b.Field(3).AppendNull()
			} else {
				b.Field(3).(*array.Int32Builder).Append(*r.n)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		rdr, err := array.NewRecordReader(asc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err = tbl.Append(ctx, rdr, iceberg.Properties{ingest.SummaryQueryID: "test"})
		rdr.Release()
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

// Filters the partitions decide are planned from the partition tuples
// alone, the others by iceberg-go; either way a scan returns exactly the
// rows the filter matches, counted here row by row (NULL matching no
// comparison).
func TestPlanByPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := partTable(t)
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		filter  string
		decided bool
		match   func(r partRow) bool
	}{
		{"category = 'a'", true, func(r partRow) bool { return r.cat != nil && *r.cat == "a" }},
		{"category != 'a'", true, func(r partRow) bool { return r.cat != nil && *r.cat != "a" }},
		{"NOT (category = 'a')", true, func(r partRow) bool { return r.cat != nil && *r.cat != "a" }},
		{"category IN ('a', 'ab')", true, func(r partRow) bool { return r.cat != nil && (*r.cat == "a" || *r.cat == "ab") }},
		{"category NOT IN ('a')", true, func(r partRow) bool { return r.cat != nil && *r.cat != "a" }},
		{"category IS NULL", true, func(r partRow) bool { return r.cat == nil }},
		{"category IS NOT NULL", true, func(r partRow) bool { return r.cat != nil }},
		{"category LIKE 'a%'", true, func(r partRow) bool { return r.cat != nil && (*r.cat)[0] == 'a' }},
		{"ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00'", true,
			func(r partRow) bool { return r.ts != nil && !r.ts.Before(day(2)) && r.ts.Before(day(3)) }},
		{"ts > TIMESTAMP '2024-01-01 23:59:59.999999'", true, func(r partRow) bool { return r.ts != nil && !r.ts.Before(day(2)) }},
		{"ts <= TIMESTAMP '2024-01-01 23:59:59.999999'", true, func(r partRow) bool { return r.ts != nil && r.ts.Before(day(2)) }},
		{"ts IS NULL", true, func(r partRow) bool { return r.ts == nil }},
		{"n >= 10 AND n < 30", true, func(r partRow) bool { return r.n != nil && *r.n >= 10 && *r.n < 30 }},
		{"n > 9", true, func(r partRow) bool { return r.n != nil && *r.n > 9 }},
		{"category = 'b' OR ts < TIMESTAMP '2024-01-02 00:00:00'", true,
			func(r partRow) bool { return (r.cat != nil && *r.cat == "b") || (r.ts != nil && r.ts.Before(day(2))) }},
		// Ranges that do not start or end on a partition's edge, and
		// columns no partition captures exactly: iceberg-go plans.
		{"ts >= TIMESTAMP '2024-01-02 12:00:00'", false, func(r partRow) bool { return r.ts != nil && !r.ts.Before(day(2).Add(12*time.Hour)) }},
		{"ts < TIMESTAMP '2024-01-02 00:00:00.000001'", false, func(r partRow) bool { return r.ts != nil && r.ts.Before(day(2).Add(time.Microsecond)) }},
		{"n = 10", false, func(r partRow) bool { return r.n != nil && *r.n == 10 }},
		{"n >= 15", false, func(r partRow) bool { return r.n != nil && *r.n >= 15 }},
		{"id < 100", false, func(r partRow) bool { return r.id < 100 }},
		{"category = 'a' AND id < 100", false, func(r partRow) bool { return r.cat != nil && *r.cat == "a" && r.id < 100 }},
	} {
		t.Run(c.filter, func(t *testing.T) {
			o := Options{Filter: c.filter, Columns: []string{"id"}}
			snap, err := o.at(tbl)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := o.bind(ctx, tbl, snap)
			if err != nil {
				t.Fatal(err)
			}
			r, err := newTableReader(ctx, tbl, o, snap, bound)
			if err != nil {
				t.Fatal(err)
			}
			tasks, decided, err := r.planByPartition(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if decided != c.decided {
				t.Errorf("planned from the partitions: %v, want %v", decided, c.decided)
			}
			if decided {
				for _, task := range tasks {
					if !task.Residual.Equals(iceberg.AlwaysTrue{}) {
						t.Errorf("%s planned with residual %s", task.File.FilePath(), task.Residual)
					}
				}
			}
			var want []int64
			for _, row := range partRows() {
				if c.match(row) {
					want = append(want, row.id)
				}
			}
			if len(want) == 0 {
				t.Fatal("the filter matches no row: a poor test")
			}
			if got := scanIDs(t, tbl, o); !slices.Equal(got, want) {
				t.Errorf("ids %v\nwant %v", got, want)
			}
			// A scan stopped by its limit yields matching rows only, the
			// files read ahead of it left unread.
			o.Limit = 3
			got := scanIDs(t, tbl, o)
			if len(got) != min(3, len(want)) {
				t.Errorf("limit 3: %d rows", len(got))
			}
			for _, id := range got {
				if !slices.Contains(want, id) {
					t.Errorf("limit 3: id %d does not match", id)
				}
			}
		})
	}
}

// scanIDs scans tbl and returns the ids read, sorted.
func scanIDs(t *testing.T, tbl *table.Table, o Options) []int64 {
	t.Helper()
	_, recs, err := Table(context.Background(), tbl, o)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col, ok := rec.Column(0).(*array.Int64)
		if !ok {
			t.Fatalf("column 0 is %s, want id", rec.Schema().Field(0))
		}
		ids = append(ids, col.Int64Values()...)
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

// partManifests makes partTable and lists its manifests.
func partManifests(t *testing.T) (*table.Table, icebergio.IO, []iceberg.ManifestFile) {
	t.Helper()
	tbl := partTable(t)
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, fs, manifests
}

// A manifest whose partition bounds exclude the filter is not read; one
// that may hold a match is.
func TestPlanByPartitionSkipsManifests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, manifests := partManifests(t)
	if len(manifests) != 3 {
		t.Fatalf("%d manifests, want one per append", len(manifests))
	}
	// The list holds the newest first.
	slices.SortFunc(manifests, func(a, b iceberg.ManifestFile) int { return int(a.SequenceNum() - b.SequenceNum()) })
	// The first append's rows span the first day only (rows 0..119, 12
	// minutes apart), the last's the third day.
	for _, c := range []struct {
		filter string
		read   []bool
	}{
		{"ts < TIMESTAMP '2024-01-02 00:00:00'", []bool{true, false, false}},
		{"ts >= TIMESTAMP '2024-01-03 00:00:00'", []bool{false, false, true}},
		{"ts IS NULL", []bool{true, true, true}},
		{"category = 'zzz'", []bool{false, false, false}},
		{"category IN ('a', 'zzz')", []bool{true, true, true}},
	} {
		o := Options{Filter: c.filter}
		bound, err := o.bind(ctx, tbl, at{})
		if err != nil {
			t.Fatal(err)
		}
		be, err := iceberg.BindExpr(tbl.Schema(), bound.Pushed, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, m := range manifests {
			d := newPartitionDecider(tbl.Metadata().PartitionSpecByID(int(m.PartitionSpecID())), tbl.Schema(), be)
			if d == nil {
				t.Fatalf("%s: the spec does not decide the filter", c.filter)
			}
			got = append(got, d.mayMatch(m))
		}
		if !slices.Equal(got, c.read) {
			t.Errorf("%s: manifests read %v, want %v", c.filter, got, c.read)
		}
	}
}

// A file larger than the split target is cut at its row groups into tasks
// of about the target each; one that is not, or lacks offsets, stays whole.
func TestSplitTask(t *testing.T) {
	t.Parallel()
	mk := func(size int64, offsets []int64) table.FileScanTask {
		b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, "f.parquet", iceberg.ParquetFile, nil, nil, nil, 1, size)
		if err != nil {
			t.Fatal(err)
		}
		df := b.SplitOffsets(offsets).Build()
		return table.FileScanTask{File: df, Length: size}
	}
	ranges := func(ts []table.FileScanTask) string {
		s := ""
		for _, t := range ts {
			s += fmt.Sprintf("[%d,%d)", t.Start, t.Start+t.Length)
		}
		return s
	}
	for _, c := range []struct {
		size    int64
		offsets []int64
		target  int64
		want    string
	}{
		{100, []int64{4, 50}, 200, "[0,100)"},
		{100, []int64{4}, 10, "[0,100)"},
		{100, []int64{4, 30, 60, 90}, 40, "[0,30)[30,60)[60,100)"},
		{100, []int64{4, 30, 60, 90}, 70, "[0,60)[60,100)"},
		{100, []int64{4, 60, 30}, 40, "[0,100)"},
	} {
		if got := ranges(splitTask(mk(c.size, c.offsets), c.target)); got != c.want {
			t.Errorf("size %d offsets %v target %d: %s, want %s", c.size, c.offsets, c.target, got, c.want)
		}
	}
}

// A NULL partition value matches no comparison, whatever the filter binds
// around it: iceberg-go's evaluator orders NULL below every value, so
// category < 'b' alone would take a file of NULL categories for one whose
// rows all match.
func TestPartitionDeciderNulls(t *testing.T) {
	t.Parallel()
	tbl, fs, manifests := partManifests(t)
	for _, c := range []struct {
		expr iceberg.BooleanExpression
		want func(cat any) bool
	}{
		{iceberg.LessThan(iceberg.Reference("category"), "b"), func(cat any) bool { return cat != nil && cat.(string) < "b" }},
		{iceberg.NotEqualTo(iceberg.Reference("category"), "a"), func(cat any) bool { return cat != nil && cat.(string) != "a" }},
		{iceberg.NotIn(iceberg.Reference("category"), "a"), func(cat any) bool { return cat != nil && cat.(string) != "a" }},
		{iceberg.IsNull(iceberg.Reference("category")), func(cat any) bool { return cat == nil }},
	} {
		be, err := iceberg.BindExpr(tbl.Schema(), c.expr, true)
		if err != nil {
			t.Fatal(err)
		}
		spec := tbl.Spec()
		d := newPartitionDecider(&spec, tbl.Schema(), be)
		if d == nil {
			t.Fatalf("%s: not decided", c.expr)
		}
		nulls := 0
		for _, m := range manifests {
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatal(err)
				}
				cat := e.DataFile().Partition()[1001]
				if cat == nil {
					nulls++
				}
				match, ok := d.matches(e.DataFile())
				if !ok || match != c.want(cat) {
					t.Errorf("%s on category %v: %v (ok %v), want %v", c.expr, cat, match, ok, c.want(cat))
				}
			}
		}
		if nulls == 0 {
			t.Fatal("no file of NULL categories: a poor test")
		}
	}
}

// A manifest summary of a string or binary partition field with NULLs and
// no lower bound may hold the empty string (iceberg-go writes an empty bound as null):
// IS NOT NULL may match it. Of another type it holds NULLs alone.
func TestSummaryTestEmptyBound(t *testing.T) {
	t.Parallel()
	upper := []byte("zz")
	for _, c := range []struct {
		typ  iceberg.Type
		sum  iceberg.FieldSummary
		want bool
	}{
		{iceberg.PrimitiveTypes.String, iceberg.FieldSummary{ContainsNull: true}, true},
		{iceberg.PrimitiveTypes.String, iceberg.FieldSummary{ContainsNull: true, UpperBound: &upper}, true},
		{iceberg.PrimitiveTypes.Binary, iceberg.FieldSummary{ContainsNull: true}, true},
		{iceberg.PrimitiveTypes.Int64, iceberg.FieldSummary{ContainsNull: true}, false},
	} {
		sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1000, Name: "p", Type: c.typ})
		pred, err := iceberg.BindExpr(sc, iceberg.NotNull(iceberg.Reference("p")), true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := iceberg.VisitExpr(pred, summaryTest{fields: sc.Fields(), sums: []iceberg.FieldSummary{c.sum}})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s IS NOT NULL on %+v: may match %v, want %v", c.typ, c.sum, got, c.want)
		}
	}
}
