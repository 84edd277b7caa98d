package conform

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// conformer maps records of one input schema onto the table's Arrow schema:
// columns by name, safe widening casts, nested types re-tagged with the
// table's field ids. It is built once per input schema, not per record.
type Conformer struct {
	table string
	out   *arrow.Schema
	cols  []conformCol
}

type conformCol struct {
	name     string
	in       int // input column index, -1 when the input lacks the column
	cast     bool
	retype   bool
	nested   bool                 // struct or list conformed field by field (conformData)
	variant  bool                 // a variant of another layout, rebuilt in the table's (variantArray)
	def      *iceberg.NestedField // the write-default of a column the input lacks
	required bool
	// nestedRequired marks a struct column with required fields below it,
	// whose nulls are checked per record.
	nestedRequired bool
}

// conformOptions relax the schema checks that Iceberg's Spark writer makes
// (TypeUtil.validateWriteSchema). They are named for what they allow so
// that the zero value is Spark's default, both checks on: a caller that
// forgets the options gets the strict checks, never silently loose ones.
type Options struct {
	// AllowNullable accepts an optional input column (or nested field) for
	// a required table column and checks its values instead: a null then
	// fails the record, naming the row (check-nullability: false).
	AllowNullable bool
	// AllowReorder matches columns and struct fields by name in any order
	// (check-ordering: false); otherwise those the table has must come in
	// the table's relative order.
	AllowReorder bool
	// Defaults are the table's columns with a write-default
	// (WriteDefaults): an input without one gets the default instead of
	// null, and may lack it though it is required.
	Defaults map[string]iceberg.NestedField
}

// conformOptionsFor turns a sink's check-nullability and check-ordering
// settings into conformer options.
func OptionsFor(s *config.Sink) Options {
	return Options{AllowNullable: !s.NullabilityChecked(), AllowReorder: !s.OrderingChecked()}
}

// newConformer plans the mapping or explains, naming the column and both
// types, why the input does not fit the table.
func NewConformer(tableName string, in, out *arrow.Schema, opts Options) (*Conformer, error) {
	c := &Conformer{table: tableName, out: out}
	used := make([]bool, in.NumFields())
	prev := -1 // table column with the highest input index so far
	for j, f := range out.Fields() {
		col := conformCol{name: f.Name, in: -1, required: !f.Nullable, nestedRequired: hasRequiredChild(f.Type)}
		if i := FieldIndex(in.Fields(), f.Name); i >= 0 {
			col.in = i
			used[i] = true
			inf := in.Field(i)
			inType := inf.Type
			switch {
			case arrow.TypeEqual(inType, f.Type, arrow.CheckMetadata()):
			case arrow.TypeEqual(inType, f.Type) || SameShape(inType, f.Type):
				col.retype = true
			case IsVariant(inType) && IsVariant(f.Type):
				col.variant = true
			case CanCast(inType, f.Type):
				col.cast = true
			case nestedFits(inType, f.Type):
				col.nested = true
			default:
				return nil, fmt.Errorf("%w: column %q has type %s in the input but %s in table %s; convert the input or change the table column", ingest.ErrSchemaMismatch, f.Name, TypeName(inType), TypeName(f.Type), tableName)
			}
			if !opts.AllowReorder {
				if prev >= 0 && col.in < c.cols[prev].in {
					a := c.cols[prev].name
					return nil, fmt.Errorf("%w: column %q comes before %q in the input but after it in table %s; reorder the input or set check-ordering: false", ingest.ErrSchemaMismatch, f.Name, a, tableName)
				}
				prev = j
			}
			if !opts.AllowNullable && inf.Nullable && !f.Nullable {
				return nil, nullabilityError(f.Name, tableName)
			}
			if err := checkNested(f.Name, inType, f.Type, opts, tableName); err != nil {
				return nil, err
			}
		} else if def, ok := opts.Defaults[f.Name]; ok {
			col.def = &def
		} else if col.required {
			return nil, fmt.Errorf("%w: required column %q of table %s is missing from the input", ingest.ErrSchemaMismatch, f.Name, tableName)
		}
		c.cols = append(c.cols, col)
	}
	for i, u := range used {
		if !u {
			f := in.Field(i)
			return nil, fmt.Errorf("%w: column %q (%s) is not in table %s; drop it from the input or add it to the table", ingest.ErrSchemaMismatch, f.Name, TypeName(f.Type), tableName)
		}
	}
	return c, nil
}

