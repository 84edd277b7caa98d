package serve_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
)

// Iceberg's Java client sends a schema converted from Spark's with field
// ids from 0, and a partition spec and sort order bound to them: the
// table is created with fresh ids, partitioned and sorted by the columns
// the request named.
func TestCreateTableWithIDsFromZero(t *testing.T) {
	w := newWorld(t, nil)
	w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}})
	schema := map[string]any{
		"type": "struct", "schema-id": 0,
		"fields": []any{
			map[string]any{"id": 0, "name": "id", "type": "long", "required": false},
			map[string]any{"id": 1, "name": "v", "type": "string", "required": false},
			map[string]any{"id": 2, "name": "tags", "required": false, "type": map[string]any{
				"type": "list", "element-id": 3, "element": "string", "element-required": false}},
		},
	}
	spec := map[string]any{"spec-id": 0, "fields": []any{
		map[string]any{"name": "id_bucket", "transform": "bucket[4]", "source-id": 0, "field-id": 1000},
		map[string]any{"name": "v", "transform": "identity", "source-id": 1, "field-id": 1001},
	}}
	order := map[string]any{"order-id": 1, "fields": []any{
		map[string]any{"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"},
	}}
	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "t", "schema": schema, "partition-spec": spec, "write-order": order})

	tbl, err := w.direct.LoadTable(context.Background(), []string{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	sc := tbl.Schema()
	byName := func(id int) string {
		f, ok := sc.FindFieldByID(id)
		if !ok {
			t.Fatalf("no field with id %d in %s", id, sc)
		}
		return f.Name
	}
	spec0 := tbl.Spec()
	var fields []iceberg.PartitionField
	for _, f := range spec0.Fields() {
		fields = append(fields, f)
	}
	if len(fields) != 2 || byName(fields[0].SourceID()) != "id" || fields[0].Transform.String() != "bucket[4]" ||
		byName(fields[1].SourceID()) != "v" || fields[1].Transform.String() != "identity" {
		t.Fatalf("partition spec %v over schema %s; want bucket[4](id), identity(v)", fields, sc)
	}
	var sorted []string
	so := tbl.SortOrder()
	for _, f := range so.Fields() {
		sorted = append(sorted, byName(f.SourceID()))
	}
	if len(sorted) != 1 || sorted[0] != "v" {
		t.Fatalf("sort order %s over schema %s; want v", so, sc)
	}
	if _, ok := sc.FindFieldByName("tags.element"); !ok {
		t.Fatalf("schema %s lost the list's element", sc)
	}
}
