package floe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// unionSchemas merges the (projected) input schemas of one batch into the
// schema the table must accept: columns and struct fields by name
// (case-insensitively as conform matches them), in order of first
// appearance, integers widened to the wider integer, floats to the wider
// float, and integers with floats to double (conform casts integers into
// doubles). A column some input lacks, or has as nullable, is nullable.
func unionSchemas(schemas []*arrow.Schema) (*arrow.Schema, error) {
	if len(schemas) == 0 {
		return nil, fmt.Errorf("%w: no input schema to merge", ErrSchemaMismatch)
	}
	fields := schemas[0].Fields()
	for _, s := range schemas[1:] {
		var err error
		if fields, err = unionFields("", fields, s.Fields()); err != nil {
			return nil, err
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

func unionFields(prefix string, a, b []arrow.Field) ([]arrow.Field, error) {
	out := make([]arrow.Field, len(a), len(a)+len(b))
	copy(out, a)
	seen := make([]bool, len(a))
	for _, f := range b {
		i := fieldIndex(a, f.Name)
		if i < 0 {
			f.Nullable = true
			out = append(out, f)
			continue
		}
		seen[i] = true
		t, err := unionType(prefix+out[i].Name, out[i].Type, f.Type)
		if err != nil {
			return nil, err
		}
		out[i].Type = t
		out[i].Nullable = out[i].Nullable || f.Nullable
	}
	for i, s := range seen {
		if !s {
			out[i].Nullable = true
		}
	}
	return out, nil
}

func unionType(name string, a, b arrow.DataType) (arrow.DataType, error) {
	switch {
	case arrow.TypeEqual(a, b) || sameShape(a, b):
		return a, nil
	case a.ID() == arrow.NULL:
		return b, nil
	case b.ID() == arrow.NULL:
		return a, nil
	case arrow.IsInteger(a.ID()) && arrow.IsInteger(b.ID()):
		if intWidth(b) > intWidth(a) {
			return b, nil
		}
		return a, nil
	case isNumber(a) && isNumber(b):
		if a.ID() == arrow.FLOAT64 || b.ID() == arrow.FLOAT64 || arrow.IsInteger(a.ID()) || arrow.IsInteger(b.ID()) {
			return arrow.PrimitiveTypes.Float64, nil
		}
		return arrow.PrimitiveTypes.Float32, nil
	case a.ID() == arrow.STRUCT && b.ID() == arrow.STRUCT:
		fs, err := unionFields(name+".", a.(*arrow.StructType).Fields(), b.(*arrow.StructType).Fields())
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fs...), nil
	case isList(a) && isList(b):
		ea, eb := a.(arrow.ListLikeType).ElemField(), b.(arrow.ListLikeType).ElemField()
		t, err := unionType(name+".element", ea.Type, eb.Type)
		if err != nil {
			return nil, err
		}
		ea.Type, ea.Nullable = t, ea.Nullable || eb.Nullable
		return arrow.ListOfField(ea), nil
	case a.ID() == arrow.MAP && b.ID() == arrow.MAP:
		ma, mb := a.(*arrow.MapType), b.(*arrow.MapType)
		k, err := unionType(name+".key", ma.KeyType(), mb.KeyType())
		if err != nil {
			return nil, err
		}
		v, err := unionType(name+".value", ma.ItemType(), mb.ItemType())
		if err != nil {
			return nil, err
		}
		m := arrow.MapOf(k, v)
		m.SetItemNullable(ma.ItemField().Nullable || mb.ItemField().Nullable)
		return m, nil
	case canCast(a, b):
		return b, nil // dictionary, large or view strings, date64, time units
	case canCast(b, a):
		return a, nil
	}
	return nil, fmt.Errorf("%w: column %q is %s in one input and %s in another; convert one of them to the other's type, or leave the column out with drop", ErrSchemaMismatch, name, typeName(a), typeName(b))
}

func intWidth(t arrow.DataType) int {
	w := t.(arrow.FixedWidthDataType).BitWidth()
	if !arrow.IsSignedInteger(t.ID()) {
		w++ // uint32 needs a long, uint64 stays long (tableType)
	}
	return w
}

func isNumber(t arrow.DataType) bool {
	return arrow.IsInteger(t.ID()) || arrow.IsFloating(t.ID())
}

func isList(t arrow.DataType) bool {
	return t.ID() == arrow.LIST || t.ID() == arrow.LARGE_LIST
}

// schemaChange is one step of a schema evolution: add an optional column,
// or widen a primitive one. Paths use Iceberg's full names ("tags.element").
type schemaChange struct {
	path  []string
	add   iceberg.Type
	after []string // for a top-level add: the input column it follows, nil for first
	first bool
	widen iceberg.Type
}

// evolveAttempts bounds the reload-and-retry loop on commit conflicts.
const evolveAttempts = 5

// evolveSchema changes tbl's schema so that records of schema in can be
// written: input columns and struct fields the table lacks are added as
// optional (their nested fields too, so later inputs may lack them), and
// int, float and decimal columns are widened to long, double and a wider
// precision. Top-level columns are added at their place in the input, so
// that check-ordering accepts it; nested fields go last in their struct
// (iceberg-go v0.7.0 cannot move a field added to a nested struct). When
// the table already accepts in, tbl is returned as it is, without a
// commit. On a commit conflict the table is reloaded and the change
// planned again.
func evolveSchema(ctx context.Context, cat catalog.Catalog, tbl *table.Table, in *arrow.Schema) (*table.Table, error) {
	name := joinIdent(tbl.Identifier())
	var lastErr error
	for attempt := 1; attempt <= evolveAttempts; attempt++ {
		if attempt > 1 {
			select {
			case <-time.After(time.Duration(attempt*attempt) * 50 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			fresh, err := cat.LoadTable(ctx, tbl.Identifier())
			if err != nil {
				return nil, fmt.Errorf("reload table %s: %w", name, err)
			}
			tbl = fresh
		}
		changes, err := planEvolution(name, tbl.Schema(), in)
		if err != nil {
			return nil, err
		}
		if len(changes) == 0 {
			return tbl, nil
		}
		txn := tbl.NewTransaction()
		us := txn.UpdateSchema(true, false)
		for _, c := range changes {
			switch {
			case c.add != nil:
				us.AddColumn(c.path, c.add, "", false, nil)
				switch {
				case c.first:
					us.MoveFirst(c.path)
				case c.after != nil:
					us.MoveAfter(c.path, c.after)
				}
			case c.widen != nil:
				us.UpdateColumn(c.path, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: c.widen, Valid: true}})
			}
		}
		if err := us.Commit(); err != nil {
			return nil, fmt.Errorf("%w: evolve the schema of table %s: %v", ErrSchemaMismatch, name, err)
		}
		out, err := txn.Commit(ctx)
		if err == nil {
			return out, nil
		}
		if !IsCommitConflict(err) {
			return nil, fmt.Errorf("%w: schema change of table %s: %w", ErrCommit, name, err)
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%w: schema change of table %s after %d attempts: %w", ErrCommit, name, evolveAttempts, lastErr)
}

// planEvolution lists the changes that make the table accept in, or
// explains the first difference evolution cannot bridge.
func planEvolution(tableName string, sc *iceberg.Schema, in *arrow.Schema) ([]schemaChange, error) {
	var changes []schemaChange
	err := planFields(tableName, nil, sc.Fields(), in.Fields(), true, &changes)
	return changes, err
}

func planFields(tableName string, path []string, tfields []iceberg.NestedField, infields []arrow.Field, top bool, changes *[]schemaChange) error {
	var prev []string // the last input column the evolved table has, for placing adds
	for _, f := range infields {
		i := icebergFieldIndex(tfields, f.Name)
		if i < 0 {
			t, err := addedType(f)
			if err != nil {
				return fmt.Errorf("%w: column %q (%s) cannot be added to table %s: %v; convert it, or leave it out with drop", ErrSchemaMismatch, dotted(path, f.Name), typeName(f.Type), tableName, err)
			}
			c := schemaChange{path: childOf(path, f.Name), add: t}
			if top {
				c.after, c.first = prev, prev == nil
			}
			*changes = append(*changes, c)
			prev = c.path
			continue
		}
		tf := tfields[i]
		p := childOf(path, tf.Name)
		prev = p
		if err := planType(tableName, p, tf.Type, f.Type, changes); err != nil {
			return err
		}
	}
	return nil
}

func planType(tableName string, path []string, tt iceberg.Type, in arrow.DataType, changes *[]schemaChange) error {
	if d, ok := in.(*arrow.DictionaryType); ok {
		in = d.ValueType
	}
	if in.ID() == arrow.NULL {
		return nil // only ever null: fits any column
	}
	mismatch := func() error {
		return fmt.Errorf("%w: column %q is %s in the input but %s in table %s; schema evolution only adds columns and widens int to long, float to double and decimal precision, so convert the input or leave the column out with drop", ErrSchemaMismatch, strings.Join(path, "."), typeName(in), tt, tableName)
	}
	switch t := tt.(type) {
	case *iceberg.StructType:
		st, ok := in.(*arrow.StructType)
		if !ok {
			return mismatch()
		}
		return planFields(tableName, path, t.FieldList, st.Fields(), false, changes)
	case *iceberg.ListType:
		if !isList(in) {
			return mismatch()
		}
		return planType(tableName, childOf(path, "element"), t.Element, in.(arrow.ListLikeType).Elem(), changes)
	case *iceberg.MapType:
		mt, ok := in.(*arrow.MapType)
		if !ok {
			return mismatch()
		}
		if err := planType(tableName, childOf(path, "key"), t.KeyType, mt.KeyType(), changes); err != nil {
			return err
		}
		return planType(tableName, childOf(path, "value"), t.ValueType, mt.ItemType(), changes)
	}
	it, err := addedType(arrow.Field{Name: "x", Type: in, Nullable: true})
	if err != nil {
		return mismatch()
	}
	if it.Equals(tt) {
		return nil
	}
	if promotable(tt, it) {
		*changes = append(*changes, schemaChange{path: path, widen: it})
		return nil
	}
	// What the conformer can already write needs no change: int into long,
	// integers into double, other timestamp units, narrower decimals.
	if at, err := table.TypeToArrowType(tt, false, false); err == nil && fits(in, at) {
		return nil
	}
	return mismatch()
}

// promotable reports Iceberg's type promotions: int to long, float to
// double, and a decimal's precision widened at the same scale.
func promotable(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() > f.Precision()
	}
	return false
}

// addedType is the Iceberg type of an input field added to the table,
// every nested field optional: later inputs may lack them.
func addedType(f arrow.Field) (iceberg.Type, error) {
	sc, err := icebergSchema(arrow.NewSchema([]arrow.Field{{Name: f.Name, Type: optionalType(f.Type), Nullable: true}}, nil))
	if err != nil {
		return nil, err
	}
	return sc.Field(0).Type, nil
}

func optionalType(t arrow.DataType) arrow.DataType {
	switch tt := t.(type) {
	case *arrow.StructType:
		fs := make([]arrow.Field, tt.NumFields())
		for i, f := range tt.Fields() {
			f.Type, f.Nullable = optionalType(f.Type), true
			fs[i] = f
		}
		return arrow.StructOf(fs...)
	case *arrow.MapType:
		m := arrow.MapOf(optionalType(tt.KeyType()), optionalType(tt.ItemType()))
		m.SetItemNullable(true)
		return m
	case arrow.ListLikeType:
		if isList(t) {
			return arrow.ListOf(optionalType(tt.Elem()))
		}
	}
	return t
}

func childOf(path []string, name string) []string {
	return append(append([]string(nil), path...), name)
}

func dotted(path []string, name string) string {
	return strings.Join(childOf(path, name), ".")
}
