package scan

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
)

func n(v int64) *int64 { return &v }

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func f64(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }

// Statistics that describe no possible column are flagged, so they never
// prune; sound ones, complete or not, are kept.
func TestColStatsContradicts(t *testing.T) {
	t.Parallel()
	str, long, dbl := iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Float64
	for _, c := range []struct {
		name string
		s    colStats
		typ  iceberg.Type
		want bool
	}{
		{"sound", colStats{records: 3, values: n(3), nulls: n(1), lower: []byte("a"), upper: []byte("c")}, str, false},
		{"nothing recorded", colStats{records: 3}, str, false},
		{"counts only", colStats{records: 3, values: n(3), nulls: n(0)}, long, false},
		{"all null, no bounds", colStats{records: 3, values: n(3), nulls: n(3)}, str, false},
		{"lower bound only", colStats{records: 2, lower: le64(5)}, long, false},
		{"equal bounds", colStats{records: 2, lower: le64(5), upper: le64(5)}, long, false},
		{"NaN bound", colStats{records: 2, values: n(2), lower: f64(math.NaN()), upper: f64(1)}, dbl, false},
		{"value count without the nulls", colStats{records: 2, values: n(1), nulls: n(1)}, str, true},
		{"value count above the rows", colStats{records: 2, values: n(3)}, str, true},
		{"more nulls than rows", colStats{records: 2, nulls: n(3)}, str, true},
		{"negative null count", colStats{records: 2, nulls: n(-1)}, str, true},
		{"more NaNs than rows", colStats{records: 2, nans: n(3)}, dbl, true},
		{"nulls and NaNs above the rows", colStats{records: 2, nulls: n(1), nans: n(2)}, dbl, true},
		{"bounds on nulls only", colStats{records: 2, values: n(2), nulls: n(2), lower: []byte("a"), upper: []byte("a")}, str, true},
		{"lower above upper", colStats{records: 2, lower: le64(9), upper: le64(1)}, long, true},
		{"string lower above upper", colStats{records: 2, lower: []byte("b"), upper: []byte("a")}, str, true},
		{"undecodable bound", colStats{records: 2, lower: []byte{1, 2, 3}, upper: le64(1)}, long, true},
	} {
		if got := c.s.contradicts(c.typ); got != c.want {
			t.Errorf("%s: contradicts = %v, want %v", c.name, got, c.want)
		}
	}
}

// A file whose manifest metrics on a filter column contradict themselves
// may not be pruned; the other columns' metrics do not matter.
func TestFileStatsTrusted(t *testing.T) {
	t.Parallel()
	id := iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}
	value := iceberg.NestedField{ID: 2, Name: "value", Type: iceberg.PrimitiveTypes.String}
	file := func(values, nulls map[int]int64) iceberg.DataFile {
		b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, "f.parquet", iceberg.ParquetFile, nil, nil, nil, 2, 100)
		if err != nil {
			t.Fatal(err)
		}
		return b.ValueCounts(values).NullValueCounts(nulls).
			LowerBoundValues(map[int][]byte{1: le64(7), 2: []byte("blah")}).
			UpperBoundValues(map[int][]byte{1: le64(8), 2: []byte("blah")}).Build()
	}
	sound := file(map[int]int64{1: 2, 2: 2}, map[int]int64{1: 0, 2: 1})
	nonNullCounts := file(map[int]int64{1: 2, 2: 1}, map[int]int64{1: 0, 2: 1})
	for _, c := range []struct {
		name   string
		df     iceberg.DataFile
		fields []iceberg.NestedField
		want   bool
	}{
		{"sound", sound, []iceberg.NestedField{id, value}, true},
		{"value counts without nulls", nonNullCounts, []iceberg.NestedField{value}, false},
		{"other column's counts", nonNullCounts, []iceberg.NestedField{id}, true},
	} {
		if got := fileStatsTrusted(c.df, c.fields); got != c.want {
			t.Errorf("%s: trusted = %v, want %v", c.name, got, c.want)
		}
	}
	if mayMisreadRowGroups(file(map[int]int64{1: 2}, map[int]int64{1: 0}), []iceberg.NestedField{id}) {
		t.Error("a column with a null count of 0 may hold nulls")
	}
	if !mayMisreadRowGroups(sound, []iceberg.NestedField{value}) || !mayMisreadRowGroups(file(nil, nil), []iceberg.NestedField{id}) {
		t.Error("a column with nulls, or without a null count, may not hold nulls")
	}
	if !mayMisreadRowGroups(file(map[int]int64{2: 2}, map[int]int64{2: 0}), []iceberg.NestedField{value}) {
		t.Error("a string column's row groups are not checked for an absent maximum")
	}
}

// A row group holding as many nulls as values has sound statistics that
// iceberg-go 0.7.0 reads as "nulls only" (it takes Parquet's count of
// non-null values for Iceberg's value count): it must not prune on them.
func TestRowGroupStatsTrusted(t *testing.T) {
	t.Parallel()
	value := iceberg.NestedField{ID: 2, Name: "value", Type: iceberg.PrimitiveTypes.String}
	for _, c := range []struct {
		name string
		vals []*string
		want bool
	}{
		{"one null, one value", []*string{nil, ptr("blah")}, false},
		{"one null, two values", []*string{nil, ptr("a"), ptr("b")}, true},
		{"nulls only", []*string{nil, nil}, true},
		{"no nulls", []*string{ptr("a")}, true},
		// arrow-go writes no maximum over 4 KiB and reads it as ''.
		{"maximum over 4 KiB", []*string{ptr("a"), ptr("b" + strings.Repeat("x", 4096))}, false},
		{"minimum over 4 KiB", []*string{ptr("a" + strings.Repeat("x", 4096)), ptr("b")}, true},
		{"'' and a value over 4 KiB", []*string{ptr(""), ptr("b" + strings.Repeat("x", 4096))}, false},
	} {
		md := parquetWith(t, c.vals)
		if got := rowGroupStatsTrusted(md, []iceberg.NestedField{value}); got != c.want {
			t.Errorf("%s: trusted = %v, want %v", c.name, got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }

// parquetWith writes a one-row-group Parquet file of a string column with
// field id 2 holding vals, and returns its metadata.
func parquetWith(t *testing.T, vals []*string) *metadata.FileMetaData {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2"})}}, nil)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(vals)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.MetaData()
}
