package write

import (
	"bytes"
	"context"
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

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/partition"
	"github.com/floe-io/floe/internal/partref"
)

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
func checkSplit(t *testing.T, p *partitioner, rec arrow.RecordBatch, fields []partition.Field) []partitionGroup {
	t.Helper()
	return checkSplitOf(t, p, rec, rec, fields)
}

// checkSplitOf checks the split of in, a slice of orig; column n holds the
// row numbers of orig.
func checkSplitOf(t *testing.T, p *partitioner, in, orig arrow.RecordBatch, fields []partition.Field) []partitionGroup {
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
	sc := fixture.PartitionSchema()
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
			fields := fixture.PartitionFields(t, expr)
			spec, err := partition.NewSpec(sc, fields)
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

// A spec partition.NewSpec admits for a new table, the partitioner must
// compute: partition.Writable lists the types and transforms it knows.
func TestPartitionerComputesWritableSpecs(t *testing.T) {
	t.Parallel()
	types := []iceberg.Type{
		iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.DecimalTypeOf(10, 2),
		iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp,
		iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.TimestampNs, iceberg.PrimitiveTypes.TimestampTzNs,
		iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Binary, iceberg.FixedTypeOf(16), iceberg.PrimitiveTypes.UUID,
	}
	transforms := []iceberg.Transform{
		iceberg.IdentityTransform{}, iceberg.BucketTransform{NumBuckets: 4}, iceberg.TruncateTransform{Width: 3},
		iceberg.YearTransform{}, iceberg.MonthTransform{}, iceberg.DayTransform{}, iceberg.HourTransform{}, iceberg.VoidTransform{},
	}
	admitted := 0
	for _, typ := range types {
		sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: typ})
		schema, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range transforms {
			spec, err := partition.NewSpec(sc, []partition.Field{{Expr: tr.String(), Source: "c", Transform: tr}})
			if err != nil {
				continue
			}
			admitted++
			if _, err := newPartitioner(spec, sc, schema); err != nil {
				t.Errorf("%s of %s: %v", tr, typ, err)
			}
		}
	}
	if admitted < len(types) {
		t.Fatalf("partition.NewSpec admitted %d specs, fewer than one a type", admitted)
	}
}

func TestPartitionerMultipleFields(t *testing.T) {
	t.Parallel()
	sc := fixture.PartitionSchema()
	rec := testRecord(t, sc, 20000, 11)
	defer rec.Release()
	for _, exprs := range [][]string{
		{"day(ts)", "s"},
		{"bucket(l, 16)", "meta.region", "void(i)", "month(d)"},
		{"l", "i", "ts"}, // too many combinations for a dense table
	} {
		t.Run(strings.Join(exprs, ","), func(t *testing.T) {
			fields := fixture.PartitionFields(t, exprs...)
			spec, err := partition.NewSpec(sc, fields)
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
	sc := fixture.PartitionSchema()
	rec := testRecord(t, sc, 1000, 3)
	defer rec.Release()
	fields := fixture.PartitionFields(t, "void(s)")
	spec, _ := partition.NewSpec(sc, fields)
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
	sc := fixture.PartitionSchema()
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
	fields := fixture.PartitionFields(t, "day(ts)", "s", "meta.region")
	spec, _ := partition.NewSpec(sc, fields)
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
	sc := fixture.PartitionSchema()
	fields := fixture.PartitionFields(t, "day(ts)", "s")
	spec, _ := partition.NewSpec(sc, fields)
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
	sc := fixture.PartitionSchema()
	rec := testRecord(t, sc, 300, 5)
	defer rec.Release()
	fields := fixture.PartitionFields(t, "day(ts)", "bucket(l, 4)", "truncate(s, 2)", "month(d)", "hour(tstz)", "i", "l", "d", "ts", "tstz", "meta.region", "void(f)", "truncate(i, 100)")
	spec, err := partition.NewSpec(sc, fields)
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
	spec, err := partition.NewSpec(sc, fixture.PartitionFields(b, "day(ts)", "category"))
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
	sc := fixture.PartitionSchema()
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

	pf := fixture.PartitionFields(t, "s", "bucket(i, 2)")
	spec, _ := partition.NewSpec(sc, pf)
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
	sc := fixture.PartitionSchema()
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

	pf := fixture.PartitionFields(t, "s", "truncate(s, 2)", "day(ts)")
	spec, _ := partition.NewSpec(sc, pf)
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
	sc := fixture.PartitionSchema()
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
	fields := fixture.PartitionFields(t, "s")
	spec, _ := partition.NewSpec(sc, fields)
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
