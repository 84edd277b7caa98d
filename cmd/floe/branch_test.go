package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Write-audit-publish: a stream writes to branch audit of a table whose
// main holds earlier rows; main does not move (same snapshot, same rows)
// while audit gets every batch exactly once, also across a crash between
// the branch commit and the checkpoint; `floe table fast-forward db.t main
// audit` publishes. Rows are read with iceberg-go's scan at each ref.
func TestBranchWriteAuditPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	e.OK(e.StreamArgs("db.t")...)
	mainSnap := e.Snapshots("db.t")[0].SnapshotID

	audit := filepath.Join(e.Dir, "landing-audit")
	if err := os.MkdirAll(audit, 0o755); err != nil {
		t.Fatal(err)
	}
	land := func(i int64) {
		if err := fixture.WriteIDFile(filepath.Join(audit, fmt.Sprintf("a%02d.parquet", i)), 100+i*100, 100); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"stream", "--source", audit, "--format", "parquet", "--table", "db.t",
		"--checkpoint", filepath.Join(e.Dir, "ckpt-audit"), "--branch", "audit", "--maintenance=false"}
	mainUnchanged := func() {
		t.Helper()
		if d := fixture.Exact(e.TableIDs("db.t"), 0, 100); d != "" {
			t.Fatalf("main: %s", d)
		}
		if snaps := e.OK("table", "refs", "db.t").Stdout; !strings.Contains(snaps, fmt.Sprintf("main                 branch  %d", mainSnap)) {
			t.Fatalf("main moved from snapshot %d:\n%s", mainSnap, snaps)
		}
	}

	land(0)
	e.OK(args...)
	land(1)
	// The run dies right after its branch commit, before the checkpoint
	// records the batch: the restart must find the batch on the branch.
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=1"}, args...); r.Code != 137 {
		t.Fatalf("want the crash hook's exit 137, got %s", r)
	}
	e.OK(args...)
	land(2)
	e.OK(args...)
	e.OK(args...) // nothing new
	if d := fixture.Exact(e.BranchIDs("db.t", "audit"), 0, 400); d != "" {
		t.Fatalf("audit: %s", d)
	}
	mainUnchanged()
	if n := strings.TrimSpace(e.OK("scan", "db.t", "--branch", "audit", "--count").Stdout); n != "400" {
		t.Fatalf("floe scan --branch audit counts %s rows, want 400", n)
	}

	e.OK("table", "fast-forward", "db.t", "main", "audit")
	if d := fixture.Exact(e.TableIDs("db.t"), 0, 400); d != "" {
		t.Fatalf("main after fast-forward: %s", d)
	}
	// The checkpoint holds its batches as done on audit: the same query
	// writing main is refused, as is any other branch.
	for _, other := range [][]string{nil, {"--branch", "dev"}} {
		r := e.Run(append(slices.Clone(args[:len(args)-3]), append(other, "--maintenance=false")...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "commits to branch audit") {
			t.Fatalf("the audit query writing %v: want exit 2 naming branch audit, got %s", other, r)
		}
	}
	// The stream goes on on its branch after the publish.
	land(3)
	e.OK(args...)
	if d := fixture.Exact(e.BranchIDs("db.t", "audit"), 0, 500); d != "" {
		t.Fatalf("audit after the publish: %s", d)
	}
	if d := fixture.Exact(e.TableIDs("db.t"), 0, 400); d != "" {
		t.Fatalf("main after the publish and one more audit batch: %s", d)
	}
}

// A new table written only to a branch has no main until it is published;
// complete mode replaces the branch's rows, not main's; Spark's
// spark.wap.branch names the branch too; a tag is refused.
func TestBranchOfNewTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	e.OK(e.StreamArgs("db.t", "--branch", "dev", "--mode", "complete")...)
	if ids := e.TableIDs("db.t"); len(ids) != 0 {
		t.Fatalf("main of a table written only to dev holds %d ids", len(ids))
	}
	e.land(1)
	// Spark's spelling of the option.
	e.OK(e.StreamArgs("db.t", "-o", "spark.wap.branch=dev", "--mode", "complete")...)
	if d := fixture.Exact(e.BranchIDs("db.t", "dev"), 100, 100); d != "" {
		t.Fatalf("dev after a complete batch: %s", d)
	}
	e.OK("table", "fast-forward", "db.t", "main", "dev")
	if d := fixture.Exact(e.TableIDs("db.t"), 100, 100); d != "" {
		t.Fatalf("main after publishing dev: %s", d)
	}

	e.OK("table", "create-tag", "db.t", "v1")
	e.land(2)
	r := e.Run(e.StreamArgs("db.t", "--branch", "v1", "--mode", "complete", "--checkpoint", filepath.Join(e.Dir, "ckpt-tag"), "--allow-new-query")...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "is a tag") {
		t.Fatalf("writing to a tag: want exit 2 naming the tag, got %s", r)
	}
	if r := e.Run(e.StreamArgs("db.t", "--branch", "dev", "--mode", "upsert", "--identifier-fields", "id")...); r.Code != 2 || !strings.Contains(r.Stderr, "sink.branch") {
		t.Fatalf("upsert to a branch: want exit 2 naming sink.branch, got %s", r)
	}
}
