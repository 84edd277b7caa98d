package filter_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/filter"
)

// The matcher orders floats as Spark does (-0.0 = 0.0; NaN = NaN, above
// every other value), so it agrees with what is pushed down, and NOT of a
// comparison is the opposite comparison for every non-null value.
func TestMatcherFloatOrder(t *testing.T) {
	t.Parallel()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 2, Name: "f", Type: iceberg.PrimitiveTypes.Float32})
	vals := []float64{math.Copysign(0, -1), 0, math.NaN(), math.Inf(1), math.Inf(-1), 5}
	asc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	for _, v := range vals {
		b.Field(0).(*array.Float64Builder).Append(v)
		b.Field(1).(*array.Float32Builder).Append(float32(v))
	}
	b.Field(0).AppendNull()
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for text, want := range map[string][]int{
		"d = 0.0": {0, 1}, "d IN (0.0, 5.0)": {0, 1, 5}, "d NOT IN (-0.0)": {2, 3, 4, 5}, "d = 'NaN'": {2},
		"d > 5": {2, 3}, "NOT (d <= 5)": {2, 3}, "d < 'NaN'": {0, 1, 3, 4, 5}, "d >= 'nan'": {2},
		"d <> 'NaN'": {0, 1, 3, 4, 5}, "d BETWEEN '-Infinity' AND 0": {0, 1, 4},
		"f IN (0, 'NaN')": {0, 1, 2}, "f > 'Infinity'": {2},
	} {
		e, err := filter.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		bound, err := filter.Bind(e, sc)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		m, err := bound.Matcher(asc)
		if err != nil {
			t.Fatal(err)
		}
		keep, err := m.Match(rec)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i, k := range keep {
			if k {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rows %v, want %v", text, got, want)
		}
	}
}

// A float column compares with the strings Spark casts to the values no
// number literal spells; other strings are refused.
func TestFloatSpecialLiterals(t *testing.T) {
	t.Parallel()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Float64})
	for _, ok := range []string{"'NaN'", "'nan'", "'Infinity'", "'-Infinity'", "'+Inf'", "'-inf'"} {
		if _, err := filter.Bind(mustParse(t, "d = "+ok), sc); err != nil {
			t.Errorf("d = %s: %v", ok, err)
		}
	}
	_, err := filter.Bind(mustParse(t, "d = '1.5'"), sc)
	if err == nil || !strings.Contains(err.Error(), "'NaN', 'Infinity' and '-Infinity'") {
		t.Errorf("d = '1.5': %v", err)
	}
}
