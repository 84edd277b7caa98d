package filter

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// column is a column reference resolved against the table schema: names
// are the schema's own spelling, one per level, and typ is the leaf type.
type column struct {
	names []string
	typ   iceberg.Type
}

func (c column) String() string { return Column{c.names}.String() }

// ref names the column for iceberg-go, which joins nested names with dots.
func (c column) ref() iceberg.Reference { return iceberg.Reference(strings.Join(c.names, ".")) }

// resolve finds c in the schema level by level. A name matches exactly
// first and then ignoring case, as Spark resolves columns; a case-insensitive
// name that fits two fields is ambiguous rather than guessed.
func resolve(sc *iceberg.Schema, c Column) (column, error) {
	fields := sc.Fields()
	var res column
	for i, part := range c.Path {
		f, err := findField(fields, part)
		if err != nil {
			return column{}, fmt.Errorf("%w: column %s: %v", ErrBind, Column{c.Path[:i+1]}, err)
		}
		res.names = append(res.names, f.Name)
		if i == len(c.Path)-1 {
			res.typ = f.Type
			break
		}
		st, ok := f.Type.(*iceberg.StructType)
		if !ok {
			return column{}, fmt.Errorf("%w: column %s is %s, which has no field %s", ErrBind, Column{res.names}, f.Type, quote(c.Path[i+1], '"'))
		}
		fields = st.FieldList
	}
	if _, ok := res.typ.(iceberg.PrimitiveType); !ok {
		return column{}, fmt.Errorf("%w: column %s is %s; filters compare primitive columns only", ErrBind, res, res.typ)
	}
	return res, nil
}

func findField(fields []iceberg.NestedField, name string) (iceberg.NestedField, error) {
	for _, f := range fields {
		if f.Name == name {
			return f, nil
		}
	}
	var found []iceberg.NestedField
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = Column{[]string{f.Name}}.String()
		}
		return iceberg.NestedField{}, fmt.Errorf("no such column (have %s)", strings.Join(names, ", "))
	case 1:
		return found[0], nil
	}
	return iceberg.NestedField{}, fmt.Errorf("ambiguous: %s and %s differ only in case; quote the exact name", found[0].Name, found[1].Name)
}
