package write

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partref"
)

func TestParsePartitionField(t *testing.T) {
	t.Parallel()
	good := []struct {
		expr   string
		source string
		tr     iceberg.Transform
	}{
		{"region", "region", iceberg.IdentityTransform{}},
		{" meta.region ", "meta.region", iceberg.IdentityTransform{}},
		{"bucket(id, 16)", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"BUCKET( id ,16 )", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"bucket(16, id)", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"truncate(name, 4)", "name", iceberg.TruncateTransform{Width: 4}},
		{"year(ts)", "ts", iceberg.YearTransform{}},
		{"Month(ts)", "ts", iceberg.MonthTransform{}},
		{"day(meta.ts)", "meta.ts", iceberg.DayTransform{}},
		{"hour(ts)", "ts", iceberg.HourTransform{}},
		{"void(x)", "x", iceberg.VoidTransform{}},
		{"identity(x)", "x", iceberg.IdentityTransform{}},
	}
	for _, g := range good {
		f, err := ParsePartitionField(g.expr)
		if err != nil {
			t.Errorf("ParsePartitionField(%q): %v", g.expr, err)
			continue
		}
		if f.Expr != g.expr || f.Source != g.source || !f.Transform.Equals(g.tr) {
			t.Errorf("ParsePartitionField(%q) = %+v, want source %q transform %s", g.expr, f, g.source, g.tr)
		}
	}
	bad := []struct{ expr, msg string }{
		{"", `invalid configuration: partition field "": empty expression; use col, bucket(col, N), truncate(col, W), year(col), month(col), day(col), hour(col) or void(col)`},
		{"bucket(id)", `partition field "bucket(id)": bucket takes a column and N; use`},
		{"bucket(id, 0)", `partition field "bucket(id, 0)": N "0" must be a positive integer; use`},
		{"truncate(s, -3)", `W "-3" must be a positive integer`},
		{"truncate(s, x)", `W "x" must be a positive integer`},
		{"days(ts)", `unknown transform "days"`},
		{"day(ts", `missing closing parenthesis`},
		{"day(a, b)", `day takes one column`},
		{"day()", `argument "" is not a column name or number`},
		{"a b", `not a column name or transform`},
		{"bucket(id, 99999999999)", `N "99999999999" must be a positive integer`},
	}
	for _, b := range bad {
		_, err := ParsePartitionField(b.expr)
		if !errors.Is(err, ingest.ErrConfig) || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("ParsePartitionField(%q) = %v, want ingest.ErrConfig containing %q", b.expr, err, b.msg)
		}
	}
	if _, err := ParsePartitionFields([]string{"a", "bucket(b)"}); err == nil {
		t.Error("ParsePartitionFields accepted a bad entry")
	}
}

func testPartitionSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 7, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 8, Name: "meta", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 9, Name: "region", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 10, Name: "f", Type: iceberg.PrimitiveTypes.Float64},
	)
}

