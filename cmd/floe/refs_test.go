package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type refJSON struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	SnapshotID int64  `json:"snapshot_id"`
}

// The snapshot procedures through the binary, on three batches s1, s2, s3
// of 1,000 rows each: rollback to s1 reads s1's rows; a rollback to a
// snapshot that is no longer an ancestor is refused, set-current reaches
// it; a tag and a branch hold their snapshots; fast-forward publishes a
// branch ahead of main and refuses one that is not; cherrypick brings s3's
// rows alone onto s1.
func TestSnapshotProcedures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var snaps []int64
	for i := int64(0); i < 3; i++ {
		e.WriteIDs(fmt.Sprintf("p-%d.parquet", i), i*1000, 1000)
		e.OK(e.StreamArgs("db.t", "--trigger", "once")...)
		all := e.Snapshots("db.t")
		snaps = append(snaps, all[len(all)-1].SnapshotID)
	}
	s1, s2, s3 := snaps[0], snaps[1], snaps[2]
	id := func(n int64) string { return fmt.Sprint(n) }
	count := func(want int64, what string) {
		t.Helper()
		if n := e.Count("db.t"); n != want {
			t.Fatalf("%s: %d rows, want %d", what, n, want)
		}
	}
	refs := func() map[string]refJSON {
		t.Helper()
		var out []refJSON
		if err := json.Unmarshal([]byte(e.OK("table", "refs", "db.t", "--json").Stdout), &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]refJSON{}
		for _, r := range out {
			m[r.Name] = r
		}
		return m
	}

	e.OK("table", "create-tag", "db.t", "v2", "--snapshot", id(s2))
	e.OK("table", "create-branch", "db.t", "audit")
	if r := refs(); r["v2"].SnapshotID != s2 || r["v2"].Type != "tag" || r["audit"].SnapshotID != s3 || r["audit"].Type != "branch" || r["main"].SnapshotID != s3 {
		t.Fatalf("refs %+v", r)
	}
	if r := e.Run("table", "create-branch", "db.t", "audit"); r.Code != 2 || !strings.Contains(r.Stderr, "already exists") {
		t.Fatalf("a second branch audit: want exit 2 naming it, got %s", r)
	}

	e.OK("table", "rollback", "db.t", id(s1))
	count(1000, "after rollback to s1")
	if r := e.Run("table", "rollback", "db.t", id(s3)); r.Code != 2 || !strings.Contains(r.Stderr, "not an ancestor") {
		t.Fatalf("rollback to a later snapshot: want exit 2, got %s", r)
	}
	e.OK("table", "set-current", "db.t", id(s3))
	count(3000, "after set-current to s3")

	// audit (s3) is ahead of main once main is back at s1.
	e.OK("table", "rollback", "db.t", id(s1))
	e.OK("table", "fast-forward", "db.t", "main", "audit")
	count(3000, "after fast-forward to audit")
	if r := refs(); r["main"].SnapshotID != s3 {
		t.Fatalf("main at %d after fast-forward, want %d", r["main"].SnapshotID, s3)
	}
	e.OK("table", "rollback", "db.t", id(s1))
	e.OK("table", "cherrypick", "db.t", id(s3))
	ids := e.IDs("db.t")
	if len(ids) != 2000 || !ids[0] || ids[1000] || !ids[2000] {
		t.Fatalf("after cherry-picking s3 onto s1: %d ids (0 %v, 1000 %v, 2000 %v), want s1's and s3's rows", len(ids), ids[0], ids[1000], ids[2000])
	}
	if r := e.Run("table", "fast-forward", "db.t", "main", "audit"); r.Code != 2 || !strings.Contains(r.Stderr, "cannot be fast-forwarded") {
		t.Fatalf("fast-forward of a main that moved apart: want exit 2, got %s", r)
	}
	cur := e.Snapshots("db.t")
	if last := cur[len(cur)-1]; last.Summary["source-snapshot-id"] != id(s3) {
		t.Fatalf("the cherry-pick's summary %v lacks source-snapshot-id %d", last.Summary, s3)
	}
	if r := e.Run("table", "cherrypick", "db.t", id(s3)); r.Code == 0 {
		t.Fatalf("a second cherry-pick of s3 succeeded: %s", r)
	}
}
