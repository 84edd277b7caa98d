package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// A floe table read by location: its directory, its metadata file, and a
// copy of it elsewhere (paths recorded in the metadata follow the copy).
func TestScanTableByLocation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 700)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.loc", "--checkpoint", e.Ckpt)
	dir := filepath.Join(e.Warehouse, "db.db", "loc")
	if out := e.OK("scan", dir, "--count").Stdout; out != "700\n" {
		t.Fatalf("scan by directory = %q, want 700", out)
	}
	metas, _ := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json"))
	if len(metas) == 0 {
		t.Fatal("no metadata file")
	}
	if out := e.OK("scan", metas[len(metas)-1], "--count").Stdout; out != "700\n" {
		t.Fatalf("scan by metadata file = %q, want 700", out)
	}
	moved := filepath.Join(e.Dir, "moved", "loc")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", dir, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if ids := e.OK("scan", moved, "--output-format", "csv").Stdout; strings.Count(ids, "\n") != 701 {
		t.Fatalf("scan of the moved copy printed %d lines, want a header and 700 rows", strings.Count(ids, "\n"))
	}
	r := e.OK("table", "snapshots", moved, "--json")
	if !strings.Contains(r.Stdout, "floe.batch-id") {
		t.Fatalf("snapshots of the moved copy: %s", r.Stdout)
	}
	if r := e.Run("scan", filepath.Join(e.Dir, "nowhere"), "--count"); r.Code != 1 || !strings.Contains(r.Stderr, "nowhere") {
		t.Fatalf("scan of a missing location: %s", r)
	}
	empty := filepath.Join(e.Dir, "empty", "metadata")
	_ = os.MkdirAll(empty, 0o755)
	if r := e.Run("scan", filepath.Dir(empty), "--count"); r.Code != 1 || !strings.Contains(r.Stderr, "no Iceberg table metadata") {
		t.Fatalf("scan of a directory without metadata: %s", r)
	}
}

// Tables written by Spark (TPC-H lineitem, with a copy-on-write delete) and
// Iceberg Java read by location; the expected counts are those the tables'
// provenance records (fixtures/peer-tables/README.md), not floe's.
func TestScanPeerTablesByLocation(t *testing.T) {
	t.Parallel()
	tables := fixture.Shared(t, "fixtures/peer-tables/tables")
	e := newEnv(t)
	for _, c := range []struct {
		table  string
		prefix []string
		want   string
	}{
		{"iceberg/lineitem_iceberg", nil, "51793"},
		{"iceberg/lineitem_iceberg_gz", nil, "111968"},
		{"iceberg/lineitem_iceberg_no_hint", []string{"lineitem_iceberg=" + filepath.Join(tables, "iceberg/lineitem_iceberg")}, "51793"},
		{"iceberg/lineitem_iceberg_gz_no_hint", []string{"lineitem_iceberg_gz=" + filepath.Join(tables, "iceberg/lineitem_iceberg_gz")}, "111968"},
		{"expression_filter", nil, "3"},
	} {
		args := []string{"scan", filepath.Join(tables, c.table), "--count"}
		for _, p := range c.prefix {
			args = append(args, "--path-prefix", p)
		}
		if out := strings.TrimSpace(e.OK(args...).Stdout); out != c.want {
			t.Errorf("%s: %s rows, want %s", c.table, out, c.want)
		}
	}
}

// Metadata files from the Java, Rust and Go implementations: those named
// Valid load; those named Missing…, …NotFound or Unsupported… are refused
// with a message, and nothing panics.
func TestMetadataFixtures(t *testing.T) {
	t.Parallel()
	shared := fixture.Shared(t, ".")
	files, _ := filepath.Glob(filepath.Join(shared, "fixtures", "iceberg-*", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no metadata fixtures under %s/fixtures/iceberg-*", shared)
	}
	e := newEnv(t)
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.HasPrefix(name, "TableMetadata") && !strings.Contains(name, "View") && !strings.HasPrefix(name, "view") {
			continue // manifests' Avro schemas and REST responses are not table metadata
		}
		r := e.Run("table", "describe", f, "--json")
		if strings.Contains(r.Stderr, "internal error") || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%s: floe crashed:\n%s", name, r.Stderr)
			continue
		}
		switch {
		case strings.Contains(name, "View") || strings.HasPrefix(name, "view"):
			if r.Code != 1 || !strings.Contains(r.Stderr, "view metadata, not table metadata") {
				t.Errorf("%s: want a refusal saying it is view metadata, got %s", name, r)
			}
		case strings.Contains(name, "Missing") || strings.Contains(name, "NotFound") || strings.Contains(name, "Unsupported"):
			if r.Code != 1 || !strings.Contains(r.Stderr, name) {
				t.Errorf("%s: want exit 1 naming the file, got %s", name, r)
			}
		default:
			if r.Code != 0 {
				t.Errorf("%s: want it to load, got %s", name, r)
			}
		}
	}
}