// castError explains a conversion that the values refused. Nanoseconds
// into a microsecond column lose precision, which floe never does
// silently: the fix is a timestamp_ns column or a truncation upstream.
func castError(tableName, name string, from, to arrow.DataType, err error) error {
	if ft, ok := from.(*arrow.TimestampType); ok && ft.Unit == arrow.Nanosecond {
		if tt, ok := to.(*arrow.TimestampType); ok && tt.Unit != arrow.Nanosecond {
			return fmt.Errorf("%w: column %q holds nanosecond timestamps with digits below the microsecond, but is %s (microseconds) in table %s (%v); write it to a %s_ns column of a format-version 3 table, or truncate the values to microseconds before floe reads them", ingest.ErrSchemaMismatch, name, TypeName(to), tableName, err, TypeName(to))
		}
	}
	return fmt.Errorf("%w: column %q: cannot convert %s to %s (%v)", ingest.ErrSchemaMismatch, name, TypeName(from), TypeName(to), err)
}

func nullabilityError(name, tableName string) error {
	return fmt.Errorf("%w: column %q is required in table %s but optional in the input; make it required in the input, or set check-nullability: false to check the values instead", ingest.ErrSchemaMismatch, name, tableName)
}

// checkNested applies the nullability and ordering checks below a column,
// as Iceberg's CheckCompatibility does at every struct, list and map.
// Fields the types do not share are left to nestedFits.
func checkNested(path string, in, out arrow.DataType, opts Options, tableName string) error {
	switch ot := out.(type) {
	case *arrow.StructType:
		it, ok := in.(*arrow.StructType)
		if !ok {
			return nil
		}
		prev, prevIn := "", -1
		for _, of := range ot.Fields() {
			i := structFieldIndex(it, of.Name)
			if i < 0 {
				continue
			}
			inf := it.Field(i)
			name := path + "." + of.Name
			if !opts.AllowReorder {
				if i < prevIn {
					return fmt.Errorf("%w: column %q comes before %q in the input but after it in table %s; reorder the input or set check-ordering: false", ingest.ErrSchemaMismatch, name, prev, tableName)
				}
				prev, prevIn = name, i
			}
			if !opts.AllowNullable && inf.Nullable && !of.Nullable {
				return nullabilityError(name, tableName)
			}
			if err := checkNested(name, inf.Type, of.Type, opts, tableName); err != nil {
				return err
			}
		}
	case *arrow.ListType:
		it, ok := in.(arrow.ListLikeType)
		if !ok || it.ID() == arrow.MAP {
			return nil
		}
		name := path + ".element"
		if !opts.AllowNullable && it.ElemField().Nullable && !ot.ElemField().Nullable {
			return nullabilityError(name, tableName)
		}
		return checkNested(name, it.Elem(), ot.Elem(), opts, tableName)
	case *arrow.MapType:
		it, ok := in.(*arrow.MapType)
		if !ok {
			return nil
		}
		name := path + ".value"
		if !opts.AllowNullable && it.ItemField().Nullable && !ot.ItemField().Nullable {
			return nullabilityError(name, tableName)
		}
		if err := checkNested(path+".key", it.KeyType(), ot.KeyType(), opts, tableName); err != nil {
			return err
		}
		return checkNested(name, it.ItemType(), ot.ItemType(), opts, tableName)
	}
	return nil
}

// hasRequiredChild reports whether a struct column has a required field at
// some depth (through structs only), whose values conform must check.
func hasRequiredChild(t arrow.DataType) bool {
	st, ok := t.(*arrow.StructType)
	if !ok {
		return false
	}
	for _, f := range st.Fields() {
		if !f.Nullable || hasRequiredChild(f.Type) {
			return true
		}
	}
	return false
}

