package filter_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/filter"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// TestScanWithPushedAndResidual scans a real table (SQLite catalog, one
// data file per append) with table.WithRowFilter(Pushed) and the
// ResidualMatcher, and checks it returns exactly the rows the reference
// evaluator selects. For exact filters this is also the proof that
// iceberg-go filters rows, not only files: each file holds rows on both
// sides of every filter.
func TestScanWithPushedAndResidual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, filepath.Join(t.TempDir(), "warehouse"))
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	rows := testRows()
	for start := 0; start < len(rows); start += 80 {
		rec := record(t, rows[start:min(start+80, len(rows))])
		tbl = appendRecord(t, tbl, rec)
	}
	for _, tc := range evalCases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustParse(t, tc.filter)
			b, err := filter.Bind(e, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			want := map[any]int{}
			for _, r := range rows {
				if refEval(e, r) == isTrue {
					want[r["id"]]++
				}
			}
			_, recs, err := tbl.Scan(table.WithRowFilter(b.Pushed)).ToArrowRecords(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[any]int{}
			for rec, err := range recs {
				if err != nil {
					t.Fatal(err)
				}
				m, err := b.ResidualMatcher(rec.Schema())
				if err != nil {
					t.Fatal(err)
				}
				keep, err := m.Match(rec)
				if err != nil {
					t.Fatal(err)
				}
				tally(got, rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64), keep)
				rec.Release()
			}
			compareIDs(t, "scan", got, want)
			// scan.Table keeping one column reads every column here
			// (the schema has a struct), and returns the kept one alone.
			scanKeptIDs(t, tbl, tc.filter, want)
		})
	}
}

// TestScanTableKeepsColumnsWithFilter scans a table without nested columns
// with scan.Table keeping id alone, which then reads id plus the
// residual filter's columns, and checks the ids against the reference
// evaluator for every filter on the table's columns.
func TestScanTableKeepsColumnsWithFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, filepath.Join(t.TempDir(), "warehouse"))
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	var fields []iceberg.NestedField
	for _, f := range testSchema.Fields() {
		if f.Name != "a" {
			fields = append(fields, f)
		}
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "flat"}, iceberg.NewSchema(0, fields...))
	if err != nil {
		t.Fatal(err)
	}
	rows := testRows()
	for start := 0; start < len(rows); start += 80 {
		full := record(t, rows[start:min(start+80, len(rows))])
		var cols []arrow.Array
		var afs []arrow.Field
		for i, c := range full.Columns() {
			if f := full.Schema().Field(i); f.Name != "a" {
				cols, afs = append(cols, c), append(afs, f)
			}
		}
		rec := array.NewRecordBatch(arrow.NewSchema(afs, nil), cols, full.NumRows())
		full.Release()
		tbl = appendRecord(t, tbl, rec)
	}
	residuals := 0
	for _, tc := range evalCases {
		e := mustParse(t, tc.filter)
		if slices.ContainsFunc(filter.Columns(e), func(c filter.Column) bool { return c.Path[0] == "a" }) {
			continue
		}
		if !tc.exact {
			residuals++
		}
		t.Run(tc.name, func(t *testing.T) {
			want := map[any]int{}
			for _, r := range rows {
				if refEval(e, r) == isTrue {
					want[r["id"]]++
				}
			}
			scanKeptIDs(t, tbl, tc.filter, want)
		})
	}
	if residuals == 0 {
		t.Error("no filter with a residual on the flat table")
	}
}

// scanKeptIDs scans tbl with scan.Table, the filter and id kept, and
// checks that the result holds id alone, with the ids of want.
func scanKeptIDs(t *testing.T, tbl *table.Table, filterText string, want map[any]int) {
	t.Helper()
	schema, recs, err := scan.Table(context.Background(), tbl, scan.Options{Filter: filterText, Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	if schema.NumFields() != 1 || schema.Field(0).Name != "id" {
		t.Errorf("ScanTable keeping id returns schema %s", schema)
	}
	got := map[any]int{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumCols() != 1 {
			t.Errorf("ScanTable keeping id returns records %s", rec.Schema())
		}
		tally(got, rec.Column(0).(*array.Int64), nil)
		rec.Release()
	}
	compareIDs(t, "ScanTable", got, want)
}

// tally counts the ids of the rows keep selects (all rows when keep is
// nil), nulls under the key nil.
func tally(got map[any]int, ids *array.Int64, keep []bool) {
	for i := range ids.Len() {
		switch {
		case keep != nil && !keep[i]:
		case ids.IsNull(i):
			got[nil]++
		default:
			got[ids.Value(i)]++
		}
	}
}

func compareIDs(t *testing.T, reader string, got, want map[any]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s returned %d distinct ids, want %d", reader, len(got), len(want))
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("id %v: %s returned %d rows, want %d", id, reader, got[id], n)
		}
	}
}

// appendRecord commits rec to tbl as one append and releases it.
func appendRecord(t *testing.T, tbl *table.Table, rec arrow.RecordBatch) *table.Table {
	t.Helper()
	defer rec.Release()
	at := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer at.Release()
	tx := tbl.NewTransaction()
	if err := tx.AppendTable(context.Background(), at, 1000, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
