package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

// schemaChange is one step of a schema evolution: add an optional column,
// or widen a primitive one. Paths use Iceberg's full names ("tags.element").
type schemaChange struct {
	path  []string
	add   iceberg.Type
	after []string // for a top-level add: the input column it follows, nil for first
	first bool
	widen iceberg.Type
}

// EvolveSchema changes tbl's schema so that records of schema in can be
// written: input columns and struct fields the table lacks are added as
// optional (their nested fields too, so later inputs may lack them; a
// top-level one with its value in defaults as its write-default and
// initial-default), and int, float and decimal columns are widened to
// long, double and a wider precision. Top-level columns are added at their place in the input, so
// that check-ordering accepts it; nested fields go last in their struct
// (iceberg-go v0.7.0 cannot move a field added to a nested struct). When
// the table already accepts in, tbl is returned as it is, without a
// commit. The change is planned again on every attempt of the commit loop.
func EvolveSchema(ctx context.Context, cat catalog.Catalog, tbl *table.Table, in *arrow.Schema, defaults map[string]string) (*table.Table, error) {
	ident := tbl.Identifier()
	name := ingest.JoinIdent(ident)
	out, attempts, err := Retry(ctx, loader(cat, ident), tbl, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		changes, err := planEvolution(name, tbl.Schema(), in)
		if err != nil {
			return nil, Final(err)
		}
		if len(changes) == 0 {
			return tbl, nil
		}
		if err := checkAdded(name, changes, tbl.Metadata().Version()); err != nil {
			return nil, Final(err)
		}
		txn := tbl.NewTransaction()
		us := txn.UpdateSchema(true, false)
		for _, c := range changes {
			switch {
			case c.add != nil:
				var def iceberg.Literal
				if v, ok := defaults[c.path[0]]; ok && len(c.path) == 1 {
					if def, err = defaultLiteral(name, c.path[0], v, c.add, tbl.Metadata().Version()); err != nil {
						return nil, Final(err)
					}
				}
				us.AddColumn(c.path, c.add, "", false, def)
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
			return nil, Final(fmt.Errorf("%w: evolve the schema of table %s: %v", ingest.ErrSchemaMismatch, name, err))
		}
		return txn.Commit(ctx)
	})
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ingest.ErrSchemaMismatch) || ctx.Err() != nil:
		return nil, err
	}
	return nil, fmt.Errorf("%w: schema change of table %s after %d attempts: %w", ingest.ErrCommit, name, attempts, err)
}

// checkAdded refuses to add a column of a format-version 3 type to an
// older table.
func checkAdded(tableName string, changes []schemaChange, version int) error {
	for _, c := range changes {
		if c.add == nil {
			continue
		}
		f := iceberg.NestedField{ID: 1, Name: strings.Join(c.path, "."), Type: c.add}
		if err := checkFormatVersion(tableName, iceberg.NewSchema(0, f), version, "upgrade the table to format-version 3 (in Spark: ALTER TABLE ... SET TBLPROPERTIES ('format-version'='3'))"); err != nil {
			return err
		}
	}
	return nil
}

// loader loads a table afresh for each attempt of the commit loop.
func loader(cat catalog.Catalog, ident table.Identifier) func(context.Context) (*table.Table, error) {
	return func(ctx context.Context) (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, fmt.Errorf("load table %s: %w", ingest.JoinIdent(ident), err)
		}
		return tbl, nil
	}
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
		i := conform.IcebergFieldIndex(tfields, f.Name)
		if i < 0 {
			t, err := addedType(f)
			if err != nil {
				return fmt.Errorf("%w: column %q (%s) cannot be added to table %s: %v; convert it, or leave it out with drop", ingest.ErrSchemaMismatch, dotted(path, f.Name), conform.TypeName(f.Type), tableName, err)
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
		return fmt.Errorf("%w: column %q is %s in the input but %s in table %s; schema evolution only adds columns and widens int to long, float to double and decimal precision, so convert the input or leave the column out with drop", ingest.ErrSchemaMismatch, strings.Join(path, "."), conform.TypeName(in), tt, tableName)
	}
	switch t := tt.(type) {
	case *iceberg.StructType:
		st, ok := in.(*arrow.StructType)
		if !ok {
			return mismatch()
		}
		return planFields(tableName, path, t.FieldList, st.Fields(), false, changes)
	case *iceberg.ListType:
		if !conform.IsList(in) {
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
	if at, err := table.TypeToArrowType(tt, false, false); err == nil && conform.Fits(in, at) {
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
		if conform.IsList(t) {
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
