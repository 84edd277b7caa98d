package main_test

import (
	"strings"
	"testing"
)

// The article's measured run: three files, one snapshot; a re-run adds
// nothing; a fourth file makes a second snapshot.
func TestArticleScenario(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := int64(0); i < 3; i++ {
		e.WriteIDs("part-"+string(rune('0'+i))+".parquet", i*1000, 1000)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.stream", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if n := e.Count("db.stream"); n != 3000 {
		t.Fatalf("rows after first run = %d, want 3000", n)
	}
	snaps := e.Snapshots("db.stream")
	if len(snaps) != 1 || snaps[0].Operation != "append" {
		t.Fatalf("snapshots = %+v, want one append", snaps)
	}
	if snaps[0].Summary["floe.query-id"] == "" || snaps[0].Summary["floe.batch-id"] != "0" {
		t.Fatalf("summary lacks floe.query-id/floe.batch-id: %v", snaps[0].Summary)
	}

	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.stream", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if n, s := e.Count("db.stream"), len(e.Snapshots("db.stream")); n != 3000 || s != 1 {
		t.Fatalf("after re-run: %d rows, %d snapshots; want 3000 and 1", n, s)
	}

	e.WriteIDs("part-3.parquet", 3000, 1000)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.stream", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if n, s := e.Count("db.stream"), len(e.Snapshots("db.stream")); n != 4000 || s != 2 {
		t.Fatalf("after a fourth file: %d rows, %d snapshots; want 4000 and 2", n, s)
	}
	if ids := e.IDs("db.stream"); len(ids) != 4000 {
		t.Fatalf("distinct ids = %d, want 4000", len(ids))
	}
}

// The trap: files one directory deep are not read without --recursive, and
// floe says so.
func TestNonRecursiveTrap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := int64(0); i < 3; i++ {
		e.WriteIDs("batch0/part-"+string(rune('0'+i))+".parquet", i*1000, 1000)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.trap", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if !strings.Contains(r.Stderr, "3 files sit in subdirectories") || !strings.Contains(r.Stderr, "--recursive") {
		t.Fatalf("no warning about subdirectories naming --recursive:\n%s", r)
	}
	if r := e.Run("table", "snapshots", "db.trap", "--json"); r.Code == 0 && strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("table has snapshots after a no-op run: %s", r.Stdout)
	}

	r = e.Stream("db.trap", "--trigger", "available-now", "--fail-on-empty")
	if r.Code != 3 || !strings.Contains(r.Stderr, "no input found") {
		t.Fatalf("--fail-on-empty: want exit 3 naming no input, got %s", r)
	}

	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.trap", "--checkpoint", e.Ckpt, "--trigger", "available-now", "--recursive")
	if n := e.Count("db.trap"); n != 3000 {
		t.Fatalf("rows with --recursive = %d, want 3000", n)
	}
}

// A hard file limit splits the available-now backlog into batches.
func TestMaxFilesPerTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := int64(0); i < 3; i++ {
		e.WriteIDs("part-"+string(rune('0'+i))+".parquet", i*1000, 1000)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.limited", "--checkpoint", e.Ckpt, "--trigger", "available-now", "--max-files-per-trigger", "1")
	if n, s := e.Count("db.limited"), len(e.Snapshots("db.limited")); n != 3000 || s != 3 {
		t.Fatalf("%d rows, %d snapshots; want 3000 and 3", n, s)
	}
}

// A file in a subdirectory is told of once a run, in the singular, however
// many listings the run makes.
func TestNestedFileToldOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("top.parquet", 0, 100)
	e.WriteIDs("later/part-0.parquet", 100, 100)
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.nested", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if n := strings.Count(r.Stderr, "in a subdirectory"); n != 1 || !strings.Contains(r.Stderr, "1 file sits in a subdirectory of ") {
		t.Fatalf("want one warning that 1 file sits in a subdirectory, got %d:\n%s", n, r.Stderr)
	}
	if strings.Contains(r.Stderr, "1 files") {
		t.Fatalf("a count of one takes the singular:\n%s", r.Stderr)
	}
}
