package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
)

// A batch's commit writes the query's record into the snapshot summary
// and the table property in one commit; a batch without files moves the
// property alone; and a batch the record covers is held even when no
// snapshot of the ancestry names it (expired since), so it is never
// committed twice.
func TestRecordMovesWithEveryBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "rec"}, QueryID: "q1", Source: "src"}
	tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(batch int64) *commit.Record {
		return &commit.Record{Batch: batch, Source: "src", Offset: json.RawMessage(fmt.Sprintf(`{"n":%d}`, batch)), Input: map[string]string{"total": "7"}}
	}
	res, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: writeBatch(t, tbl, "b0", 0, 10), Record: rec(0)})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Table.SnapshotByID(res.SnapshotID)
	if got := s.Summary.Properties; got[commit.SummaryOffset] != `{"n":0}` || got[commit.SummaryInputPrefix+"total"] != "7" {
		t.Fatalf("snapshot summary %v lacks the record", got)
	}
	// Batch 1 has no rows: no snapshot, the property moves.
	res, err = c.Commit(ctx, commit.Request{BatchID: 1, Record: rec(1)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Table.Metadata().Snapshots()); n != 1 {
		t.Fatalf("a batch without rows made a snapshot: %d snapshots", n)
	}
	got, err := commit.ReadRecord(res.Table, "q1")
	if err != nil || got == nil || got.Batch != 1 || string(got.Offset) != `{"n":1}` {
		t.Fatalf("record after a batch without rows: %+v, %v", got, err)
	}
	// Batch 1 again, now with files, as a re-run after a stop: held.
	again, err := c.Commit(ctx, commit.Request{BatchID: 1, Files: writeBatch(t, res.Table, "b1", 10, 10), Record: rec(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Existing || again.SnapshotID != 0 {
		t.Fatalf("a batch the record covers was committed again: %+v", again)
	}
	if n := len(again.Table.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after the re-run, want 1", n)
	}
	if snap, held, err := c.Holds(again.Table, 0); err != nil || !held || snap == nil || snap.SnapshotID != res.Table.CurrentSnapshot().SnapshotID {
		t.Fatalf("batch 0: snapshot %v, held %v, %v", snap, held, err)
	}
	if _, held, _ := c.Holds(again.Table, 2); held {
		t.Fatal("batch 2, never committed, is held")
	}
	other := &commit.Committer{Catalog: cat, Ident: c.Ident, QueryID: "q2", Source: "src"}
	if _, held, _ := other.Holds(again.Table, 0); held {
		t.Fatal("another query's record holds this query's batch")
	}
}
