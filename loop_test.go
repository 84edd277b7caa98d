package floe_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	_ "github.com/floe-io/floe/source/files"
)

// A single process runs the loop a cluster worker runs (a worker's side
// is cmd/floe's TestKafkaClusterWorkerFailsLoudly): a stream whose batches
// keep failing retries 10 times in a row, with a warning and a failure
// report each, and then exits with the failure instead of running on with
// nothing committed.
func TestStreamGivesUpAfterTenRetries(t *testing.T) {
	dir := t.TempDir()
	landing := filepath.Join(dir, "landing")
	if err := os.MkdirAll(landing, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(landing, "a.csv"), []byte("id\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Pipeline{
		Catalog:    config.Catalog{Warehouse: filepath.Join(dir, "warehouse")},
		Source:     config.Source{Path: landing, Format: "csv"},
		Sink:       config.Sink{Table: "db.t"},
		Checkpoint: filepath.Join(dir, "checkpoint"),
	}
	cfg.SetDefaults()
	trig, err := config.ParseTrigger("processing-time=1ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Trigger = trig
	var (
		mu       sync.Mutex
		warnings []string
		failed   []int64
		stamps   []string
	)
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{
		OnWarning: func(w string) { mu.Lock(); warnings = append(warnings, w); mu.Unlock() },
		OnBatchFailed: func(id int64, _ error) {
			mu.Lock()
			failed = append(failed, id)
			mu.Unlock()
		},
		OnProgress: func(pr floe.Progress) {
			stamps = append(stamps, pr.Timestamp)
			// The first batch committed: take the landing directory away
			// under the stream.
			if err := os.RemoveAll(landing); err != nil {
				t.Error(err)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(ctx)
	if err == nil {
		t.Fatal("the stream ran on without its landing directory")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stamps) != 1 {
		t.Fatalf("%d batches committed, want 1", len(stamps))
	}
	if _, perr := time.Parse("2006-01-02T15:04:05.000Z", stamps[0]); perr != nil {
		t.Fatalf("progress timestamp %q is not Spark's form: %v", stamps[0], perr)
	}
	var retried []string
	for _, w := range warnings {
		if strings.Contains(w, "retrying in") {
			retried = append(retried, w)
		}
	}
	if len(retried) != 10 || len(failed) != 10 || !strings.Contains(retried[9], "batch 1 failed (10 in a row)") {
		t.Fatalf("%d retry warnings and %d failure reports before the exit (%v), want 10 each, the last naming batch 1 and its 10 failures in a row; the run ended with %v",
			len(retried), len(failed), retried, err)
	}
}
