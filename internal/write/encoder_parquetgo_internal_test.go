package write

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pq "github.com/parquet-go/parquet-go"

	"github.com/floe-io/floe/internal/pqgo"
)

// referenceFillValues is the parquet-go encoder's first conversion of a
// column, a closure and Value.Level per value: the files of fillValues
// must be the files it made, byte for byte.
func referenceFillValues(vals []pq.Value, col arrow.Array, maxDef, c int) error {
	var value func(i int) pq.Value
	switch a := col.(type) {
	case *array.Boolean:
		value = func(i int) pq.Value { return pq.BooleanValue(a.Value(i)) }
	case *array.Int32:
		raw := a.Int32Values()
		value = func(i int) pq.Value { return pq.Int32Value(raw[i]) }
	case *array.Int64:
		raw := a.Int64Values()
		value = func(i int) pq.Value { return pq.Int64Value(raw[i]) }
	case *array.Float32:
		raw := a.Float32Values()
		value = func(i int) pq.Value { return pq.FloatValue(raw[i]) }
	case *array.Float64:
		raw := a.Float64Values()
		value = func(i int) pq.Value { return pq.DoubleValue(raw[i]) }
	case *array.String:
		value = func(i int) pq.Value { return pq.ByteArrayValue([]byte(a.Value(i))) }
	case *array.Binary:
		value = func(i int) pq.Value { return pq.ByteArrayValue(a.Value(i)) }
	case *array.Date32:
		raw := a.Date32Values()
		value = func(i int) pq.Value { return pq.Int32Value(int32(raw[i])) }
	case *array.Timestamp:
		raw := a.TimestampValues()
		value = func(i int) pq.Value { return pq.Int64Value(int64(raw[i])) }
	case *array.Time64:
		raw := a.Time64Values()
		value = func(i int) pq.Value { return pq.Int64Value(int64(raw[i])) }
	default:
		return fmt.Errorf("arrow type %s is not on the parquet-go path", col.DataType())
	}
	null := pq.NullValue().Level(0, 0, c)
	nulls := col.NullN() > 0
	for i := range vals {
		if nulls && col.IsNull(i) {
			vals[i] = null
		} else {
			vals[i] = value(i).Level(0, maxDef, c)
		}
	}
	return nil
}

// nullsKind is how a generated column holds nulls.
type nullsKind int

const (
	someNulls nullsKind = iota
	noNulls
	allNulls
	required
)

// encoderSchema is a schema of every parquet-go type, each column in
// each kind of nulls, with distinct (plain) and repetitive (dictionary)
// strings and binaries.
func encoderSchema() *arrow.Schema {
	types := []struct {
		name string
		t    arrow.DataType
	}{
		{"b", arrow.FixedWidthTypes.Boolean},
		{"i", arrow.PrimitiveTypes.Int32},
		{"l", arrow.PrimitiveTypes.Int64},
		{"f", arrow.PrimitiveTypes.Float32},
		{"d", arrow.PrimitiveTypes.Float64},
		{"s", arrow.BinaryTypes.String},
		{"cat", arrow.BinaryTypes.String},
		{"bin", arrow.BinaryTypes.Binary},
		{"bincat", arrow.BinaryTypes.Binary},
		{"dt", arrow.FixedWidthTypes.Date32},
		{"ts", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"tstz", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{"t", arrow.FixedWidthTypes.Time64us},
	}
	var fields []arrow.Field
	for _, kind := range []nullsKind{someNulls, noNulls, allNulls, required} {
		for _, ty := range types {
			id := len(fields) + 1
			fields = append(fields, arrow.Field{
				Name:     fmt.Sprintf("%s_%d", ty.name, kind),
				Type:     ty.t,
				Nullable: kind != required,
				Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)}),
			})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// encoderRecord is n rows of schema starting at row first.
func encoderRecord(schema *arrow.Schema, first, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r := first; r < first+n; r++ {
		for c, f := range schema.Fields() {
			kind := nullsKind(c / (schema.NumFields() / 4))
			if kind == allNulls || kind == someNulls && (r+c)%7 == 0 {
				b.Field(c).AppendNull()
				continue
			}
			repeat := strings.HasPrefix(f.Name, "cat") || strings.HasPrefix(f.Name, "bincat")
			switch fb := b.Field(c).(type) {
			case *array.BooleanBuilder:
				fb.Append(r%3 == 0)
			case *array.Int32Builder:
				fb.Append(int32(r*7919 - 1_000_000))
			case *array.Int64Builder:
				fb.Append(int64(r) * 1_000_003)
			case *array.Float32Builder:
				fb.Append(float32(r) / 3)
			case *array.Float64Builder:
				fb.Append(float64(r) * -1.5)
			case *array.StringBuilder:
				switch {
				case repeat:
					fb.Append(fmt.Sprintf("cat-%d", r%5))
				case r%11 == 0:
					fb.Append("")
				default:
					fb.Append(fmt.Sprintf("payload-%09d-%x", r, r*r))
				}
			case *array.BinaryBuilder:
				if repeat {
					fb.Append([]byte{byte(r % 3)})
				} else {
					fb.Append([]byte(fmt.Sprintf("%d", r*r)))
				}
			case *array.Date32Builder:
				fb.Append(arrow.Date32(20000 + r%400))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(r)*1_000_000))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(int64(r%86400) * 1_000_000))
			}
		}
	}
	return b.NewRecordBatch()
}