// requiredNull finds the first row where a required field below a struct
// column is null although every struct above it is not, returning its
// dotted path and the row.
func requiredNull(path string, a arrow.Array, parentValid func(int) bool) (string, int, bool) {
	s, ok := a.(*array.Struct)
	if !ok {
		return "", 0, false
	}
	valid := func(j int) bool { return s.IsValid(j) && (parentValid == nil || parentValid(j)) }
	st := s.DataType().(*arrow.StructType)
	for i, f := range st.Fields() {
		child := s.Field(i)
		name := path + "." + f.Name
		if !f.Nullable && child.NullN() > 0 {
			for j := 0; j < child.Len(); j++ {
				if child.IsNull(j) && valid(j) {
					return name, j, true
				}
			}
		}
		if p, j, ok := requiredNull(name, child, valid); ok {
			return p, j, true
		}
	}
	return "", 0, false
}

// conform converts one record; firstRow is the record's offset within its
// file, so that a null in a required column can be located.
func (c *Conformer) Conform(ctx context.Context, rec arrow.RecordBatch, firstRow int64) (arrow.RecordBatch, error) {
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
		case col.in < 0 && col.def != nil:
			out, err := defaultArray(ctx, *col.def, dt, n)
			if err != nil {
				release()
				return nil, fmt.Errorf("%w: column %q of table %s: %v", ingest.ErrSchemaMismatch, col.name, c.table, err)
			}
			arr = out
		case col.in < 0:
			arr = array.MakeArrayOfNull(memory.DefaultAllocator, dt, int(n))
		case col.cast:
			out, err := compute.CastArray(ctx, rec.Column(col.in), compute.SafeCastOptions(dt))
			if err != nil {
				release()
				return nil, castError(c.table, col.name, rec.Column(col.in).DataType(), dt, err)
			}
			arr = out
		case col.variant:
			out, err := variantArray(rec.Column(col.in), dt)
			if err != nil {
				release()
				return nil, fmt.Errorf("%w: column %q: %v", ingest.ErrSchemaMismatch, col.name, err)
			}
			arr = out
		case col.retype:
			arr = array.MakeFromData(retypeData(rec.Column(col.in).Data(), dt))
		case col.nested:
			d, err := conformData(ctx, rec.Column(col.in).Data(), dt)
			if err != nil {
				release()
				return nil, fmt.Errorf("%w: column %q: cannot convert %s to %s (%v)", ingest.ErrSchemaMismatch, col.name, TypeName(rec.Column(col.in).DataType()), TypeName(dt), err)
			}
			arr = array.MakeFromData(d)
			d.Release()
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
			return nil, fmt.Errorf("%w: column %q is required in table %s but row %d is null", ingest.ErrSchemaMismatch, col.name, c.table, row+1)
		}
		if col.nestedRequired {
			if path, j, ok := requiredNull(col.name, arr, nil); ok {
				release()
				return nil, fmt.Errorf("%w: column %q is required in table %s but row %d is null", ingest.ErrSchemaMismatch, path, c.table, firstRow+int64(j)+1)
			}
		}
	}
	out := array.NewRecordBatch(c.out, cols, n)
	release()
	return out, nil
}

