package scan_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/scan"
)

// Strings from 0 bytes to over 4 KiB, the long ones rare, so that the rows
// a filter or a delete selects hold strings longer than their batch's
// average: arrow-go's take and filter kernels, reading into floe's pool,
// cut such strings short and then panicked. Read through every path: a
// direct read (an append table floe wrote, unfiltered), iceberg-go's
// reader applying deletion vectors (a v3 upsert table, before and after a
// compaction, and with deletes on the compacted files), filters iceberg-go
// applies and residual filters floe applies, in the pool and on Go's heap.
func TestLongStringsEveryReadPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	value := func(id int64, version int) string {
		switch {
		case id%23 == 0:
			return fmt.Sprintf("z%d.%d:", id, version) + strings.Repeat("é", 2048+int(id)) // over 4 KiB
		case id%7 == 0:
			return ""
		}
		return fmt.Sprintf("s%05d.%d", id, version)[:1+int(id)%6]
	}
	batch := func(ids []int64, version int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, fixture.IDSchema)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(value(id, version))
		}
		return b.NewRecordBatch()
	}
	var first, second, third []int64
	want := map[int64]string{}
	for id := range int64(300) {
		first = append(first, id)
		want[id] = value(id, 0)
	}
	for id := int64(0); id < 300; id += 2 { // every long string among them once in two
		second = append(second, id)
		want[id] = value(id, 1)
	}
	for id := int64(0); id < 300; id += 3 {
		third = append(third, id)
	}

	appendTbl := streamFiles(t, dir, wh, config.Sink{Table: "db.appended"}, batch(first, 0))
	upsert := config.Sink{Table: "db.upserted", Mode: "upsert", IdentifierFields: []string{"id"}}
	upsertTbl := streamFiles(t, dir, wh, upsert, batch(first, 0), batch(second, 1))
	check := func(name string, tbl *table.Table, want map[int64]string) {
		t.Helper()
		for _, o := range []scan.Options{
			{}, {Columns: []string{"v", "id"}, Filter: "v LIKE 'z%'"},
			{Filter: "id IN (0, 23, 46, 69, 92, 115, 138, 161, 184, 207, 230, 253, 276, 299)"},
			{Filter: "v LIKE 'z%'"}, {Filter: "v LIKE '%é'"}, {Filter: "v > 'y'"}, {Filter: "v = '' OR v LIKE 'z%'"},
		} {
			for _, alloc := range []memory.Allocator{nil, arrowpool.New()} {
				o.Allocator = alloc
				got, err := readValues(ctx, tbl, o)
				if err != nil {
					t.Fatalf("%s, filter %q: %v", name, o.Filter, err)
				}
				n := 0
				for id, v := range want {
					if !matchesLong(o.Filter, id, v) {
						continue
					}
					n++
					if g := got[id]; g != v {
						at := 0
						for at < min(len(g), len(v)) && g[at] == v[at] {
							at++
						}
						t.Errorf("%s, filter %q, pool %v: id %d reads %d bytes, want %d bytes %.12q, which differ from byte %d on",
							name, o.Filter, alloc != nil, id, len(g), len(v), v, at)
					}
				}
				if len(got) != n {
					t.Errorf("%s, filter %q, pool %v: %d rows, want %d", name, o.Filter, alloc != nil, len(got), n)
				}
			}
		}
	}
	first0 := map[int64]string{}
	for _, id := range first {
		first0[id] = value(id, 0)
	}
	check("append table", appendTbl, first0)
	check("upsert table with deletion vectors", upsertTbl, want)

	cat, _ := fixture.CatalogAt(t, wh)
	if _, err := maintenance.RewriteDataFiles(ctx, cat, table.Identifier{"db", "upserted"}, maintenance.RewriteOptions{RewriteAll: true}); err != nil {
		t.Fatal(err)
	}
	compacted, err := cat.LoadTable(ctx, table.Identifier{"db", "upserted"})
	if err != nil {
		t.Fatal(err)
	}
	check("upsert table compacted", compacted, want)
	for _, id := range third {
		want[id] = value(id, 2)
	}
	again := streamFiles(t, dir, wh, upsert, batch(third, 2))
	check("compacted table with new deletes", again, want)
}

// matchesLong is the filters of TestLongStringsEveryReadPath on one row.
func matchesLong(filter string, id int64, v string) bool {
	switch {
	case strings.HasPrefix(filter, "id IN"):
		return id%23 == 0
	case filter == "v LIKE 'z%'", filter == "v > 'y'":
		return strings.HasPrefix(v, "z")
	case filter == "v LIKE '%é'":
		return strings.HasSuffix(v, "é")
	case strings.HasPrefix(filter, "v = ''"):
		return v == "" || strings.HasPrefix(v, "z")
	}
	return true
}

// readValues scans tbl into a map of id to v, copying each value before
// its record is released.
func readValues(ctx context.Context, tbl *table.Table, o scan.Options) (map[int64]string, error) {
	_, recs, err := scan.Table(ctx, tbl, o)
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		vs := rec.Column(rec.Schema().FieldIndices("v")[0]).(*array.String)
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		for i := range vs.Len() {
			out[ids.Value(i)] = strings.Clone(vs.Value(i))
		}
		rec.Release()
	}
	return out, nil
}
