package conform

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestUnionSchemas(t *testing.T) {
	t.Parallel()
	a := arrow.NewSchema([]arrow.Field{
		field("id", arrow.PrimitiveTypes.Int32, false),
		field("a", str, false),
		field("s", arrow.StructOf(field("x", arrow.PrimitiveTypes.Int32, false)), true),
	}, nil)
	b := arrow.NewSchema([]arrow.Field{
		field("ID", i64, false),
		field("f", arrow.PrimitiveTypes.Float32, false),
		field("s", arrow.StructOf(field("x", i64, false), field("y", str, false)), true),
		field("l", arrow.ListOf(arrow.PrimitiveTypes.Int32), true),
	}, nil)
	c := arrow.NewSchema([]arrow.Field{
		field("f", arrow.PrimitiveTypes.Float64, false),
		field("id", arrow.Null, true),
		field("l", arrow.ListOf(i64), true),
		field("a", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: str}, false),
	}, nil)
	got, err := Union([]*arrow.Schema{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		field("id", i64, true), // null in c
		field("a", str, true),  // missing from b
		field("s", arrow.StructOf(field("x", i64, false), field("y", str, true)), true),
		field("f", arrow.PrimitiveTypes.Float64, true), // missing from a
		field("l", arrow.ListOf(i64), true),
	}, nil)
	if !got.Equal(want) {
		t.Fatalf("union\n%s\nwant\n%s", got, want)
	}

	// Integers with floats become doubles, as conform casts them.
	got, err = Union([]*arrow.Schema{
		arrow.NewSchema([]arrow.Field{field("n", i64, true)}, nil),
		arrow.NewSchema([]arrow.Field{field("n", arrow.PrimitiveTypes.Float32, true)}, nil),
	})
	if err != nil || !arrow.TypeEqual(got.Field(0).Type, arrow.PrimitiveTypes.Float64) {
		t.Fatalf("long with float: %v, %v; want double", got, err)
	}
}

func TestUnionSchemasConflict(t *testing.T) {
	t.Parallel()
	_, err := Union([]*arrow.Schema{
		arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("v", str, true)), true)}, nil),
		arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("v", i64, true)), true)}, nil),
	})
	wantMismatch(t, err, `column "s.v" is string in one input and long in another`, "convert one of them")
}
