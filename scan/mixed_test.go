package scan_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// appendInts appends one data file of ids [first, first+n) and v = id*10
// to tbl with iceberg-go's writer, in the table's current schema, whose id
// column is int or long.
func appendInts(t *testing.T, tbl *table.Table, first, n int64) *table.Table {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for id := first; id < first+n; id++ {
		switch ib := b.Field(0).(type) {
		case *array.Int32Builder:
			ib.Append(int32(id))
		case *array.Int64Builder:
			ib.Append(id)
		}
		b.Field(1).(*array.Int64Builder).Append(id * 10)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tbl, err = tbl.Append(context.Background(), rdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rowsOf reads tbl with o and returns its (id, v) rows sorted by id,
// checking that v is id*10 in every row.
func rowsOf(t *testing.T, tbl *table.Table, o scan.Options) []int64 {
	t.Helper()
	_, recs, err := scan.Table(context.Background(), tbl, o)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		id, ok1 := rec.Column(0).(*array.Int64)
		v, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			t.Fatalf("records %s, want id and v as long", rec.Schema())
		}
		for i := range int(rec.NumRows()) {
			if v.Value(i) != id.Value(i)*10 {
				t.Fatalf("row id %d has v %d", id.Value(i), v.Value(i))
			}
			ids = append(ids, id.Value(i))
		}
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

func span(first, last int64) []int64 {
	var out []int64
	for id := first; id <= last; id++ {
		out = append(out, id)
	}
	return out
}

// One scan over a file written when id was an int (promoted to long since,
// which the read widens), files of the long id, and a file with a deletion
// vector. A filter the files' partition cannot decide is applied to every
// row, also one on the widened column, which iceberg-go cannot plan; Limit
// bounds the rows returned, and a scan into a pool, whole or stopped by its
// limit, hands every buffer back.
func TestScanMixedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: false},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64, Required: false})
	tbl := fixture.CreateIcebergTable(t, cat, table.Identifier{"db", "direct"}, sc,
		catalog.WithProperties(iceberg.Properties{"format-version": "3"}))
	tbl = appendInts(t, tbl, 0, 100) // id stored as int32
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).UpdateColumn([]string{"id"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: iceberg.PrimitiveTypes.Int64, Valid: true}}).Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tbl = appendInts(t, tbl, 100, 100)
	tbl = appendInts(t, tbl, 200, 100)
	if _, err := fixture.DeleteByDV(ctx, cat, "db.direct", 250, 251); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, table.Identifier{"db", "direct"}); err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(span(0, 249), span(252, 299))
	if got := rowsOf(t, tbl, scan.Options{}); !slices.Equal(got, want) {
		t.Fatalf("full scan read %d rows %v...; want %d", len(got), got[:min(5, len(got))], len(want))
	}
	if got := rowsOf(t, tbl, scan.Options{Filter: "v >= 950 AND v < 1050"}); !slices.Equal(got, span(95, 104)) {
		t.Fatalf("filtered scan read %v, want ids 95 to 104", got)
	}
	// iceberg-go cannot plan a filter on id: the first file's manifest
	// holds its bounds as ints. The filter is then checked on the rows.
	if got := rowsOf(t, tbl, scan.Options{Filter: "id >= 95 AND id < 105"}); !slices.Equal(got, span(95, 104)) {
		t.Fatalf("scan filtered on the widened column read %v, want ids 95 to 104", got)
	}
	if n, err := scan.Count(ctx, tbl, scan.Options{Filter: "id >= 250"}); err != nil || n != 48 {
		t.Fatalf("count filtered on the widened column: %d, %v; want 48", n, err)
	}
	plan, err := scan.Explain(ctx, tbl, scan.Options{Filter: "id >= 95"})
	if err != nil || plan.PushedFilter != "AlwaysTrue()" {
		t.Fatalf("explain of a filter on the widened column: %+v, %v; want nothing pushed", plan, err)
	}
	mem := memory.NewCheckedAllocator(arrowpool.New())
	if got := rowsOf(t, tbl, scan.Options{Limit: 7, Allocator: mem}); len(got) != 7 {
		t.Fatalf("limit 7 read %d rows", len(got))
	}
	if got := rowsOf(t, tbl, scan.Options{Allocator: mem}); !slices.Equal(got, want) {
		t.Fatalf("pooled full scan read %d rows, want %d", len(got), len(want))
	}
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of the pool still held after the scans", n)
	}
}
