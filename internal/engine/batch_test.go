package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/engine"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
	_ "github.com/floe-io/floe/source/files"
)

// One batch is a function of its offsets, the tables and the checkpoint:
// run once it commits its rows and says so in its result; run again as
// the re-run of a batch whose commits entry was lost (a crash between the
// table's commit and the checkpoint's), it finds the batch in the table,
// reports it recovered with the same snapshot and rows, and adds nothing.
func TestRunBatchOnceAndAgainAfterALostCommitsEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	landing := filepath.Join(dir, "landing")
	for i, name := range []string{"a.csv", "b.csv"} {
		if err := fixture.Land(filepath.Join(landing, name), fixture.IDCSV(int64(i)*100, 100, ',', true)); err != nil {
			t.Fatal(err)
		}
	}
	cat := fixture.Catalog(t)
	cfg := &config.Pipeline{Source: config.Source{Path: landing, Format: "csv"}, Sink: config.Sink{Table: "db.t"},
		Checkpoint: filepath.Join(dir, "checkpoint")}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	src, err := source.New(cfg.Source, source.Env{StateDir: checkpoint.SourceDir(cfg.Checkpoint), FS: checkpoint.OS, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ck, err := checkpoint.Open(checkpoint.OS, cfg.Checkpoint, cfg.Sink.Table, src.Description(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	var got []engine.Batch
	e, err := engine.New(cfg, engine.Hooks{OnBatch: func(b engine.Batch) { got = append(got, b) }})
	if err != nil {
		t.Fatal(err)
	}
	e.Open(cat, src, ck)
	if err := e.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	start := src.InitialOffset()
	end, err := src.LatestOffset(ctx, start, source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	entry := checkpoint.OffsetEntry{BatchID: 0, TimestampMs: time.Now().UnixMilli(), Start: start, End: end, Conf: map[string]string{"mode": "append"}}
	if err := e.RunBatch(ctx, entry, time.Now(), 0, false); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rows != 200 || got[0].Parts != 2 || got[0].Snapshots != 1 || got[0].SnapshotID == 0 || got[0].Recovered {
		t.Fatalf("first run of batch 0: %+v, want 200 rows from 2 files in one new snapshot", got)
	}
	exactly := func() {
		t.Helper()
		ids, err := fixture.ReadIDs(ctx, cat, "db.t", "id")
		if err != nil {
			t.Fatal(err)
		}
		if diff := fixture.Exact(ids, 0, 200); diff != "" {
			t.Fatal(diff)
		}
	}
	exactly()

	if err := os.Remove(filepath.Join(cfg.Checkpoint, "commits", "0")); err != nil {
		t.Fatal(err)
	}
	if err := e.RunBatch(ctx, entry, time.Now(), 0, true); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[1].Recovered || got[1].SnapshotID != got[0].SnapshotID || got[1].Rows != 200 || got[1].Snapshots != 0 {
		t.Fatalf("re-run of batch 0: %+v, want it recovered from snapshot %d with its 200 rows and no new snapshot", got[1:], got[0].SnapshotID)
	}
	if last, err := ck.LatestCommit(); err != nil || last != 0 {
		t.Fatalf("the checkpoint's newest commit is %d (%v), want batch 0 recorded again", last, err)
	}
	exactly()
}
