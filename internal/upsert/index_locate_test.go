package upsert

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
)

// hitMap is locate's answer as data file path -> positions.
func hitMap(hs []hits) map[string][]int64 {
	out := map[string][]int64{}
	for _, h := range hs {
		out[h.task.File.FilePath()] = h.positions
	}
	return out
}

// slotMap is locate's answer as data file path -> the slots of the keys
// found.
func slotMap(hs []hits) map[string][]int32 {
	out := map[string][]int32{}
	for _, h := range hs {
		out[h.task.File.FilePath()] = h.slots
	}
	return out
}

// upsertsOf collects a batch upserting ids.
func upsertsOf(t *testing.T, ids ...int) *Changes {
	t.Helper()
	rows := make([][4]any, len(ids))
	for i, id := range ids {
		rows[i] = [4]any{id, "x", "u", 1}
	}
	c, err := Collect(context.Background(), []ingest.Part{recPart{"b", []arrow.RecordBatch{changesRec(t, rows...)}}}, nil, spec())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The key index answers as reading the files does, on the batch that
// fills it and on the next, and lets go of files a later snapshot no
// longer holds; a budget too small for a file leaves it to be read.
func TestLocateWithKeyIndex(t *testing.T) {
	ctx := context.Background()
	cat := fixture.Catalog(t)
	ident := table.Identifier{"db", "t"}
	fixture.CreateTable(t, cat, ident, fixture.IDSchema, catalog.WithProperties(iceberg.Properties{"format-version": "3"}))
	for i := range int64(4) {
		if err := fixture.AppendIDs(ctx, cat, "db.t", i*1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	keyIDs := []int{1} // the field id of id
	index := NewKeyIndex(1 << 20)
	small := NewKeyIndex(entryBytes(1500)) // holds one file of four
	for round, batch := range [][]int{{5, 999, 1000, 2500, 3999, 7777}, {0, 1999, 3000, 3001}} {
		c := upsertsOf(t, batch...)
		want, err := locate(ctx, tbl, c, keyIDs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range []*KeyIndex{index, small} {
			got, err := locate(ctx, tbl, c, keyIDs, ix)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(hitMap(got), hitMap(want), slices.Equal[[]int64]) || !maps.EqualFunc(slotMap(got), slotMap(want), slices.Equal[[]int32]) {
				t.Fatalf("round %d: with the index %v %v, reading the files %v %v", round, hitMap(got), slotMap(got), hitMap(want), slotMap(want))
			}
		}
		c.Release()
	}
	if index.Bytes() != entryBytes(4000) || small.Bytes() != entryBytes(1000) {
		t.Fatalf("the indexes hold %d and %d bytes, want all four files and one", index.Bytes(), small.Bytes())
	}

	// A snapshot without the first file: its entry goes.
	files := slices.Collect(maps.Keys(hitMap(mustLocate(t, tbl, upsertsOf(t, 5), nil))))
	tx := tbl.NewTransaction()
	if err := tx.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(1000)), nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	mustLocate(t, tbl, upsertsOf(t, 5, 1500), index)
	if index.lookup(files[0]) != nil || index.Bytes() != entryBytes(3000) {
		t.Fatalf("the dropped file's keys are kept: %d bytes", index.Bytes())
	}
}

func mustLocate(t *testing.T, tbl *table.Table, c *Changes, ix *KeyIndex) []hits {
	t.Helper()
	defer c.Release()
	hs, err := locate(context.Background(), tbl, c, []int{1}, ix)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// A data file larger than read.split.target-size, planned by iceberg-go as
// a task per row group, is searched once: one hit a file, each position
// once, or its deletion vectors would be two.
func TestLocateSearchesSplitFilesOnce(t *testing.T) {
	ctx := context.Background()
	cat := fixture.Catalog(t)
	ident := table.Identifier{"db", "t"}
	fixture.CreateTable(t, cat, ident, fixture.IDSchema, catalog.WithProperties(iceberg.Properties{
		"format-version": "3", table.ParquetRowGroupLimitKey: "100", table.ReadSplitTargetSizeKey: "1024"}))
	for i := range int64(2) {
		if err := fixture.AppendIDs(ctx, cat, "db.t", i*1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) <= 2 {
		t.Fatalf("%d tasks (%v): the files are not split, the test proves nothing", len(tasks), err)
	}
	hs := mustLocate(t, tbl, upsertsOf(t, 5, 250, 999, 1000, 1777), nil)
	if len(hs) != 2 {
		t.Fatalf("%d hits, want one for each of the 2 files", len(hs))
	}
	for path, pos := range hitMap(hs) {
		if len(pos) == 0 || !slices.IsSorted(pos) || len(slices.Compact(slices.Clone(pos))) != len(pos) {
			t.Fatalf("%s: positions %v, want each once", path, pos)
		}
	}
}
