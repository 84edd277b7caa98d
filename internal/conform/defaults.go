package conform

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// WriteDefaults are the top-level columns of a table's schema that have a
// write-default, by name: an input without one of them is written with
// the default in every row, as Iceberg's writers do (Options.Defaults).
func WriteDefaults(sc *iceberg.Schema) map[string]iceberg.NestedField {
	var out map[string]iceberg.NestedField
	for _, f := range sc.Fields() {
		if f.WriteDefault == nil {
			continue
		}
		if out == nil {
			out = map[string]iceberg.NestedField{}
		}
		out[f.Name] = f
	}
	return out
}

// defaultArray is n rows of column f's write-default as the table's type
// dt, made as iceberg-go's own writer makes it.
func defaultArray(ctx context.Context, f iceberg.NestedField, dt arrow.DataType, n int64) (arrow.Array, error) {
	empty := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, n)
	defer empty.Release()
	rec, err := table.ToRequestedSchema(ctx, iceberg.NewSchema(0, f), iceberg.NewSchema(0), empty, table.SchemaOptions{UseWriteDefault: true, AllowMissingRequired: true})
	if err != nil {
		return nil, fmt.Errorf("write-default %v: %w", f.WriteDefault, err)
	}
	defer rec.Release()
	col := rec.Column(0)
	if !SameShape(col.DataType(), dt) && !arrow.TypeEqual(col.DataType(), dt) {
		return nil, fmt.Errorf("write-default %v is %s, not %s", f.WriteDefault, TypeName(col.DataType()), TypeName(dt))
	}
	d := retypeData(col.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d), nil
}
