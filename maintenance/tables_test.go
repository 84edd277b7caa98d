package maintenance_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/scan"
)

// loadTable loads db.t, the table every test here writes.
func loadTable(t *testing.T, cat catalog.Catalog) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// tableIDs returns the table's ids, sorted, failing on a duplicate.
func tableIDs(t *testing.T, tbl *table.Table) []int64 {
	t.Helper()
	_, recs, err := scan.Table(context.Background(), tbl, scan.Options{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("id %d is in the table twice", ids[i])
		}
	}
	return ids
}
