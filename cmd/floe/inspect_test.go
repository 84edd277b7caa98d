package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// The inspection commands read what a run wrote, as text and as JSON.
func TestInspectionCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 1000)
	e.WriteIDs("b.parquet", 1000, 1000)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.insp", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "1")

	var names []string
	if err := json.Unmarshal([]byte(e.OK("table", "list", "--json").Stdout), &names); err != nil || len(names) != 1 || names[0] != "db.insp" {
		t.Fatalf("table list --json = %v (%v)", names, err)
	}
	if out := e.OK("table", "list", "db").Stdout; out != "db.insp\n" {
		t.Fatalf("table list db = %q", out)
	}

	var desc struct {
		Name          string `json:"name"`
		FormatVersion int    `json:"format_version"`
		Schema        struct {
			Fields []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"fields"`
		} `json:"schema"`
		Snapshots int `json:"snapshots"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "describe", "db.insp", "--json").Stdout), &desc); err != nil {
		t.Fatal(err)
	}
	if desc.Name != "db.insp" || desc.FormatVersion != 2 || desc.Snapshots != 2 || len(desc.Schema.Fields) != 2 ||
		desc.Schema.Fields[0].Name != "id" || desc.Schema.Fields[0].Type != "long" || desc.Schema.Fields[1].Type != "string" {
		t.Fatalf("describe --json = %+v", desc)
	}
	if out := e.OK("table", "describe", "db.insp").Stdout; !strings.Contains(out, "format version: 2") || !strings.Contains(out, "id") {
		t.Fatalf("describe = %s", out)
	}

	var files []struct {
		Path        string `json:"file_path"`
		RecordCount int64  `json:"record_count"`
		Size        int64  `json:"file_size_in_bytes"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "files", "db.insp", "--json").Stdout), &files); err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, f := range files {
		rows += f.RecordCount
		if f.Size <= 0 || !strings.HasSuffix(f.Path, ".parquet") {
			t.Fatalf("file entry %+v", f)
		}
	}
	if len(files) != 2 || rows != 2000 {
		t.Fatalf("files: %d files, %d rows; want 2 and 2000", len(files), rows)
	}

	var hist []struct {
		SnapshotID        int64 `json:"snapshot_id"`
		IsCurrentAncestor bool  `json:"is_current_ancestor"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "history", "db.insp", "--json").Stdout), &hist); err != nil {
		t.Fatal(err)
	}
	snaps := e.Snapshots("db.insp")
	if len(hist) != 2 || !hist[0].IsCurrentAncestor || !hist[1].IsCurrentAncestor || hist[1].SnapshotID != snaps[1].SnapshotID || *snaps[1].ParentID != snaps[0].SnapshotID {
		t.Fatalf("history = %+v, snapshots = %+v", hist, snaps)
	}

	lines := strings.Split(strings.TrimSpace(e.OK("scan", "db.insp", "--output-format", "jsonl", "--limit", "3").Stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"id":`) {
		t.Fatalf("scan jsonl --limit 3 = %q", lines)
	}
	if out := e.OK("scan", "db.insp", "--limit", "2").Stdout; !strings.Contains(out, "(2 rows)") {
		t.Fatalf("scan table format = %q", out)
	}

	show := e.OK("checkpoint", "show", e.Ckpt).Stdout
	if !strings.Contains(show, "latest batch committed: 1") || !strings.Contains(show, "db.insp") {
		t.Fatalf("checkpoint show = %s", show)
	}
	if out := e.OK("version").Stdout; !strings.HasPrefix(out, "floe ") {
		t.Fatalf("version = %q", out)
	}
	if r := e.Run("scan", "db.missing", "--count"); r.Code != 2 || !strings.Contains(r.Stderr, "db.missing does not exist") {
		t.Fatalf("scan of a missing table: %s", r)
	}
	if r := e.Run("bogus"); r.Code != 2 {
		t.Fatalf("unknown command: %s", r)
	}
}

// max-bytes-per-trigger is soft: a batch takes files until it reaches the
// limit, always at least one.
func TestMaxBytesPerTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := int64(0); i < 4; i++ {
		e.WriteIDs(string(rune('a'+i))+".parquet", i*1000, 1000)
	}
	// Each file is ~11 kB: a 1-byte limit gives one file per batch, a 15 kB
	// limit two.
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.bytes", "--checkpoint", e.Ckpt, "--max-bytes-per-trigger", "15000")
	if n, s := e.Count("db.bytes"), len(e.Snapshots("db.bytes")); n != 4000 || s != 2 {
		t.Fatalf("%d rows in %d snapshots; want 4000 in 2", n, s)
	}
}
