package floe

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// conformer maps records of one input schema onto the table's Arrow schema:
// columns by name, safe widening casts, nested types re-tagged with the
// table's field ids. It is built once per input schema, not per record.
type conformer struct {
	table string
	out   *arrow.Schema
	cols  []conformCol
}

type conformCol struct {
	name     string
	in       int // input column index, -1 when the input lacks the column
	cast     bool
	retype   bool
	required bool
}

// newConformer plans the mapping or explains, naming the column and both
// types, why the input does not fit the table.
func newConformer(tableName string, in, out *arrow.Schema) (*conformer, error) {
	c := &conformer{table: tableName, out: out}
	used := make([]bool, in.NumFields())
	for _, f := range out.Fields() {
		col := conformCol{name: f.Name, in: -1, required: !f.Nullable}
		idx := in.FieldIndices(f.Name)
		if len(idx) == 0 {
			for i, inf := range in.Fields() {
				if strings.EqualFold(inf.Name, f.Name) {
					idx = []int{i}
					break
				}
			}
		}
		if len(idx) > 0 {
			col.in = idx[0]
			used[idx[0]] = true
			inType := in.Field(idx[0]).Type
			switch {
			case arrow.TypeEqual(inType, f.Type, arrow.CheckMetadata()):
			case arrow.TypeEqual(inType, f.Type) || sameShape(inType, f.Type):
				col.retype = true
			case canCast(inType, f.Type):
				col.cast = true
			default:
				return nil, fmt.Errorf("%w: column %q has type %s in the input but %s in table %s; convert the input or change the table column", ErrSchemaMismatch, f.Name, typeName(inType), typeName(f.Type), tableName)
			}
		} else if col.required {
			return nil, fmt.Errorf("%w: required column %q of table %s is missing from the input", ErrSchemaMismatch, f.Name, tableName)
		}
		c.cols = append(c.cols, col)
	}
	for i, u := range used {
		if !u {
			f := in.Field(i)
			return nil, fmt.Errorf("%w: column %q (%s) is not in table %s; drop it from the input or add it to the table", ErrSchemaMismatch, f.Name, typeName(f.Type), tableName)
		}
	}
	return c, nil
}

// conform converts one record; firstRow is the record's offset within its
// file, so that a null in a required column can be located.
func (c *conformer) conform(ctx context.Context, rec arrow.RecordBatch, firstRow int64) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	cols := make([]arrow.Array, len(c.cols))
	release := func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}
	for i, col := range c.cols {
		dt := c.out.Field(i).Type
		var arr arrow.Array
		switch {
		case col.in < 0:
			arr = array.MakeArrayOfNull(memoryPool, dt, int(n))
		case col.cast:
			out, err := compute.CastArray(ctx, rec.Column(col.in), compute.SafeCastOptions(dt))
			if err != nil {
				release()
				return nil, fmt.Errorf("%w: column %q: cannot convert %s to %s (%v)", ErrSchemaMismatch, col.name, typeName(rec.Column(col.in).DataType()), typeName(dt), err)
			}
			arr = out
		case col.retype:
			arr = array.MakeFromData(retypeData(rec.Column(col.in).Data(), dt))
		default:
			arr = rec.Column(col.in)
			arr.Retain()
		}
		cols[i] = arr
		if col.required && arr.NullN() > 0 {
			row := firstRow
			for j := 0; j < arr.Len(); j++ {
				if arr.IsNull(j) {
					row += int64(j)
					break
				}
			}
			release()
			return nil, fmt.Errorf("%w: column %q is required in table %s but row %d is null", ErrSchemaMismatch, col.name, c.table, row+1)
		}
	}
	out := array.NewRecordBatch(c.out, cols, n)
	release()
	return out, nil
}

// sameShape reports whether two nested types have the same layout and
// names, differing only in field metadata or nullability.
func sameShape(a, b arrow.DataType) bool {
	if a.ID() != b.ID() {
		return false
	}
	switch at := a.(type) {
	case *arrow.StructType:
		bt := b.(*arrow.StructType)
		if at.NumFields() != bt.NumFields() {
			return false
		}
		for i := range at.NumFields() {
			if at.Field(i).Name != bt.Field(i).Name || !sameShape(at.Field(i).Type, bt.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.ListType:
		return sameShape(at.Elem(), b.(*arrow.ListType).Elem())
	case *arrow.MapType:
		bt := b.(*arrow.MapType)
		return sameShape(at.KeyType(), bt.KeyType()) && sameShape(at.ItemType(), bt.ItemType())
	case *arrow.TimestampType:
		bt := b.(*arrow.TimestampType)
		return at.Unit == bt.Unit && (at.TimeZone == "") == (bt.TimeZone == "")
	default:
		return arrow.TypeEqual(a, b)
	}
}

// retypeData gives array data the table's type (same layout, the table's
// field metadata) without copying buffers.
func retypeData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	children := d.Children()
	var childTypes []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case *arrow.ListType:
		childTypes = []arrow.DataType{t.Elem()}
	case *arrow.MapType:
		childTypes = []arrow.DataType{t.Elem()}
	}
	newChildren := make([]arrow.ArrayData, len(children))
	for i, ch := range children {
		if i < len(childTypes) {
			newChildren[i] = retypeData(ch, childTypes[i])
		} else {
			ch.Retain()
			newChildren[i] = ch
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), newChildren, d.NullN(), d.Offset())
	for _, ch := range newChildren {
		ch.Release()
	}
	return out
}

// canCast allows the conversions that lose nothing for real data: integer
// and float widening, integers into doubles (CSV and JSON numbers), time
// units into microseconds, dictionary and large strings into strings, and
// all-null columns into anything.
func canCast(from, to arrow.DataType) bool {
	if from.ID() == arrow.NULL {
		return true
	}
	if d, ok := from.(*arrow.DictionaryType); ok {
		return arrow.TypeEqual(d.ValueType, to) || canCast(d.ValueType, to)
	}
	isInt := func(t arrow.DataType) bool { return arrow.IsInteger(t.ID()) }
	switch to.ID() {
	case arrow.INT64, arrow.INT32:
		return isInt(from)
	case arrow.FLOAT64:
		return isInt(from) || from.ID() == arrow.FLOAT32 || from.ID() == arrow.FLOAT16
	case arrow.FLOAT32:
		return from.ID() == arrow.FLOAT16
	case arrow.STRING:
		return from.ID() == arrow.LARGE_STRING || from.ID() == arrow.STRING_VIEW
	case arrow.BINARY:
		return from.ID() == arrow.LARGE_BINARY || from.ID() == arrow.BINARY_VIEW
	case arrow.TIMESTAMP:
		ft, ok := from.(*arrow.TimestampType)
		return ok && (ft.TimeZone == "") == (to.(*arrow.TimestampType).TimeZone == "")
	case arrow.DATE32:
		return from.ID() == arrow.DATE64
	case arrow.TIME64:
		return from.ID() == arrow.TIME32 || from.ID() == arrow.TIME64
	case arrow.DECIMAL128:
		return isInt(from)
	}
	return false
}

// typeName prints a type in Iceberg's vocabulary where one exists, since
// that is what users see in the table's schema.
func typeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.BOOL:
		return "boolean"
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16:
		return "int"
	case arrow.INT64, arrow.UINT32, arrow.UINT64:
		return "long"
	case arrow.FLOAT32:
		return "float"
	case arrow.FLOAT64:
		return "double"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "string"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return "binary"
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone != "" {
			return "timestamptz"
		}
		return "timestamp"
	case arrow.NULL:
		return "null"
	}
	return t.String()
}
