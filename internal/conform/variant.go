package conform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// IsVariant reports whether t is a variant column (arrow-go's extension
// for the Parquet variant type, under either of its names).
func IsVariant(t arrow.DataType) bool {
	et, ok := t.(arrow.ExtensionType)
	return ok && extensions.IsVariantExtensionName(et.ExtensionName())
}

// variantArray rebuilds a variant column in the table's layout: a writer
// may shred its variants (typed_value beside value), keep the metadata in
// a dictionary or large binary, or mark the value optional, and the table
// stores one layout, metadata and value, that every reader takes. A row
// that is null stays null; a variant null stays a variant null.
func variantArray(a arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	in, ok := a.(*extensions.VariantArray)
	vt, vok := dt.(*extensions.VariantType)
	if !ok || !vok {
		return nil, fmt.Errorf("%s is not a variant column", TypeName(a.DataType()))
	}
	b := extensions.NewVariantBuilder(memory.DefaultAllocator, vt)
	defer b.Release()
	b.Reserve(in.Len())
	storage := in.Storage()
	for i := range in.Len() {
		if storage.IsNull(i) {
			b.AppendNull()
			continue
		}
		v, err := in.Value(i)
		if err != nil {
			return nil, fmt.Errorf("variant of row %d: %w", i+1, err)
		}
		b.Append(v)
	}
	return b.NewArray(), nil
}
