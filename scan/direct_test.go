package scan

import (
	"context"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// A file read directly yields the records iceberg-go's reader yields for
// it, schema and values, for every primitive type: the direct read is
// taken where the file's Arrow type is the scan's; a scan of a uuid column
// (an extension type) is left to iceberg-go.
func TestDirectReadMatchesIcebergGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fields := []iceberg.NestedField{
		{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		{ID: 6, Name: "dec", Type: iceberg.DecimalTypeOf(12, 3)},
		{ID: 7, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		{ID: 8, Name: "tod", Type: iceberg.PrimitiveTypes.Time},
		{ID: 9, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		{ID: 10, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		{ID: 11, Name: "s", Type: iceberg.PrimitiveTypes.String},
		{ID: 12, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		{ID: 13, Name: "fx", Type: iceberg.FixedTypeOf(4)},
		{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	}
	cat := fixture.Catalog(t)
	tbl := fixture.CreateIcebergTable(t, cat, table.Identifier{"db", "types"}, iceberg.NewSchema(0, fields...))
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	for row := range 50 {
		for c := range asc.NumFields() {
			fb := b.Field(c)
			if (row+c)%7 == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(row%2 == 0)
			case *array.Int32Builder:
				fb.Append(int32(row * 3))
			case *array.Int64Builder:
				fb.Append(int64(row) << 40)
			case *array.Float32Builder:
				fb.Append(float32(row) / 4)
			case *array.Float64Builder:
				fb.Append(float64(row) / 8)
			case *array.Decimal128Builder:
				err = fb.AppendValueFromString("1234.567")
			case *array.Date32Builder:
				fb.Append(arrow.Date32(19000 + row))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(row * 1000))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(row)))
			case *array.StringBuilder:
				fb.Append(string(rune('a' + row%26)))
			case *array.BinaryBuilder:
				fb.Append([]byte{byte(row), 1})
			case *array.FixedSizeBinaryBuilder:
				fb.Append([]byte{byte(row), 1, 2, 3})
			default:
				if err = fb.AppendValueFromString("020d4fc7-acd6-45ac-b216-7873f4038e1f"); err != nil {
					t.Fatalf("column %s: %v", asc.Field(c).Name, err)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	rdr, err := array.NewRecordReader(asc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = tbl.Append(ctx, rdr, nil)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}

	// A table whose columns were reordered after the file was written:
	// the file holds l before s, the scan yields s first.
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).MoveFirst([]string{"s"}).Commit(); err != nil {
		t.Fatal(err)
	}
	moved, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(fields, iceberg.NestedField{Name: "moved"}) {
		t.Run(f.Name, func(t *testing.T) {
			tbl, o := tbl, Options{Columns: []string{f.Name, "l"}}
			if f.Name == "moved" {
				tbl, o = moved, Options{Columns: []string{"l", "s"}}
			}
			r, err := newTableReader(ctx, tbl, o, at{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := r.plan(ctx)
			if err != nil || len(tasks) != 1 {
				t.Fatalf("plan: %d tasks, %v", len(tasks), err)
			}
			direct := r.direct(tasks[0])
			if direct {
				_, done, ok, err := r.openDirect(ctx, tasks[0], memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					done()
				}
				direct = ok
			}
			if wantDirect := f.Type != iceberg.PrimitiveTypes.UUID; direct != wantDirect {
				t.Errorf("read directly: %v, want %v", direct, wantDirect)
			}
			got := concat(t, r.readOne(ctx, tasks[0], memory.DefaultAllocator))
			defer got.Release()
			_, recs, err := r.scan.ReadTasks(ctx, tasks)
			if err != nil {
				t.Fatal(err)
			}
			want := concat(t, recs)
			defer want.Release()
			if !got.Schema().Equal(want.Schema()) {
				t.Errorf("schema %s\nwant %s", got.Schema(), want.Schema())
			}
			if !array.RecordEqual(got, want) {
				t.Errorf("records differ:\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// concat gathers the records of recs into one.
func concat(t *testing.T, recs iter.Seq2[arrow.RecordBatch, error]) arrow.RecordBatch {
	t.Helper()
	var all []arrow.RecordBatch
	var schema *arrow.Schema
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		schema = rec.Schema()
		all = append(all, rec)
	}
	if len(all) == 0 {
		t.Fatal("no record read")
	}
	tab := array.NewTableFromRecords(schema, all)
	defer tab.Release()
	for _, rec := range all {
		rec.Release()
	}
	tr := array.NewTableReader(tab, tab.NumRows())
	defer tr.Release()
	tr.Next()
	out := tr.RecordBatch()
	out.Retain()
	return out
}