type bufferCloser struct{ bytes.Buffer }

func (*bufferCloser) Close() error { return nil }

// encodeWith writes recs to one file with the parquet-go encoder, its
// columns converted by fill.
func encodeWith(t *testing.T, opts fileOptions, recs []arrow.RecordBatch, fill func([]pq.Value, arrow.Array, int, int) error) ([]byte, *metadata.FileMetaData) {
	t.Helper()
	buf := &bufferCloser{}
	e, err := newPqgoEncoder(recs[0].Schema(), &countingWriter{w: buf}, opts, firstRecord{recs[0]})
	if err != nil {
		t.Fatal(err)
	}
	e.rowGroups.put = func(rec arrow.RecordBatch) error {
		n := int(rec.NumRows())
		vals := make([]pq.Value, n)
		writers := e.w.ColumnWriters()
		for c, col := range rec.Columns() {
			if err := fill(vals, col, e.defLevel[c], c); err != nil {
				return err
			}
			if _, err := writers[c].WriteRowValues(vals); err != nil {
				return err
			}
		}
		return nil
	}
	for _, rec := range recs {
		taken, full, err := e.Write(rec)
		if err != nil || full || taken != rec.NumRows() {
			t.Fatalf("write: took %d of %d rows, full %v, err %v", taken, rec.NumRows(), full, err)
		}
	}
	meta, err := e.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), meta
}

func TestPqgoFillMatchesReference(t *testing.T) {
	t.Parallel()
	schema := encoderSchema()
	zstd, err := pqgo.NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		sizes []int // rows of each record
		opts  fileOptions
		slice bool // records are slices of a larger one, their offsets not 0
	}{
		{name: "one record", sizes: []int{1000}, opts: fileOptions{target: 1 << 40, rowGroup: 128 << 20}},
		{name: "one row", sizes: []int{1}, opts: fileOptions{target: 1 << 40, rowGroup: 128 << 20}},
		{name: "several records per row group", sizes: []int{700, 1, 3000, 250}, opts: fileOptions{target: 1 << 40, rowGroup: 128 << 20}},
		{name: "row group cuts", sizes: []int{5000, 5000, 5000, 5000}, opts: fileOptions{target: 1 << 40, rowGroup: 64 << 10}},
		{name: "page cuts", sizes: []int{20000, 20000, 20000}, opts: fileOptions{target: 1 << 40, rowGroup: 128 << 20}},
		{name: "sliced records", sizes: []int{333, 4000, 17}, slice: true, opts: fileOptions{target: 1 << 40, rowGroup: 256 << 10}},
		{name: "bloom filters", sizes: []int{3000, 3000}, opts: fileOptions{target: 1 << 40, rowGroup: 128 << 20,
			bloom: []bloomColumn{{name: "s_0", fpp: 0.01}, {name: "cat_1", fpp: 0.05}, {name: "l_3", fpp: 0.01}, {name: "i_2", fpp: 0.01}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.pqgoCodec = zstd
			var recs []arrow.RecordBatch
			first := 0
			for _, n := range tc.sizes {
				if tc.slice {
					whole := encoderRecord(schema, first-5, n+9)
					recs = append(recs, whole.NewSlice(5, int64(5+n)))
					whole.Release()
				} else {
					recs = append(recs, encoderRecord(schema, first, n))
				}
				first += n
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			got, gotMeta := encodeWith(t, opts, recs, fillValues)
			want, wantMeta := encodeWith(t, opts, recs, referenceFillValues)
			if gotMeta.NumRows != int64(first) {
				t.Fatalf("file holds %d rows, want %d", gotMeta.NumRows, first)
			}
			if gotMeta.NumRowGroups() != wantMeta.NumRowGroups() {
				t.Fatalf("%d row groups, want %d", gotMeta.NumRowGroups(), wantMeta.NumRowGroups())
			}
			for rg := range gotMeta.NumRowGroups() {
				g, w := gotMeta.RowGroup(rg), wantMeta.RowGroup(rg)
				for c := range g.NumColumns() {
					gc, _ := g.ColumnChunk(c)
					wc, _ := w.ColumnChunk(c)
					gs, _ := gc.StatsSet()
					ws, _ := wc.StatsSet()
					if gs != ws || gc.TotalCompressedSize() != wc.TotalCompressedSize() {
						t.Errorf("row group %d column %s: statistics set %v size %d, want %v size %d", rg, gc.PathInSchema(), gs, gc.TotalCompressedSize(), ws, wc.TotalCompressedSize())
					}
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("file of %d bytes differs from the reference's %d bytes", len(got), len(want))
			}
			checkCuts(t, tc.name, got)
		})
	}
}

// checkCuts makes sure that the cases meant to cut row groups and pages
// do, so that the comparison covers them.
func checkCuts(t *testing.T, name string, data []byte) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	switch name {
	case "row group cuts":
		if r.NumRowGroups() < 3 {
			t.Fatalf("%d row groups, want several", r.NumRowGroups())
		}
	case "page cuts":
		pages, err := r.RowGroup(0).GetColumnPageReader(5)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for pages.Next() {
			n++
		}
		if n < 2 {
			t.Fatalf("%d pages in column s_0, want several", n)
		}
	case "bloom filters":
		bf, err := r.GetBloomFilterReader().RowGroup(0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := bf.GetColumnBloomFilter(5)
		if err != nil || f == nil {
			t.Fatalf("no bloom filter on s_0: %v", err)
		}
	}
}