func mustFields(t testing.TB, exprs ...string) []PartitionField {
	t.Helper()
	fs, err := ParsePartitionFields(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestNewPartitionSpec(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	spec, err := NewPartitionSpec(sc, mustFields(t, "day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range spec.Fields() {
		got = append(got, fmt.Sprintf("%d %s %d %s", f.FieldID, f.Name, f.SourceID(), f.Transform))
	}
	want := []string{"1000 ts_day 6 day", "1001 l_bucket 3 bucket[16]", "1002 s_trunc 4 truncate[4]", "1003 meta_region 9 identity", "1004 i_null 2 void", "1005 tstz_hour 7 hour"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec fields = %q, want %q", got, want)
	}
	if d := DescribeSpec(spec, sc); d != "day(ts), bucket(l, 16), truncate(s, 4), meta.region, void(i), hour(tstz)" {
		t.Errorf("DescribeSpec = %q", d)
	}
	if !SpecMatches(spec, sc, mustFields(t, "day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)")) {
		t.Error("SpecMatches(own fields) = false")
	}
	for _, other := range [][]string{
		{"day(ts)", "bucket(l, 8)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
		{"day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "hour(tstz)"},
		{"bucket(l, 16)", "day(ts)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
		{"day(tstz)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
	} {
		if SpecMatches(spec, sc, mustFields(t, other...)) {
			t.Errorf("SpecMatches(%q) = true", other)
		}
	}

	bad := []struct {
		exprs []string
		msg   string
	}{
		{[]string{"nope"}, `partition field "nope": no column "nope" in the table schema; available columns: n, i, l, s, d, ts, tstz, meta.region, f`},
		{[]string{"day(s)"}, `partition field "day(s)": transform day cannot apply to column "s" of type string; year, month and day apply to date and timestamp columns`},
		{[]string{"hour(d)"}, `transform hour cannot apply to column "d" of type date`},
		{[]string{"truncate(d, 3)"}, `transform truncate[3] cannot apply to column "d"`},
		{[]string{"bucket(f, 3)"}, `transform bucket[3] cannot apply to column "f" of type double`},
		{[]string{"s", "s"}, `partition fields "s" and "s" partition column "s" twice the same way; keep one`},
		{[]string{"day(ts)", "hour(ts)"}, `partition fields "day(ts)" and "hour(ts)" partition column "ts" twice`},
	}
	for _, b := range bad {
		_, err := NewPartitionSpec(sc, mustFields(t, b.exprs...))
		if !errors.Is(err, ingest.ErrConfig) || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("NewPartitionSpec(%q) = %v, want ingest.ErrConfig containing %q", b.exprs, err, b.msg)
		}
	}
	if _, err := NewPartitionSpec(sc, mustFields(t, "bucket(s, 4)", "s")); err != nil {
		t.Errorf("bucket and identity of one column: %v", err)
	}
}

// testRecord generates n rows with nulls, negative numbers, pre-1970 times,
// multi-byte strings and struct-level nulls.
func testRecord(t testing.TB, sc *iceberg.Schema, n int, seed uint64) arrow.RecordBatch {
	t.Helper()
	schema, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	strs := []string{"", "a", "ab", "abcd", "abcde", "héllo wörld", "日本語テキスト", "cat-01", "a b/c", "null", "zzzzzzzz"}
	null := func() bool { return r.IntN(10) == 0 }
	for row := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(row))
		if null() {
			b.Field(1).AppendNull()
		} else {
			v := int32(r.IntN(2001) - 1000)
			if r.IntN(50) == 0 {
				v = []int32{math.MinInt32 + 5, math.MaxInt32, -1, 0, 1, 9, 10, -10, -11}[r.IntN(9)]
			}
			b.Field(1).(*array.Int32Builder).Append(v)
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			v := r.Int64N(20001) - 10000
			if r.IntN(50) == 0 {
				v = []int64{math.MaxInt64, -1, 1 << 40, -(1 << 40)}[r.IntN(4)]
			}
			b.Field(2).(*array.Int64Builder).Append(v)
		}
		if null() {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(strs[r.IntN(len(strs))])
		}
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32(r.IntN(25000) - 5000))
		}
		for _, c := range []int{5, 6} {
			if null() {
				b.Field(c).AppendNull()
				continue
			}
			us := r.Int64N(int64(80*365*24*time.Hour/time.Microsecond)) - int64(10*365*24*time.Hour/time.Microsecond)
			if r.IntN(20) == 0 {
				us = []int64{-1, 0, 1, -microsPerDay, -microsPerHour - 1}[r.IntN(5)]
			}
			b.Field(c).(*array.TimestampBuilder).Append(arrow.Timestamp(us))
		}
		sb := b.Field(7).(*array.StructBuilder)
		switch {
		case null():
			sb.AppendNull()
		default:
			sb.Append(true)
			if null() {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.StringBuilder).Append([]string{"eu", "us", "apac"}[r.IntN(3)])
			}
		}
		b.Field(8).(*array.Float64Builder).Append(float64(r.IntN(3)) - 0.5)
	}
	return b.NewRecordBatch()
}

// refValue is the expected partition value of one row, from partref.
func refValue(t testing.TB, rec arrow.RecordBatch, row int, source string, tr iceberg.Transform) any {
	t.Helper()
	if _, ok := tr.(iceberg.VoidTransform); ok {
		return nil
	}
	var col arrow.Array
	switch source {
	case "meta.region":
		st := rec.Column(7).(*array.Struct)
		if st.IsNull(row) {
			return nil
		}
		col = st.Field(0)
	default:
		idx := rec.Schema().FieldIndices(source)
		col = rec.Column(idx[0])
	}
	if col.IsNull(row) {
		return nil
	}
	var v any
	switch a := col.(type) {
	case *array.Int32:
		v = a.Value(row)
	case *array.Int64:
		v = a.Value(row)
	case *array.String:
		v = a.Value(row)
	case *array.Date32:
		v = partref.Date(time.Unix(0, 0).UTC().AddDate(0, 0, int(a.Value(row))))
	case *array.Timestamp:
		v = time.UnixMicro(int64(a.Value(row))).UTC()
	case *array.Float64:
		v = a.Value(row)
	default:
		t.Fatalf("refValue: column %s has type %s", source, col.DataType())
	}
	switch tr := tr.(type) {
	case iceberg.IdentityTransform:
		switch v := partref.Identity(v).(type) {
		case partref.Date:
			return iceberg.Date(partref.Day(v))
		case time.Time:
			return iceberg.Timestamp(v.UnixMicro())
		default:
			return v
		}
	case iceberg.BucketTransform:
		return partref.Bucket(v, tr.NumBuckets)
	case iceberg.TruncateTransform:
		return partref.Truncate(v, tr.Width)
	case iceberg.YearTransform:
		return partref.Year(v)
	case iceberg.MonthTransform:
		return partref.Month(v)
	case iceberg.DayTransform:
		return iceberg.Date(partref.Day(v))
	case iceberg.HourTransform:
		return partref.Hour(v)
	}
	t.Fatalf("refValue: transform %s", tr)
	return nil
}

// checkSplit splits rec and checks every row's key against partref, that
// groups keep the input order and that together they hold every row once.
func checkSplit(t *testing.T, p *partitioner, rec arrow.RecordBatch, fields []PartitionField) []partitionGroup {
	t.Helper()
	return checkSplitOf(t, p, rec, rec, fields)
}

// checkSplitOf checks the split of in, a slice of orig; column n holds the
// row numbers of orig.
func checkSplitOf(t *testing.T, p *partitioner, in, orig arrow.RecordBatch, fields []PartitionField) []partitionGroup {
	t.Helper()
	rec := orig
	groups, err := p.split(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, g := range groups {
			g.rec.Release()
		}
	})
	seen := make([]bool, rec.NumRows())
	total := 0
	for _, g := range groups {
		ns := g.rec.Column(0).(*array.Int64)
		for i := range ns.Len() {
			row := int(ns.Value(i))
			if i > 0 && int64(row) <= ns.Value(i-1) {
				t.Fatalf("group %s: row %d after row %d", g.key.path, row, ns.Value(i-1))
			}
			if seen[row] {
				t.Fatalf("row %d in two groups", row)
			}
			seen[row] = true
			for j, f := range fields {
				want := refValue(t, rec, row, f.Source, f.Transform)
				got := g.key.values[iceberg.PartitionDataIDStart+j]
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: row %d: value %#v, want %#v", f.Expr, row, got, want)
				}
			}
		}
		total += ns.Len()
	}
	if total != int(in.NumRows()) {
		t.Fatalf("groups hold %d rows, want %d", total, in.NumRows())
	}
	return groups
}

