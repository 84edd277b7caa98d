package scan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// completeMapping gives every name a field of any schema had, at its
// place in the mapping and at any depth (struct fields, a list's element,
// a map's key and value), the unread id, and leaves what the mapping
// names as it is.
func TestCompleteMapping(t *testing.T) {
	id := func(n int) *int { return &n }
	m := iceberg.NameMapping{
		{Names: []string{"a"}, FieldID: id(1)},
		{Names: []string{"s"}, FieldID: id(2), Fields: []iceberg.MappedField{{Names: []string{"x"}, FieldID: id(3)}}},
		{Names: []string{"gone"}},
	}
	old := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32}, {ID: 4, Name: "y", Type: iceberg.PrimitiveTypes.String}}}},
		iceberg.NestedField{ID: 5, Name: "b", Type: iceberg.PrimitiveTypes.Int64},
	)
	cur := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 6, Name: "l", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 8, Name: "m", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String, ValueID: 10, ValueType: iceberg.PrimitiveTypes.Int32}},
	)
	got, changed := completeMapping(m, []*iceberg.Schema{old, cur}, 99)
	want := `[{"names":["a"],"field-id":1},` +
		`{"names":["s"],"field-id":2,"fields":[{"names":["x"],"field-id":3},{"names":["y"],"field-id":99}]},` +
		`{"names":["gone"],"field-id":99},` +
		`{"names":["b"],"field-id":99},` +
		`{"names":["l"],"field-id":99,"fields":[{"names":["element"],"field-id":99}]},` +
		`{"names":["m"],"field-id":99,"fields":[{"names":["key"],"field-id":99},{"names":["value"],"field-id":99}]}]`
	if b, _ := json.Marshal(got); !changed || string(b) != want {
		t.Fatalf("completed (changed %v):\n%s\nwant:\n%s", changed, b, want)
	}
	if b, _ := json.Marshal(m); strings.Contains(string(b), "99") {
		t.Fatalf("the table's own mapping changed: %s", b)
	}
	if _, changed := completeMapping(got, []*iceberg.Schema{old, cur}, 99); changed {
		t.Fatal("a complete mapping was completed again")
	}
}
