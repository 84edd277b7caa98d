package main_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// floe table drop takes a table out of the catalog and leaves its files,
// naming the metadata file that brings it back; with --purge it deletes
// every file the table's metadata names and keeps a file under its
// location that none names; a table the catalog does not have is refused
// with exit 2, and nothing else changes.
func TestTableDrop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK(e.StreamArgs("db.kept", "--trigger", "once")...)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.purged", "--checkpoint", filepath.Join(e.Dir, "ckpt-purged"), "--trigger", "once")
	e.WriteIDs("b.parquet", 100, 50)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.purged", "--checkpoint", filepath.Join(e.Dir, "ckpt-purged"), "--trigger", "once")
	location := func(table string) (string, string) {
		var d struct {
			Location         string `json:"location"`
			MetadataLocation string `json:"metadata_location"`
		}
		if err := json.Unmarshal([]byte(e.OK("table", "describe", table, "--json").Stdout), &d); err != nil {
			t.Fatal(err)
		}
		return strings.TrimPrefix(d.Location, "file://"), d.MetadataLocation
	}
	keptDir, keptMeta := location("db.kept")
	purgedDir, _ := location("db.purged")
	keptFiles := filesUnder(t, keptDir)
	if len(keptFiles) < 3 || len(filesUnder(t, purgedDir)) < 5 {
		t.Fatalf("db.kept holds %d files, db.purged %d: want a table's data, manifests and metadata", len(keptFiles), len(filesUnder(t, purgedDir)))
	}
	listed := func() []string { return strings.Fields(e.OK("table", "list").Stdout) }

	r := e.OK("table", "drop", "db.kept")
	if !strings.Contains(r.Stdout, "floe table register db.kept "+keptMeta) {
		t.Errorf("drop without --purge names no way back: %q", r.Stdout)
	}
	if slices.Contains(listed(), "db.kept") {
		t.Fatalf("db.kept is still listed after the drop: %v", listed())
	}
	if after := filesUnder(t, keptDir); !maps.Equal(after, keptFiles) {
		t.Fatalf("drop without --purge changed db.kept's files: %v, then %v", keptFiles, after)
	}

	// A file under the location that no metadata names: kept.
	stray := filepath.Join(purgedDir, "data", "not-the-tables.txt")
	if err := os.WriteFile(stray, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.OK("table", "drop", "db.purged", "--purge")
	if !strings.Contains(r.Stdout, "dropped db.purged and deleted") {
		t.Errorf("drop --purge said %q", r.Stdout)
	}
	if slices.Contains(listed(), "db.purged") {
		t.Fatalf("db.purged is still listed after the drop: %v", listed())
	}
	if left := filesUnder(t, purgedDir); !maps.Equal(left, map[string]int64{stray: 4}) {
		t.Fatalf("after drop --purge, db.purged's location holds %v; want only the file its metadata never named", left)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}

	r = e.Run("table", "drop", "db.nope", "--purge")
	if r.Code != 2 || !strings.Contains(r.Stderr, "table db.nope does not exist") || !strings.Contains(r.Stderr, "nothing was dropped") {
		t.Fatalf("drop of a table the catalog lacks: want exit 2 naming it, got %s", r)
	}

	// db.kept comes back from the metadata file the drop named, whole.
	e.OK("table", "register", "db.kept", keptMeta)
	if n := e.Count("db.kept"); n != 100 {
		t.Fatalf("db.kept registered again holds %d rows, want 100", n)
	}
}
