package filter

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// tri is a truth value of SQL's three-valued logic.
type tri uint8

const (
	false_ tri = iota
	true_
	unknown
)

func triOf(b bool) tri {
	if b {
		return true_
	}
	return false_
}

// Matcher evaluates a bound filter on Arrow records of one schema, with
// SQL semantics: a row passes only when the filter is TRUE, never when it
// is unknown because of a NULL.
type Matcher struct {
	schema *arrow.Schema
	root   node
	// paths holds, per leaf, the field index at each nesting level.
	paths map[leaf][]int
}

// Matcher checks the whole filter, for readers that do not filter rows
// with Pushed themselves.
func (b *Bound) Matcher(sc *arrow.Schema) (*Matcher, error) { return newMatcher(sc, b.root) }

// ResidualMatcher checks only Residual, for rows of a scan with
// table.WithRowFilter(Pushed); it passes every row when Residual is nil.
func (b *Bound) ResidualMatcher(sc *arrow.Schema) (*Matcher, error) {
	if b.residual == nil {
		return newMatcher(sc, constNode(true))
	}
	return newMatcher(sc, b.residual)
}

func newMatcher(sc *arrow.Schema, root node) (*Matcher, error) {
	m := &Matcher{schema: sc, root: root, paths: map[leaf][]int{}}
	var walk func(node) error
	walk = func(n node) error {
		switch n := n.(type) {
		case andNode:
			return firstErr(walk(n.l), walk(n.r))
		case orNode:
			return firstErr(walk(n.l), walk(n.r))
		case leaf:
			path, err := arrowPath(sc, n.column())
			m.paths[n] = path
			return err
		}
		return nil
	}
	return m, walk(root)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// arrowPath finds c in the Arrow schema by the names Bind resolved, and
// checks the Arrow type holds the values the leaf compares with.
func arrowPath(sc *arrow.Schema, c column) ([]int, error) {
	fields := sc.Fields()
	var path []int
	var dt arrow.DataType
	for _, name := range c.names {
		i := fieldIndex(fields, name)
		if i < 0 {
			return nil, fmt.Errorf("%w: column %s is not in the records", ErrBind, c)
		}
		path, dt = append(path, i), fields[i].Type
		if st, ok := dt.(*arrow.StructType); ok {
			fields = st.Fields()
		} else {
			fields = nil
		}
	}
	if !arrowFits(dt, c.typ) {
		return nil, fmt.Errorf("%w: column %s is %s in the table but %s in the records", ErrBind, c, c.typ, dt)
	}
	return path, nil
}

func fieldIndex(fields []arrow.Field, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func arrowFits(dt arrow.DataType, t iceberg.Type) bool {
	switch t := t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return dt.ID() == arrow.INT32 || dt.ID() == arrow.INT64
	case iceberg.Float32Type, iceberg.Float64Type:
		return dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64
	case iceberg.DecimalType:
		d, ok := dt.(*arrow.Decimal128Type)
		return ok && int(d.Scale) == t.Scale()
	case iceberg.StringType:
		return dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.STRING_VIEW
	case iceberg.BooleanType:
		return dt.ID() == arrow.BOOL
	case iceberg.DateType:
		return dt.ID() == arrow.DATE32
	case iceberg.TimeType:
		tt, ok := dt.(*arrow.Time64Type)
		return ok && tt.Unit == arrow.Microsecond
	case iceberg.UUIDType:
		_, ok := dt.(*extensions.UUIDType)
		return ok
	case iceberg.BinaryType:
		return dt.ID() == arrow.BINARY || dt.ID() == arrow.LARGE_BINARY || dt.ID() == arrow.BINARY_VIEW
	case iceberg.FixedType:
		f, ok := dt.(*arrow.FixedSizeBinaryType)
		return ok && f.ByteWidth == t.Len()
	case iceberg.TimestampType, iceberg.TimestampTzType:
		// Literals are microseconds, the unit of Iceberg timestamps.
		ts, ok := dt.(*arrow.TimestampType)
		return ok && ts.Unit == arrow.Microsecond
	}
	return false
}

// Match reports, per row of rec, whether the filter is TRUE.
func (m *Matcher) Match(rec arrow.RecordBatch) ([]bool, error) {
	if !rec.Schema().Equal(m.schema) {
		return nil, fmt.Errorf("filter: record schema %s differs from the matcher's %s", rec.Schema(), m.schema)
	}
	ts := m.eval(m.root, rec)
	out := make([]bool, len(ts))
	for i, t := range ts {
		out[i] = t == true_
	}
	return out, nil
}

// Filter returns the rows of rec that match; the caller releases it.
func (m *Matcher) Filter(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	keep, err := m.Match(rec)
	if err != nil {
		return nil, err
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(keep, nil)
	mask := b.NewArray()
	defer mask.Release()
	return compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
}

func (m *Matcher) eval(n node, rec arrow.RecordBatch) []tri {
	rows := int(rec.NumRows())
	out := make([]tri, rows)
	switch n := n.(type) {
	case andNode:
		l, r := m.eval(n.l, rec), m.eval(n.r, rec)
		for i := range out {
			if l[i] == false_ || r[i] == false_ {
				out[i] = false_
			} else if l[i] == unknown || r[i] == unknown {
				out[i] = unknown
			} else {
				out[i] = true_
			}
		}
	case orNode:
		l, r := m.eval(n.l, rec), m.eval(n.r, rec)
		for i := range out {
			if l[i] == true_ || r[i] == true_ {
				out[i] = true_
			} else if l[i] == unknown || r[i] == unknown {
				out[i] = unknown
			}
		}
	case constNode:
		for i := range out {
			out[i] = triOf(bool(n))
		}
	case leaf:
		get := cells(rec, m.paths[n])
		for i := range out {
			if v, ok := get(i); ok {
				out[i] = triOf(n.match(v))
			} else {
				out[i] = n.matchNull()
			}
		}
	}
	return out
}

// cells reads the column at path as the Go values leaves compare with;
// ok is false when the value or any struct holding it is null.
func cells(rec arrow.RecordBatch, path []int) func(int) (any, bool) {
	arr := rec.Column(path[0])
	parents := []arrow.Array{}
	for _, i := range path[1:] {
		parents = append(parents, arr)
		arr = arr.(*array.Struct).Field(i)
	}
	get := values(arr)
	return func(i int) (any, bool) {
		for _, p := range parents {
			if p.IsNull(i) {
				return nil, false
			}
		}
		if arr.IsNull(i) {
			return nil, false
		}
		return get(i), true
	}
}

func values(arr arrow.Array) func(int) any {
	switch a := arr.(type) {
	case *array.Int32:
		return func(i int) any { return int64(a.Value(i)) }
	case *array.Int64:
		return func(i int) any { return a.Value(i) }
	case *array.Float32:
		return func(i int) any { return float64(a.Value(i)) }
	case *array.Float64:
		return func(i int) any { return a.Value(i) }
	case *array.Decimal128:
		return func(i int) any { return a.Value(i) }
	case *array.String:
		return func(i int) any { return a.Value(i) }
	case *array.LargeString:
		return func(i int) any { return a.Value(i) }
	case *array.StringView:
		return func(i int) any { return a.Value(i) }
	case *array.Boolean:
		return func(i int) any { return a.Value(i) }
	case *array.Date32:
		return func(i int) any { return int64(a.Value(i)) }
	case *array.Time64:
		return func(i int) any { return int64(a.Value(i)) }
	case *extensions.UUIDArray:
		return func(i int) any { u := a.Value(i); return string(u[:]) }
	case *array.Timestamp:
		return func(i int) any { return int64(a.Value(i)) }
	case *array.Binary:
		return func(i int) any { return string(a.Value(i)) }
	case *array.LargeBinary:
		return func(i int) any { return string(a.Value(i)) }
	case *array.BinaryView:
		return func(i int) any { return string(a.Value(i)) }
	case *array.FixedSizeBinary:
		return func(i int) any { return string(a.Value(i)) }
	}
	panic(fmt.Sprintf("filter: no reader for %s", arr.DataType()))
}
