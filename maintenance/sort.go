package maintenance

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sortRecords orders the rows of recs by the top-level columns keys,
// ascending with nulls first (Iceberg's default for an ascending sort
// field), keeping the input order among equal keys. The result is one
// record; recs are not released.
func sortRecords(ctx context.Context, schema *arrow.Schema, recs []arrow.RecordBatch, keys []string) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		chunks := make([]arrow.Array, len(recs))
		for j, r := range recs {
			chunks[j] = r.Column(i)
		}
		if len(chunks) == 0 {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(i).Type, 0)
			continue
		}
		c, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("sort: column %s: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	var compares []func(a, b int) int
	for _, k := range keys {
		idx := schema.FieldIndices(k)
		if len(idx) != 1 {
			return nil, fmt.Errorf("sort: no top-level column %q (columns: %s)", k, fieldNames(schema))
		}
		c, err := comparator(cols[idx[0]])
		if err != nil {
			return nil, fmt.Errorf("sort: column %s: %w", k, err)
		}
		compares = append(compares, c)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		for _, c := range compares {
			if r := c(a, b); r != 0 {
				return r
			}
		}
		return 0
	})
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	for _, i := range order {
		ib.Append(int64(i))
	}
	indices := ib.NewArray()
	defer indices.Release()
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		t, err := compute.TakeArray(ctx, c, indices)
		if err != nil {
			for _, o := range out[:i] {
				o.Release()
			}
			return nil, fmt.Errorf("sort: column %s: %w", schema.Field(i).Name, err)
		}
		out[i] = t
	}
	rec := array.NewRecordBatch(schema, out, n)
	for _, o := range out {
		o.Release()
	}
	return rec, nil
}

// comparator orders two rows of a by value, nulls first.
func comparator(a arrow.Array) (func(i, j int) int, error) {
	nulls := func(i, j int) (int, bool) {
		switch ni, nj := a.IsNull(i), a.IsNull(j); {
		case ni && nj:
			return 0, true
		case ni:
			return -1, true
		case nj:
			return 1, true
		}
		return 0, false
	}
	by := func(f func(i, j int) int) func(i, j int) int {
		return func(i, j int) int {
			if r, ok := nulls(i, j); ok {
				return r
			}
			return f(i, j)
		}
	}
	switch x := a.(type) {
	case *array.Int8:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Int16:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Int32:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Int64:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Float32:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Float64:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Date32:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Time64:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Timestamp:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.String:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.LargeString:
		return by(func(i, j int) int { return cmp.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Binary:
		return by(func(i, j int) int { return bytes.Compare(x.Value(i), x.Value(j)) }), nil
	case *array.Boolean:
		b := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		return by(func(i, j int) int { return cmp.Compare(b(x.Value(i)), b(x.Value(j))) }), nil
	}
	return nil, fmt.Errorf("cannot sort by type %s; sort by integer, floating-point, date, time, timestamp, string, binary or boolean columns", a.DataType())
}

func fieldNames(s *arrow.Schema) string {
	var b bytes.Buffer
	for i, f := range s.Fields() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
	}
	return b.String()
}
