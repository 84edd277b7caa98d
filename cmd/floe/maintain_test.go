package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

type expireJSON struct {
	DryRun       bool    `json:"dry_run"`
	ExpiredCount int     `json:"snapshots_expired"`
	ExpiredIDs   []int64 `json:"expired_snapshot_ids"`
	KeptCount    int     `json:"snapshots_kept"`
	Kept         []struct {
		SnapshotID int64    `json:"snapshot_id"`
		Reasons    []string `json:"reasons"`
	} `json:"kept"`
	Files map[string]struct {
		Count int   `json:"count"`
		Bytes int64 `json:"bytes"`
	} `json:"files_deleted"`
}

type orphanJSON struct {
	DryRun  bool     `json:"dry_run"`
	Count   int      `json:"orphan_files"`
	Bytes   int64    `json:"orphan_bytes"`
	Paths   []string `json:"paths"`
	Deleted int      `json:"deleted"`
}

func decode[T any](t *testing.T, r fixture.Result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return v
}

func TestMaintainExpireSnapshots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 5 {
		e.WriteIDs(fmt.Sprintf("part-%03d.parquet", i), int64(i)*100, 100)
	}
	e.Stream("db.t", "--trigger", "available-now", "--max-files-per-trigger", "1")
	if n := len(e.Snapshots("db.t")); n != 5 {
		t.Fatalf("%d snapshots, want 5", n)
	}
	ids := e.IDs("db.t")

	dry := decode[expireJSON](t, e.OK("maintain", "expire-snapshots", "db.t", "--older-than", "0", "--retain-last", "2", "--dry-run", "--json"))
	if !dry.DryRun || dry.ExpiredCount != 3 || dry.KeptCount != 2 || dry.Files["manifest_lists"].Count != 3 {
		t.Fatalf("dry run: %+v", dry)
	}
	if n := len(e.Snapshots("db.t")); n != 5 {
		t.Fatalf("dry run left %d snapshots, want 5", n)
	}
	res := decode[expireJSON](t, e.OK("maintain", "expire-snapshots", "db.t", "--older-than", "0", "--retain-last", "2", "--json"))
	if res.DryRun || res.ExpiredCount != 3 || fmt.Sprint(res.ExpiredIDs) != fmt.Sprint(dry.ExpiredIDs) || res.Files["manifest_lists"].Bytes == 0 {
		t.Fatalf("expiry: %+v, dry run %+v", res, dry)
	}
	if n := len(e.Snapshots("db.t")); n != 2 {
		t.Fatalf("%d snapshots left, want 2", n)
	}
	if got := e.IDs("db.t"); len(got) != len(ids) {
		t.Fatalf("%d rows after expiry, %d before", len(got), len(ids))
	}
	// The defaults keep everything younger than 5 days.
	r := e.OK("maintain", "expire-snapshots", "db.t")
	if !strings.Contains(r.Stdout, "expired 0 snapshots") {
		t.Fatalf("default expiry:\n%s", r)
	}
	if r := e.Run("maintain", "expire-snapshots", "db.t", "--retain-last", "0"); r.Code != 2 || !strings.Contains(r.Stderr, "retain-last") {
		t.Fatalf("--retain-last 0: %s", r)
	}
}

// Counts of one in the maintenance commands' lines take the singular.
func TestMaintainCountsOfOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("part-000.parquet", 0, 100)
	e.WriteIDs("part-001.parquet", 100, 100)
	e.Stream("db.t", "--trigger", "available-now", "--max-files-per-trigger", "1")
	if r := e.OK("maintain", "expire-snapshots", "db.t", "--older-than", "0", "--retain-last", "1"); !strings.Contains(r.Stdout, "expired 1 snapshot older than") {
		t.Errorf("expire-snapshots: %s", r)
	}
	r := e.OK("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2")
	if !regexp.MustCompile(`^rewrote 2 data files \([^)]*\) into 1 \([^)]*\) in 1 group, 1 snapshot; removed 0 delete files\n$`).MatchString(r.Stdout) {
		t.Errorf("rewrite-data-files: %s", r)
	}
	if r := e.OK("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2"); r.Stdout != "nothing to rewrite in db.t (1 file already of a good size)\n" {
		t.Errorf("a second rewrite: %s", r)
	}
}

func TestMaintainRemoveOrphanFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("part-000.parquet", 0, 100)
	e.Stream("db.t", "--trigger", "available-now")
	var files []struct {
		Path string `json:"file_path"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "files", "db.t", "--json").Stdout), &files); err != nil || len(files) != 1 {
		t.Fatalf("table files: %v %v", err, files)
	}
	data := strings.TrimPrefix(files[0].Path, "file://")
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(filepath.Dir(data), "00000-0-orphan.parquet")
	young := filepath.Join(filepath.Dir(data), "00000-1-young.parquet")
	for _, p := range []string{orphan, young} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{orphan, data} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	dry := decode[orphanJSON](t, e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "1h", "--dry-run", "--json"))
	if !dry.DryRun || dry.Count != 1 || dry.Deleted != 0 || dry.Bytes != int64(len(b)) || !strings.HasSuffix(dry.Paths[0], "00000-0-orphan.parquet") {
		t.Fatalf("dry run: %+v", dry)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("dry run deleted: %v", err)
	}
	res := decode[orphanJSON](t, e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "1h", "--json"))
	if res.Count != 1 || res.Deleted != 1 {
		t.Fatalf("removal: %+v", res)
	}
	for p, want := range map[string]bool{orphan: false, young: true, data: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
	if n := e.Count("db.t"); n != 100 {
		t.Fatalf("%d rows after orphan removal, want 100", n)
	}
	// The default threshold (3 days) spares everything here.
	if r := e.OK("maintain", "remove-orphan-files", "db.t"); !strings.Contains(r.Stdout, "removed 0 orphan files") {
		t.Fatalf("default removal:\n%s", r)
	}
	if r := e.Run("maintain", "remove-orphan-files", "--help"); !strings.Contains(r.Stdout, "--older-than") {
		t.Fatalf("--help:\n%s", r)
	}
}