// sameShape reports whether two nested types have the same layout and
// names, differing only in field metadata or nullability.
func SameShape(a, b arrow.DataType) bool {
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
			if at.Field(i).Name != bt.Field(i).Name || !SameShape(at.Field(i).Type, bt.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.ListType:
		return SameShape(at.Elem(), b.(*arrow.ListType).Elem())
	case *arrow.MapType:
		bt := b.(*arrow.MapType)
		return SameShape(at.KeyType(), bt.KeyType()) && SameShape(at.ItemType(), bt.ItemType())
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

// nestedFits reports whether a struct or list of the input can be conformed
// to the table's type field by field, as the columns of a record are: a
// JSON file in which a nested key is absent or only ever null still fits the
// table. Struct fields are matched by name (case-insensitively as a last
// resort); table fields the input lacks become null unless required; input
// fields the table lacks do not fit.
func nestedFits(from, to arrow.DataType) bool {
	switch tt := to.(type) {
	case *arrow.StructType:
		ft, ok := from.(*arrow.StructType)
		if !ok {
			return false
		}
		used := make([]bool, tt.NumFields())
		for _, f := range ft.Fields() {
			i := structFieldIndex(tt, f.Name)
			if i < 0 || used[i] || !Fits(f.Type, tt.Field(i).Type) {
				return false
			}
			used[i] = true
		}
		for i, u := range used {
			if !u && !tt.Field(i).Nullable {
				return false
			}
		}
		return true
	case *arrow.ListType:
		fl, ok := from.(*arrow.ListType)
		return ok && Fits(fl.Elem(), tt.Elem())
	}
	return false
}

func Fits(from, to arrow.DataType) bool {
	return arrow.TypeEqual(from, to) || SameShape(from, to) || CanCast(from, to) || nestedFits(from, to)
}

// conformData converts array data to the table's type dt, for types that
// fit (see fits). The result has the input's length; nested children are
// converted in place of the input's, keeping its buffers.
func conformData(ctx context.Context, d arrow.ArrayData, dt arrow.DataType) (arrow.ArrayData, error) {
	from := d.DataType()
	switch {
	case arrow.TypeEqual(from, dt) || SameShape(from, dt):
		return retypeData(d, dt), nil
	case from.ID() == arrow.NULL:
		return nullData(dt, d.Len()), nil
	case from.ID() == arrow.STRUCT && dt.ID() == arrow.STRUCT:
		ft, tt := from.(*arrow.StructType), dt.(*arrow.StructType)
		children := make([]arrow.ArrayData, tt.NumFields())
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for j, f := range ft.Fields() {
			i := structFieldIndex(tt, f.Name)
			if i < 0 {
				return nil, fmt.Errorf("field %s is not in the table", f.Name)
			}
			c, err := conformData(ctx, d.Children()[j], tt.Field(i).Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			children[i] = c
		}
		for i, c := range children {
			if c == nil {
				// Children cover the parent's offset as well as its length.
				children[i] = nullData(tt.Field(i).Type, d.Offset()+d.Len())
			}
		}
		return array.NewData(dt, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset()), nil
	case from.ID() == arrow.LIST && dt.ID() == arrow.LIST:
		// Offsets index the whole child array, which is converted whole.
		c, err := conformData(ctx, d.Children()[0], dt.(*arrow.ListType).Elem())
		if err != nil {
			return nil, err
		}
		defer c.Release()
		return array.NewData(dt, d.Len(), d.Buffers(), []arrow.ArrayData{c}, d.NullN(), d.Offset()), nil
	case CanCast(from, dt):
		in := array.MakeFromData(d)
		defer in.Release()
		out, err := compute.CastArray(ctx, in, compute.SafeCastOptions(dt))
		if err != nil {
			return nil, err
		}
		defer out.Release()
		od := out.Data()
		od.Retain()
		return od, nil
	}
	return nil, fmt.Errorf("%s does not fit %s", TypeName(from), TypeName(dt))
}

func nullData(dt arrow.DataType, n int) arrow.ArrayData {
	a := array.MakeArrayOfNull(memory.DefaultAllocator, dt, n)
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d
}

// canCast allows the conversions that lose nothing for real data: integer
// and float widening, integers into doubles (CSV and JSON numbers), time
// units into microseconds, dictionary and large strings into strings, and
// all-null columns into anything.
func CanCast(from, to arrow.DataType) bool {
	if from.ID() == arrow.NULL {
		return true
	}
	if d, ok := from.(*arrow.DictionaryType); ok {
		return arrow.TypeEqual(d.ValueType, to) || CanCast(d.ValueType, to)
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
		// A narrower decimal of the same scale: what a table whose
		// precision was widened by schema evolution receives from old inputs.
		if fd, ok := from.(*arrow.Decimal128Type); ok {
			td := to.(*arrow.Decimal128Type)
			return fd.Scale == td.Scale && fd.Precision <= td.Precision
		}
		return isInt(from)
	}
	return false
}

// typeName prints a type in Iceberg's vocabulary where one exists, since
// that is what users see in the table's schema.
func TypeName(t arrow.DataType) string {
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
		ts := t.(*arrow.TimestampType)
		name := "timestamp"
		if ts.TimeZone != "" {
			name = "timestamptz"
		}
		if ts.Unit == arrow.Nanosecond {
			name += "_ns"
		}
		return name
	case arrow.EXTENSION:
		if IsVariant(t) {
			return "variant"
		}
	case arrow.NULL:
		return "null"
	}
	return t.String()
}
