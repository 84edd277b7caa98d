package conform

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/floe-io/floe/internal/ingest"
)

// unionSchemas merges the (projected) input schemas of one batch into the
// schema the table must accept: columns and struct fields by name
// (case-insensitively as conform matches them), in order of first
// appearance, integers widened to the wider integer, floats to the wider
// float, and integers with floats to double (conform casts integers into
// doubles). A column some input lacks, or has as nullable, is nullable.
func Union(schemas []*arrow.Schema) (*arrow.Schema, error) {
	if len(schemas) == 0 {
		return nil, fmt.Errorf("%w: no input schema to merge", ingest.ErrSchemaMismatch)
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
		i := FieldIndex(a, f.Name)
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
	case arrow.TypeEqual(a, b) || SameShape(a, b):
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
	case IsList(a) && IsList(b):
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
	case CanCast(a, b):
		return b, nil // dictionary, large or view strings, date64, time units
	case CanCast(b, a):
		return a, nil
	}
	return nil, fmt.Errorf("%w: column %q is %s in one input and %s in another; convert one of them to the other's type, or leave the column out with drop", ingest.ErrSchemaMismatch, name, TypeName(a), TypeName(b))
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

func IsList(t arrow.DataType) bool {
	return t.ID() == arrow.LIST || t.ID() == arrow.LARGE_LIST
}

// PartsSchema is the union of the parts' schemas after proj (nil: none),
// the schema that tables are evolved to before a batch writes. Each part's
// schema is read once: parts that can tell it without being opened
// (ingest.SchemaPart) remember it for the read that follows. Parts that
// are independent files (ingest.ConcurrentPart) are read on every core:
// inferring a text file's columns reads all of it.
func PartsSchema(ctx context.Context, parts []ingest.Part, proj *Projection) (*arrow.Schema, error) {
	schemas, errs := ingest.PartSchemas(ctx, parts)
	for i, s := range schemas {
		if errs[i] == nil && proj != nil {
			if schemas[i], errs[i] = proj.Schema(s); errs[i] != nil {
				errs[i] = &ingest.BadFileError{Path: parts[i].Name(), Err: errs[i]}
			}
		}
	}
	// The first part in the batch's order that failed names the error, as
	// when the parts were read one by one.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	u, err := Union(schemas)
	if err != nil {
		return nil, fmt.Errorf("%w: the batch's input files disagree: %w", ingest.ErrBadInput, err)
	}
	return u, nil
}
