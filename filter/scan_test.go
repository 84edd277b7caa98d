package filter_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/filter"
)

// TestScanWithPushedAndResidual scans a real table (SQLite catalog, one
// data file per append) with table.WithRowFilter(Pushed) and the
// ResidualMatcher, and checks it returns exactly the rows the reference
// evaluator selects. For exact filters this is also the proof that
// iceberg-go filters rows, not only files: each file holds rows on both
// sides of every filter.
func TestScanWithPushedAndResidual(t *testing.T) {
	ctx := context.Background()
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: filepath.Join(t.TempDir(), "warehouse")})
	if err != nil {
		t.Fatal(err)
	}
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
		at := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
		tx := tbl.NewTransaction()
		if err := tx.AppendTable(ctx, at, 1000, nil); err != nil {
			t.Fatal(err)
		}
		if tbl, err = tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		at.Release()
		rec.Release()
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
				ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
				for i, k := range keep {
					if !k {
						continue
					}
					if ids.IsNull(i) {
						got[nil]++
					} else {
						got[ids.Value(i)]++
					}
				}
				rec.Release()
			}
			if len(got) != len(want) {
				t.Errorf("scan returned %d distinct ids, want %d", len(got), len(want))
			}
			for id, n := range want {
				if got[id] != n {
					t.Errorf("id %v: scan returned %d rows, want %d", id, got[id], n)
				}
			}
		})
	}
}
