package checkpoint

import (
	"slices"
	"testing"
)

// The logs keep the newest entries only; the purge runs beside the batches
// and Close waits for it, so what a run leaves is bounded.
func TestCheckpointPurgesOldEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := Open(OS, dir, "db.t", "src", nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	const batches = 250
	for id := range int64(batches) {
		if err := c.WriteOffsets(OffsetEntry{BatchID: id}); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteCommit(CommitEntry{BatchID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = Open(OS, dir, "db.t", "src", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, log := range []string{"offsets", "commits"} {
		ids, err := c.batchIDs(log)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for id := int64(batches - 100); id < batches; id++ {
			want = append(want, id)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: entries %v, want the newest 100, %d…%d", log, ids, want[0], want[99])
		}
	}
}