func TestPartitionerMatchesPartRef(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	rec := testRecord(t, sc, 5000, 7)
	defer rec.Release()
	schema := rec.Schema()
	for _, expr := range []string{
		"s", "i", "l", "d", "ts", "tstz", "meta.region", "f",
		"bucket(i, 16)", "bucket(l, 16)", "bucket(s, 16)", "bucket(d, 16)", "bucket(ts, 16)", "bucket(tstz, 7)",
		"truncate(s, 4)", "truncate(i, 10)", "truncate(l, 10)", "truncate(meta.region, 1)",
		"year(d)", "month(d)", "day(d)", "year(ts)", "month(ts)", "day(ts)", "hour(ts)", "day(tstz)", "hour(tstz)",
		"void(s)", "void(ts)",
	} {
		t.Run(expr, func(t *testing.T) {
			fields := mustFields(t, expr)
			spec, err := NewPartitionSpec(sc, fields)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPartitioner(spec, sc, schema)
			if err != nil {
				t.Fatal(err)
			}
			checkSplit(t, p, rec, fields)
			// A slice starts at a non-zero offset in its buffers.
			sl := rec.NewSlice(1234, 3456)
			defer sl.Release()
			checkSplitOf(t, p, sl, rec, fields)
		})
	}
}

func TestPartitionerMultipleFields(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	rec := testRecord(t, sc, 20000, 11)
	defer rec.Release()
	for _, exprs := range [][]string{
		{"day(ts)", "s"},
		{"bucket(l, 16)", "meta.region", "void(i)", "month(d)"},
		{"l", "i", "ts"}, // too many combinations for a dense table
	} {
		t.Run(strings.Join(exprs, ","), func(t *testing.T) {
			fields := mustFields(t, exprs...)
			spec, err := NewPartitionSpec(sc, fields)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPartitioner(spec, sc, rec.Schema())
			if err != nil {
				t.Fatal(err)
			}
			first := checkSplit(t, p, rec, fields)
			// The same partitions in another call are the same pointers.
			again := checkSplit(t, p, rec, fields)
			for i := range first {
				if first[i].key != again[i].key {
					t.Fatalf("group %d: key %p then %p", i, first[i].key, again[i].key)
				}
			}
			ids := map[int]bool{}
			for _, g := range first {
				ids[g.key.id] = true
			}
			for id := range len(first) {
				if !ids[id] {
					t.Fatalf("key ids are not dense: missing %d of %d", id, len(first))
				}
			}
		})
	}
}

