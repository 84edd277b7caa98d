package floe_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/fixture"
)

// faultFiles and faultRows are the landing directory of the fault test:
// with one file a batch, the run is faultFiles batches.
const faultFiles, faultRows = 3, 4

// Each write and each sync of the checkpoint, the file source's log in it
// included, fails in turn (the 1st, the 2nd, ... until a run passes
// without reaching the one to fail): the run stops with that error, never
// with a success, and the next run, with nothing failing, resumes exactly.
// Every input row is then in the table once, as iceberg-go's own scan
// reads it, each file was its own batch, and the checkpoint verifies.
func TestCheckpointFaultEachWriteAndSync(t *testing.T) {
	t.Parallel()
	for _, op := range []struct {
		name string
		op   checkpoint.Op
	}{{"write", checkpoint.OpWrite}, {"sync", checkpoint.OpSync}} {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			var failed []string
			for n := 1; ; n++ {
				hit := faultRound(t, op.op, op.name, n)
				if hit == "" {
					break
				}
				failed = append(failed, hit)
			}
			// Each part of the checkpoint had its turn, the source's log
			// too: it is kept through the same file system.
			for _, part := range []string{"/metadata", "/offsets/", "/commits/", "/sources/0/"} {
				if !slices.ContainsFunc(failed, func(hit string) bool { return strings.Contains(hit, part) }) {
					t.Errorf("no %s of %s failed; the %ss failed were %s", op.name, part, op.name, strings.Join(failed, ", "))
				}
			}
			t.Logf("%d %ss failed in turn", len(failed), op.name)
		})
	}
}

// faultRound runs a new pipeline with the nth operation of kind op
// failing, then again with nothing failing, and checks the outcome; it
// returns the operation failed, "" when the run did not reach it.
func faultRound(t *testing.T, op checkpoint.Op, name string, n int) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	landing := filepath.Join(dir, "landing")
	want := map[int64]int{}
	for i := range int64(faultFiles) {
		first := i * 100
		if err := fixture.Land(filepath.Join(landing, fmt.Sprintf("part-%d.csv", i)), fixture.IDCSV(first, faultRows, ',', true)); err != nil {
			t.Fatal(err)
		}
		// Files are planned by modification time: one per batch, in order.
		mtime := time.Now().Add(time.Duration(i-faultFiles) * time.Minute)
		if err := os.Chtimes(filepath.Join(landing, fmt.Sprintf("part-%d.csv", i)), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		for id := first; id < first+faultRows; id++ {
			want[id] = 1
		}
	}
	cfg := &config.Pipeline{
		Catalog:    config.Catalog{Warehouse: filepath.Join(dir, "warehouse")},
		Source:     config.Source{Path: landing, Format: "csv", MaxFilesPerTrigger: 1},
		Sink:       config.Sink{Table: "db.t"},
		Checkpoint: filepath.Join(dir, "checkpoint"),
	}
	cfg.SetDefaults()
	opts := floe.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	faults := checkpoint.NewFaultFS(checkpoint.OS)
	faults.FailAt(op, n)
	err := runOnce(ctx, cfg, opts, faults)
	hit := faults.Injected()
	switch {
	case hit == "" && err != nil:
		t.Fatalf("%s %d: nothing failed, and the run failed: %v", name, n, err)
	case hit == "":
		if got := faults.Count(op); got != n-1 {
			t.Fatalf("%s %d: the run that failed nothing made %d %ss, and runs before it more", name, n, got, name)
		}
		checkResumed(t, ctx, cfg, opts, want, name, n)
		return ""
	case err == nil:
		t.Fatalf("%s %d (%s) failed, and the run succeeded", name, n, hit)
	case !errors.Is(err, checkpoint.ErrInjected):
		t.Fatalf("%s %d (%s) failed, and the run stopped with another error: %v", name, n, hit, err)
	}
	if err := runOnce(ctx, cfg, opts, checkpoint.OS); err != nil {
		t.Fatalf("after %s %d (%s) failed, the next run: %v", name, n, hit, err)
	}
	checkResumed(t, ctx, cfg, opts, want, name, n)
	return hit
}

// runOnce opens the pipeline on fsys and runs it.
func runOnce(ctx context.Context, cfg *config.Pipeline, opts floe.Options, fsys checkpoint.FS) error {
	p, err := floe.OpenOn(ctx, cfg, opts, fsys)
	if err != nil {
		return err
	}
	_, err = p.Run(ctx)
	return errors.Join(err, p.Close())
}

// checkResumed checks the table and the checkpoint after the last run.
func checkResumed(t *testing.T, ctx context.Context, cfg *config.Pipeline, opts floe.Options, want map[int64]int, name string, n int) {
	t.Helper()
	cat, _ := fixture.CatalogAt(t, cfg.Catalog.Warehouse)
	got, err := fixture.ReadIDs(ctx, cat, cfg.Sink.Table, "id")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("after %s %d failed: the table holds ids %v (id: count), want %v once each", name, n, got, slices.Sorted(maps.Keys(want)))
	}
	st, err := floe.ReadCheckpoint(cfg.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if st.PendingBatch != nil {
		t.Fatalf("after %s %d failed: batch %d is pending", name, n, *st.PendingBatch)
	}
	if st.LatestCommit == nil || st.LatestCommit.BatchID != faultFiles-1 {
		t.Fatalf("after %s %d failed: the checkpoint's newest commit is %+v, want batch %d, one a file", name, n, st.LatestCommit, faultFiles-1)
	}
	p, err := floe.Open(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Verify(ctx); err != nil {
		t.Fatalf("after %s %d failed: the checkpoint does not verify: %v", name, n, err)
	}
}
