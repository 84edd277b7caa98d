package scan_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/scan"
)

// Each test here is one case the filter differential test found, on a
// table floe wrote, checked row by row.

// idsAndExplain scans tbl with filter f, in floe's buffer pool as `floe
// scan` reads, and returns the ids read and how many files Explain plans.
func idsAndExplain(t *testing.T, tbl *table.Table, f string) ([]int64, int) {
	t.Helper()
	ctx := context.Background()
	ids, err := scanIDsOf(ctx, tbl, scan.Options{Filter: f, Allocator: arrowpool.New()})
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	slices.Sort(ids)
	plan, err := scan.Explain(ctx, tbl, scan.Options{Filter: f})
	if err != nil {
		t.Fatalf("explain %s: %v", f, err)
	}
	return ids, plan.FilesPlanned
}

func idSchema(f arrow.Field) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, f}, nil)
}

// A string or binary partition column holding both the empty string and NULL: iceberg-go
// writes the manifest's lower bound of the empty string as null, so the manifest looked
// like one of NULLs alone, and every predicate but IS NULL pruned it.
func TestEmptyStringAndNullPartitions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	vals := []*string{nil, ptr(""), ptr("a"), ptr("zz"), ptr("ab")}
	strRec := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema(arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}))
		defer b.Release()
		for i, v := range vals {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			appendOr(b.Field(1), v, b.Field(1).(*array.StringBuilder).Append)
		}
		return b.NewRecordBatch()
	}
	binRec := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema(arrow.Field{Name: "s", Type: arrow.BinaryTypes.Binary, Nullable: true}))
		defer b.Release()
		for i, v := range vals {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if v == nil {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.BinaryBuilder).Append([]byte(*v))
			}
		}
		return b.NewRecordBatch()
	}
	for _, c := range []struct {
		name      string
		rec       func() arrow.RecordBatch
		partition string
		filters   map[string][]int64
	}{
		{"identity", strRec, "s", nil},
		{"truncate", strRec, "truncate(s, 1)", nil},
		{"binary identity", binRec, "s", map[string][]int64{
			"s = X'61'": {2}, "s IS NOT NULL": {1, 2, 3, 4}, "s <> X'7A7A'": {1, 2, 4}, "s IS NULL": {0}, "s = X''": {1},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			filters := c.filters
			if filters == nil {
				filters = map[string][]int64{
					"s = 'a'": {2}, "s IS NOT NULL": {1, 2, 3, 4}, "s <> 'zz'": {1, 2, 4}, "s IS NULL": {0}, "s = ''": {1},
					"s < 'a'": {1}, "s LIKE 'a%'": {2, 4}, "s IN ('', 'zz')": {1, 3},
				}
			}
			tbl := streamFiles(t, dir, wh, config.Sink{Table: "db." + strings.ReplaceAll(c.name, " ", "_"), PartitionFields: []string{c.partition}}, c.rec())
			for f, want := range filters {
				got, planned := idsAndExplain(t, tbl, f)
				if !slices.Equal(got, want) {
					t.Errorf("%s: ids %v, want %v", f, got, want)
				}
				if planned < len(want) {
					t.Errorf("%s: explain plans %d files for %d matching rows in files of their own", f, planned, len(want))
				}
			}
		})
	}
}

// Floats compare as Spark compares them: -0.0 = 0.0, NaN = NaN and NaN
// above every other value; IN is the OR of its equalities and NOT IN the
// AND of its inequalities, on a plain table and one partitioned by the
// float column itself, so that partition and row group pruning take part.
func TestFloatFilterSemantics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	d := []float64{math.Copysign(0, -1), 0, math.NaN(), math.Inf(1), math.Inf(-1), 5, 1, 0} // id 8 is NULL
	rec := func() arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema(arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true}))
		defer b.Release()
		for i, v := range d {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Float64Builder).Append(v)
		}
		b.Field(0).(*array.Int64Builder).Append(int64(len(d)))
		b.Field(1).AppendNull()
		return b.NewRecordBatch()
	}
	filters := map[string][]int64{
		"d = 0.0":                {0, 1, 7},
		"d = -0.0":               {0, 1, 7},
		"d IN (0.0, 5.0)":        {0, 1, 5, 7},
		"d IN (-0.0)":            {0, 1, 7},
		"d NOT IN (0.0, 5.0)":    {2, 3, 4, 6},
		"d <> 0.0":               {2, 3, 4, 5, 6},
		"NOT d IN (0.0, 5.0)":    {2, 3, 4, 6},
		"d = 'NaN'":              {2},
		"d IN ('NaN', 1)":        {2, 6},
		"d NOT IN ('NaN')":       {0, 1, 3, 4, 5, 6, 7},
		"d <> 'NaN'":             {0, 1, 3, 4, 5, 6, 7},
		"d > 1":                  {2, 3, 5},
		"d >= 'Infinity'":        {2, 3},
		"d > 'Infinity'":         {2},
		"d < 'NaN'":              {0, 1, 3, 4, 5, 6, 7},
		"d <= 'NaN'":             {0, 1, 2, 3, 4, 5, 6, 7},
		"d > 'NaN'":              nil,
		"d < 0.0":                {4},
		"d <= 0.0":               {0, 1, 4, 7},
		"NOT (d < 5)":            {2, 3, 5},
		"d BETWEEN 1 AND 'NaN'":  {2, 3, 5, 6},
		"d BETWEEN -0.0 AND 0.0": {0, 1, 7},
		"d = '-Infinity'":        {4},
		"d IS NULL":              {8},
	}
	for _, c := range []struct{ name, partition string }{{"plain", ""}, {"partitioned", "d"}} {
		t.Run(c.name, func(t *testing.T) {
			sink := config.Sink{Table: "db." + c.name}
			if c.partition != "" {
				sink.PartitionFields = []string{c.partition}
			}
			tbl := streamFiles(t, dir, wh, sink, rec())
			for f, want := range filters {
				got, _ := idsAndExplain(t, tbl, f)
				if !slices.Equal(got, want) {
					t.Errorf("%s: ids %v, want %v", f, got, want)
				}
			}
		})
	}
}

// Booleans order FALSE < TRUE; Arrow has no ordering kernel for them and
// its is_in lost rows when the list repeated a value.
func TestBooleanFilters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema(arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}))
	for i, v := range []*bool{ptr(true), ptr(false), nil, ptr(true)} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		appendOr(b.Field(1), v, b.Field(1).(*array.BooleanBuilder).Append)
	}
	rec := b.NewRecordBatch()
	b.Release()
	tbl := streamFiles(t, dir, filepath.Join(dir, "warehouse"), config.Sink{Table: "db.b"}, rec)
	for f, want := range map[string][]int64{
		"b >= TRUE": {0, 3}, "b > FALSE": {0, 3}, "b < TRUE": {1}, "b <= FALSE": {1}, "b <= TRUE": {0, 1, 3},
		"b >= FALSE": {0, 1, 3}, "b < FALSE": nil, "b > TRUE": nil, "b IN (TRUE, FALSE, TRUE)": {0, 1, 3},
		"b NOT IN (FALSE, FALSE, TRUE)": nil, "b NOT IN (FALSE, FALSE)": {0, 3}, "NOT b < TRUE": {0, 3},
	} {
		if got, _ := idsAndExplain(t, tbl, f); !slices.Equal(got, want) {
			t.Errorf("%s: ids %v, want %v", f, got, want)
		}
	}
}
