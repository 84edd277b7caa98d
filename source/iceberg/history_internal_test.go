package iceberg

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/source"
)

// history builds a table's metadata whose main branch is the chain of
// snapshots given, oldest first; only the snapshots' ids, parents and times
// matter to the planning of where a stream resumes.
func history(t *testing.T, snaps ...table.Snapshot) *table.Table {
	t.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	md, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///wh/db/a", iceberg.Properties{"format-version": "2"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := table.MetadataBuilderFromBase(md, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range snaps {
		snaps[i].SequenceNumber = int64(i + 1)
		snaps[i].Summary = &table.Summary{Operation: table.OpAppend}
		if err := b.AddSnapshot(&snaps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SetSnapshotRef(table.MainBranch, snaps[len(snaps)-1].SnapshotID, table.BranchRef); err != nil {
		t.Fatal(err)
	}
	if md, err = b.Build(); err != nil {
		t.Fatal(err)
	}
	return table.New(table.Identifier{"db", "a"}, md, "", nil, nil)
}

// TestResumeAfterExpiredStartSnapshot: when the snapshot a query stopped
// at was expired, the query stops unless streaming-skip-expired-snapshots
// is set; then the stream goes on from its child, found by its parent id,
// even when the child's commit time is not later than its parent's (the
// same millisecond, or a writer's clock behind).
func TestResumeAfterExpiredStartSnapshot(t *testing.T) {
	const expired = int64(10)
	parent := func(id int64) *int64 { return &id }
	at := time.Now().UnixMilli() // the expired snapshot's commit time
	for _, tc := range []struct {
		name    string
		childTs int64
	}{{"later", 1}, {"same millisecond", 0}, {"clock behind", -10}} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := history(t,
				table.Snapshot{SnapshotID: 11, ParentSnapshotID: parent(expired), TimestampMs: at + tc.childTs},
				table.Snapshot{SnapshotID: 12, ParentSnapshotID: parent(11), TimestampMs: at + 1000})
			s := &Source{name: "db.a", added: map[int64]addedFiles{}, warned: map[int64]bool{}}
			st := offset{SnapshotID: expired, Position: 1, TimestampMs: at}
			if _, err := s.after(tbl, st); !errors.Is(err, source.ErrCannotContinue) || !strings.Contains(err.Error(), "snapshot 10") ||
				!strings.Contains(err.Error(), OptSkipExpiredSnaps) {
				t.Fatalf("without %s: %v; want an error naming the snapshot and the option", OptSkipExpiredSnaps, err)
			}
			s.skipExpired = true
			chain, err := s.after(tbl, st)
			if err != nil {
				t.Fatal(err)
			}
			if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "snapshot 10") || !strings.Contains(w[0], "going on from snapshot 11") {
				t.Fatalf("warnings %q, want one naming the expired snapshot and where the stream goes on", w)
			}
			var ids []int64
			for _, snap := range chain {
				ids = append(ids, snap.SnapshotID)
			}
			if !slices.Equal(ids, []int64{11, 12}) {
				t.Fatalf("the stream goes on with snapshots %v, want [11 12]: the expired snapshot's child and what follows", ids)
			}
		})
	}
}

// TestStopOnExpiredGap: the snapshot a query stopped at is still there (a
// tag keeps it) but snapshots between it and the current one were
// expired, as an expiry that keeps tagged snapshots alone leaves them: the
// query stops naming the gap (not a rollback), or, with
// streaming-skip-expired-snapshots, goes on from the oldest newer snapshot
// left.
func TestStopOnExpiredGap(t *testing.T) {
	parent := func(id int64) *int64 { return &id }
	at := time.Now().UnixMilli()
	tbl := history(t,
		table.Snapshot{SnapshotID: 10, TimestampMs: at},
		table.Snapshot{SnapshotID: 13, ParentSnapshotID: parent(12), TimestampMs: at + 3},
		table.Snapshot{SnapshotID: 14, ParentSnapshotID: parent(13), TimestampMs: at + 4})
	s := &Source{name: "db.a", added: map[int64]addedFiles{}, warned: map[int64]bool{}}
	st := offset{SnapshotID: 10, Position: 1, TimestampMs: at}
	_, err := s.after(tbl, st)
	if !errors.Is(err, source.ErrCannotContinue) || !strings.Contains(err.Error(), "up to snapshot 12") || strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("gap: %v; want an error naming the expired snapshots", err)
	}
	s.skipExpired = true
	chain, err := s.after(tbl, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 2 || chain[0].SnapshotID != 13 || chain[1].SnapshotID != 14 {
		t.Fatalf("the stream goes on with %v, want snapshots 13 and 14", chain)
	}
}
