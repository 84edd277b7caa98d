package upsert

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// The _row_id values the key index keeps for its files give the ids that
// reading the files gives: batches of updates into a format-version 3
// table, each looked up with the index, which keeps the ids from batch to
// batch, and without it.
func TestKeepRowIDsWithKeyIndex(t *testing.T) {
	ctx := context.Background()
	cm := &commit.Committer{Catalog: fixture.Catalog(t), Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	ix := NewKeyIndex(1 << 20)
	rng := rand.New(rand.NewPCG(7, 7))
	var tbl *table.Table
	kept := 0 // ids kept, over the batches
	for batch := range 6 {
		var rows [][4]any
		for _, id := range rng.Perm(300)[:150] {
			rows = append(rows, [4]any{id, fmt.Sprint(batch), "u", batch})
		}
		collect := func() *Changes {
			rec := changesRec(t, rows...)
			defer rec.Release()
			c, err := Collect(ctx, []ingest.Part{recPart{"b", []arrow.RecordBatch{rec}}}, nil, spec())
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		with, without := collect(), collect()
		d := &Deletes{Changes: with, Keys: []string{"id"}, Index: ix}
		lineage := false
		if tbl != nil {
			var err error
			if lineage, err = d.KeepRowIDs(ctx, tbl); err != nil {
				t.Fatal(err)
			}
			if _, err := (&Deletes{Changes: without, Keys: []string{"id"}}).KeepRowIDs(ctx, tbl); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(with.rowIDs, without.rowIDs) {
				t.Fatalf("batch %d: with the key index, row ids %v; reading the files, %v", batch, with.rowIDs, without.rowIDs)
			}
			for _, id := range with.rowIDs {
				if id >= 0 {
					kept++
				}
			}
		}
		without.Release()
		parts, err := with.Upserts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tbl == nil {
			rdr, _ := parts[0].Open(ctx)
			tbl, err = cm.Create(ctx, rdr.Schema(), commit.CreateOptions{FormatVersion: 3})
			rdr.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		res, err := (&write.Writer{Table: tbl, FilePrefix: fmt.Sprint(batch), RowIDs: lineage}).Write(ctx, parts)
		ReleaseParts(parts)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := cm.Commit(ctx, commit.Request{BatchID: int64(batch), Files: res.Files, Deletes: d})
		with.Release()
		if err != nil {
			t.Fatal(err)
		}
		tbl = cr.Table
	}
	cached := 0
	for path := range ix.files {
		if ids, ok := ix.fileRowIDs(path); ok && ids != nil {
			cached++
		}
	}
	if kept < 500 || cached == 0 {
		t.Fatalf("%d ids kept, the ids of %d files in the index", kept, cached)
	}
}
