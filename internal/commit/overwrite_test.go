package commit_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
)

// An overwrite without files (complete mode's empty batch) empties the
// table in a snapshot of its own, on a table with rows and on one without a
// snapshot yet, and is found again like any batch.
func TestEmptyOverwrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, withRows := range []bool{true, false} {
		cat := fixture.Catalog(t)
		c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "totals"}, QueryID: "q", Source: "s"}
		tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		batch := int64(0)
		if withRows {
			if _, err := c.Commit(ctx, commit.Request{BatchID: batch, Files: writeBatch(t, tbl, "b0", 0, 10), Overwrite: true}); err != nil {
				t.Fatal(err)
			}
			batch++
		}
		res, err := c.Commit(ctx, commit.Request{BatchID: batch, Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Table.CurrentSnapshot()
		if s == nil || s.SnapshotID != res.SnapshotID || c.FindBatch(res.Table, batch) == nil {
			t.Fatalf("with rows %v: the empty overwrite is not the current snapshot holding batch %d", withRows, batch)
		}
		ids, err := fixture.ReadIDs(ctx, cat, "db.totals", "id")
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 0 {
			t.Fatalf("with rows %v: %d ids left, want none", withRows, len(ids))
		}
		again, err := c.Commit(ctx, commit.Request{BatchID: batch, Overwrite: true})
		if err != nil || !again.Existing || again.SnapshotID != res.SnapshotID {
			t.Fatalf("with rows %v: re-commit = %+v, %v; want the existing snapshot", withRows, again, err)
		}
	}
}