func TestPartitionerSinglePartitionIsNoCopy(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	rec := testRecord(t, sc, 1000, 3)
	defer rec.Release()
	fields := mustFields(t, "void(s)")
	spec, _ := NewPartitionSpec(sc, fields)
	p, err := newPartitioner(spec, sc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	groups := checkSplit(t, p, rec, fields)
	if len(groups) != 1 || groups[0].rec != rec {
		t.Fatalf("one partition: got %d groups, rec copied: %v", len(groups), groups[0].rec != rec)
	}
	if groups[0].key.path != "s_null=null" {
		t.Errorf("path = %q", groups[0].key.path)
	}
}

func TestPartitionPath(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	schema, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	day := time.Date(2024, 1, 1, 13, 0, 0, 0, time.UTC).UnixMicro()
	for i, s := range []string{"cat-01", "cat-01", "a b/c", "cat-01"} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		for _, c := range []int{1, 2, 4, 6, 8} {
			b.Field(c).AppendNull()
		}
		b.Field(3).(*array.StringBuilder).Append(s)
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(day))
		b.Field(7).AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	fields := mustFields(t, "day(ts)", "s", "meta.region")
	spec, _ := NewPartitionSpec(sc, fields)
	p, err := newPartitioner(spec, sc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	groups := checkSplit(t, p, rec, fields)
	var paths []string
	for _, g := range groups {
		paths = append(paths, fmt.Sprintf("%s:%d", g.key.path, g.rec.NumRows()))
	}
	want := []string{"ts_day=2024-01-01/s=cat-01/meta_region=null:3", "ts_day=2024-01-01/s=a+b%2Fc/meta_region=null:1"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %q, want %q", paths, want)
	}
}

func TestPartitionerConcurrentSplit(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	fields := mustFields(t, "day(ts)", "s")
	spec, _ := NewPartitionSpec(sc, fields)
	recs := make([]arrow.RecordBatch, 4)
	for i := range recs {
		recs[i] = testRecord(t, sc, 3000, uint64(i))
		defer recs[i].Release()
	}
	p, err := newPartitioner(spec, sc, recs[0].Schema())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	byValues := sync.Map{}
	for _, rec := range recs {
		wg.Go(func() {
			groups, err := p.split(context.Background(), rec)
			if err != nil {
				t.Error(err)
				return
			}
			for _, g := range groups {
				// Paths are ambiguous (null and "null"), so compare by values.
				vals := []any{g.key.values[1000], g.key.values[1001]}
				if k, loaded := byValues.LoadOrStore(canonicalKey(vals), g.key); loaded && k != g.key {
					t.Errorf("partition %s has two keys", g.key.path)
				}
				g.rec.Release()
			}
		})
	}
	wg.Wait()
}

// TestPartitionValuesRoundTrip writes each key's values into a data file and
// a manifest and reads them back: the manifest writer rejects or mangles
// values of the wrong Go type.
func TestPartitionValuesRoundTrip(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	rec := testRecord(t, sc, 300, 5)
	defer rec.Release()
	fields := mustFields(t, "day(ts)", "bucket(l, 4)", "truncate(s, 2)", "month(d)", "hour(tstz)", "i", "l", "d", "ts", "tstz", "meta.region", "void(f)", "truncate(i, 100)")
	spec, err := NewPartitionSpec(sc, fields)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPartitioner(spec, sc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	groups := checkSplit(t, p, rec, fields)
	var manifest bytes.Buffer
	mw, err := iceberg.NewManifestWriter(2, &manifest, spec, sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]any{}
	for _, g := range groups {
		var buf bytes.Buffer
		fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(g.rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		meta, err := fw.FileMetadata()
		if err != nil {
			t.Fatal(err)
		}
		path := "s3://bucket/data/" + g.key.path + "/f.parquet"
		df, err := table.DataFileFromMetadata(table.DataFileArgs{
			Schema: sc, Spec: spec, Format: iceberg.ParquetFile, Metadata: meta,
			FilePath: path, FileSize: int64(buf.Len()), Content: iceberg.EntryContentData,
			PartitionValues: g.key.values, FormatVersion: 2,
		})
		if err != nil {
			t.Fatalf("%s: %v", g.key.path, err)
		}
		for id, v := range g.key.values {
			if got := df.Partition()[id]; !reflect.DeepEqual(got, v) {
				t.Errorf("%s: data file partition[%d] = %#v, want %#v", g.key.path, id, got, v)
			}
		}
		want[path] = g.key.values
		snap := int64(1)
		if err := mw.Add(iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snap, nil, nil, df)); err != nil {
			t.Fatalf("%s: manifest: %v", g.key.path, err)
		}
	}
	mf, err := mw.ToManifestFile("s3://bucket/metadata/m.avro", int64(manifest.Len()))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := iceberg.ReadManifest(mf, bytes.NewReader(manifest.Bytes()), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(groups) {
		t.Fatalf("manifest has %d entries, want %d", len(entries), len(groups))
	}
	for _, e := range entries {
		w := want[e.DataFile().FilePath()]
		for id, v := range w {
			got := e.DataFile().Partition()[id]
			if !reflect.DeepEqual(got, v) {
				t.Errorf("%s: manifest partition[%d] = %#v, want %#v", e.DataFile().FilePath(), id, got, v)
			}
		}
	}
}

// BenchmarkPartitionerSplit is the ingestion hot path: day(ts) and identity
// on a string column with 100 values, over 1M rows of five columns. In
// "shuffled" categories are random, so rows are scattered to ~300 groups; in
// "clustered" rows arrive grouped and the groups are slices of the input,
// which leaves only the cost of computing keys.
func BenchmarkPartitionerSplit(b *testing.B) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "category", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "v", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "payload", Type: iceberg.PrimitiveTypes.String},
	)
	schema, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 20
	cats := make([]string, 100)
	for i := range cats {
		cats[i] = fmt.Sprintf("cat-%02d", i)
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	build := func(clustered bool) arrow.RecordBatch {
		r := rand.New(rand.NewPCG(1, 2))
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer bld.Release()
		for i := range n {
			bld.Field(0).(*array.Int64Builder).Append(int64(i))
			// Events arrive roughly in time order over three days.
			ts := start + int64(i)*(3*microsPerDay/n)
			cat := cats[r.IntN(len(cats))]
			if clustered {
				const perDay = n/3 + 1
				ts = start + int64(i/perDay)*microsPerDay + int64(i%perDay)
				cat = cats[(i%perDay)*len(cats)/perDay]
			}
			bld.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
			bld.Field(2).(*array.StringBuilder).Append(cat)
			bld.Field(3).(*array.Float64Builder).Append(r.Float64())
			bld.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("payload-%d-%d", i, r.Int()))
		}
		return bld.NewRecordBatch()
	}
	spec, err := NewPartitionSpec(sc, mustFields(b, "day(ts)", "category"))
	if err != nil {
		b.Fatal(err)
	}
	for _, clustered := range []bool{false, true} {
		name := map[bool]string{false: "shuffled", true: "clustered"}[clustered]
		b.Run(name, func(b *testing.B) {
			rec := build(clustered)
			defer rec.Release()
			p, err := newPartitioner(spec, sc, schema)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var groups int
			for b.Loop() {
				gs, err := p.split(ctx, rec)
				if err != nil {
					b.Fatal(err)
				}
				groups = len(gs)
				for _, g := range gs {
					g.rec.Release()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
			b.ReportMetric(float64(groups), "groups")
		})
	}
}

// Dictionary-encoded sources are coded through their indices.
func TestPartitionerDictionary(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	plain := testRecord(t, sc, 2000, 9)
	defer plain.Release()
	dict := array.NewStringBuilder(memory.DefaultAllocator)
	defer dict.Release()
	dict.AppendValues([]string{"x", "y", "z", "x"}, nil) // a repeated value is still one partition
	dictArr := dict.NewArray()
	defer dictArr.Release()
	idx := array.NewInt32Builder(memory.DefaultAllocator)
	defer idx.Release()
	r := rand.New(rand.NewPCG(3, 4))
	for range plain.NumRows() {
		if r.IntN(8) == 0 {
			idx.AppendNull()
		} else {
			idx.Append(int32(r.IntN(4)))
		}
	}
	idxArr := idx.NewArray()
	defer idxArr.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	col := array.NewDictionaryArray(dt, idxArr, dictArr)
	defer col.Release()

	fields := plain.Schema().Fields()
	fields[3].Type = dt
	schema := arrow.NewSchema(fields, nil)
	cols := slices.Clone(plain.Columns())
	cols[3] = col
	rec := array.NewRecordBatch(schema, cols, plain.NumRows())
	defer rec.Release()

	pf := mustFields(t, "s", "bucket(i, 2)")
	spec, _ := NewPartitionSpec(sc, pf)
	p, err := newPartitioner(spec, sc, schema)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := p.split(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, g := range groups {
		ns := g.rec.Column(0).(*array.Int64)
		for i := range ns.Len() {
			row := int(ns.Value(i))
			var want any
			if col.IsValid(row) {
				want = dictArr.(*array.String).Value(col.GetValueIndex(row))
			}
			if got := g.key.values[1000]; got != want {
				t.Fatalf("row %d: value %#v, want %#v", row, got, want)
			}
			if got, want := g.key.values[1001], refValue(t, plain, row, "i", iceberg.BucketTransform{NumBuckets: 2}); !reflect.DeepEqual(got, want) {
				t.Fatalf("row %d: bucket %#v, want %#v", row, got, want)
			}
		}
		total += ns.Len()
		g.rec.Release()
	}
	if total != int(rec.NumRows()) || len(groups) != 12 {
		t.Fatalf("%d rows in %d groups, want %d in 12", total, len(groups), rec.NumRows())
	}
}

// Strings may arrive as large_string; keys and the scatter of rows must not
// depend on the offset width.
func TestPartitionerLargeString(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	plain := testRecord(t, sc, 3000, 13)
	defer plain.Release()
	str := plain.Column(3).(*array.String)
	lb := array.NewLargeStringBuilder(memory.DefaultAllocator)
	defer lb.Release()
	for i := range str.Len() {
		if str.IsNull(i) {
			lb.AppendNull()
		} else {
			lb.Append(str.Value(i))
		}
	}
	large := lb.NewArray()
	defer large.Release()
	fields := plain.Schema().Fields()
	fields[3].Type = arrow.BinaryTypes.LargeString
	cols := slices.Clone(plain.Columns())
	cols[3] = large
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, plain.NumRows())
	defer rec.Release()

	pf := mustFields(t, "s", "truncate(s, 2)", "day(ts)")
	spec, _ := NewPartitionSpec(sc, pf)
	p, err := newPartitioner(spec, sc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	groups, err := p.split(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, g := range groups {
		ns := g.rec.Column(0).(*array.Int64)
		ss := g.rec.Column(3).(*array.LargeString)
		for i := range ns.Len() {
			row := int(ns.Value(i))
			for j, f := range pf {
				if got, want := g.key.values[1000+j], refValue(t, plain, row, f.Source, f.Transform); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: row %d: value %#v, want %#v", f.Expr, row, got, want)
				}
			}
			if ss.IsNull(i) != str.IsNull(row) || ss.Value(i) != str.Value(row) {
				t.Fatalf("row %d moved as %q, want %q", row, ss.Value(i), str.Value(row))
			}
		}
		total += ns.Len()
		g.rec.Release()
	}
	if total != int(rec.NumRows()) {
		t.Fatalf("%d rows in groups, want %d", total, rec.NumRows())
	}
}

// Partitions that arrive as one run of rows each are slices, not copies.
func TestPartitionerRunsAreSlices(t *testing.T) {
	t.Parallel()
	sc := testPartitionSchema()
	schema, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, s := range []string{"a", "a", "b", "b", "b", "c"} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		for _, c := range []int{1, 2, 4, 5, 6, 7, 8} {
			b.Field(c).AppendNull()
		}
		b.Field(3).(*array.StringBuilder).Append(s)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	fields := mustFields(t, "s")
	spec, _ := NewPartitionSpec(sc, fields)
	p, err := newPartitioner(spec, sc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	groups := checkSplit(t, p, rec, fields)
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3", len(groups))
	}
	for _, g := range groups {
		if g.rec.Column(3).Data().Buffers()[2] != rec.Column(3).Data().Buffers()[2] {
			t.Errorf("group %s was copied", g.key.path)
		}
	}
}

// FuzzParsePartitionField checks that the parser never panics, that what it
// accepts has a source, and that the canonical form parses back the same.
func FuzzParsePartitionField(f *testing.F) {
	for _, s := range []string{"a", "bucket(a, 3)", "truncate(4, b.c)", "DAY( ts )", "void(x)", "bucket(", "(", ")", "a(b,c,d)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		pf, err := ParsePartitionField(expr)
		if err != nil {
			if !errors.Is(err, ingest.ErrConfig) {
				t.Fatalf("%q: error %v is not ingest.ErrConfig", expr, err)
			}
			return
		}
		if pf.Source == "" {
			t.Fatalf("%q: empty source", expr)
		}
		var canon string
		switch tr := pf.Transform.(type) {
		case iceberg.IdentityTransform:
			canon = pf.Source
		case iceberg.BucketTransform:
			canon = fmt.Sprintf("bucket(%s, %d)", pf.Source, tr.NumBuckets)
		case iceberg.TruncateTransform:
			canon = fmt.Sprintf("truncate(%s, %d)", pf.Source, tr.Width)
		default:
			canon = fmt.Sprintf("%s(%s)", tr, pf.Source)
		}
		again, err := ParsePartitionField(canon)
		if err != nil || again.Source != pf.Source || !again.Transform.Equals(pf.Transform) {
			t.Fatalf("%q: canonical %q parses as %+v, %v", expr, canon, again, err)
		}
	})
}
