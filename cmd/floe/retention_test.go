package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetadataRetention: a table floe creates keeps a bounded number of
// metadata files however many batches commit, maintenance's expiries
// (raw catalog commits) included, and a table property given at creation
// overrides the bound.
func TestMetadataRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range int64(40) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*10, 10)
	}
	e.Stream("db.kept", "--max-files-per-trigger", "1")
	if n := metadataFiles(t, e, "kept"); n > 26 {
		t.Fatalf("%d metadata files after 40 commits, want at most 26 (the current one and 25 previous)", n)
	}
	r := e.OK("table", "describe", "db.kept", "--json")
	for _, p := range []string{`"write.metadata.delete-after-commit.enabled": "true"`, `"write.metadata.previous-versions-max": "25"`} {
		if !strings.Contains(r.Stdout, p) {
			t.Errorf("table properties lack %s:\n%s", p, r.Stdout)
		}
	}
	if n := e.Count("db.kept"); n != 400 {
		t.Fatalf("%d rows, want 400", n)
	}

	e.Ckpt += "-all"
	e.Stream("db.all", "--max-files-per-trigger", "4", "-p", "table-default.write.metadata.delete-after-commit.enabled=false")
	if n := metadataFiles(t, e, "all"); n < 11 {
		t.Fatalf("%d metadata files after 10 commits with deletion off, want them all", n)
	}
}

func metadataFiles(t *testing.T, e *env, name string) int {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(e.Warehouse, "db.db", name, "metadata", "*.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) == 0 {
		entries, _ := os.ReadDir(e.Warehouse)
		t.Fatalf("no metadata files found for %s (warehouse holds %v)", name, entries)
	}
	return len(matches)
}
