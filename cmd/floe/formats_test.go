package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Complete mode replaces the table; the Hadoop-directory catalog runs the
// article scenario; `floe scan` prints what CSV files landed. How CSV and
// JSON lines files are typed and read is tested in package source/files
// (formats_test.go), in-process.

// fields reads `floe table describe --json` and returns the table's columns
// by name; extra flags select the catalog.
func (e *env) fields(table string, extra ...string) map[string]fixture.FieldInfo {
	e.T.Helper()
	r := e.OK(append([]string{"table", "describe", table, "--json"}, extra...)...)
	var d struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("describe --json: %v\n%s", err, r.Stdout)
	}
	return fixture.SchemaFields(e.T, d.Schema)
}

// rows scans the table as JSON lines and returns each row re-encoded with
// sorted keys, so rows compare as strings.
func (e *env) rows(table string, extra ...string) []string {
	e.T.Helper()
	r := e.OK(append([]string{"scan", table, "--output-format", "jsonl"}, extra...)...)
	return fixture.JSONRows(e.T, strings.NewReader(r.Stdout))
}

// `floe scan --format csv` prints a table with a time column.
func TestFormatScanCSVTimeColumn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("csv-schema"))
	r := e.Run("scan", "db.typed", "--output-format", "csv")
	if r.Code != 0 || !strings.Contains(r.Stdout, "12:30:00") || !strings.Contains(r.Stdout, "19.99") || !strings.Contains(r.Stdout, "0.10") {
		t.Fatalf("scan --format csv of a table with time and decimal columns: %s", r)
	}
}

// --mode complete: each batch replaces the table's contents.
func TestCompleteMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	table := "db.complete"
	e.WriteIDs("a.parquet", 0, 1000)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n := e.Count(table); n != 1000 {
		t.Fatalf("after file A: %d rows, want 1000", n)
	}
	e.WriteIDs("b.parquet", 10000, 500)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n := e.Count(table); n != 500 {
		t.Fatalf("after file B: %d rows, want exactly B's 500", n)
	}
	ids := e.IDs(table)
	for id := int64(10000); id < 10500; id++ {
		if !ids[id] {
			t.Fatalf("id %d of file B missing", id)
		}
	}
	if len(ids) != 500 {
		t.Fatalf("%d distinct ids, want 500 (none of file A)", len(ids))
	}
	snaps := e.Snapshots(table)
	if len(snaps) != 2 {
		t.Fatalf("snapshots = %+v, want 2", snaps)
	}
	if snaps[1].Operation != "overwrite" {
		t.Errorf("second snapshot operation = %q, want overwrite", snaps[1].Operation)
	}
	if snaps[1].ParentID == nil || *snaps[1].ParentID != snaps[0].SnapshotID {
		t.Errorf("second snapshot's parent = %v, want %d", snaps[1].ParentID, snaps[0].SnapshotID)
	}
	if snaps[1].Summary["floe.batch-id"] != "1" {
		t.Errorf("second snapshot floe.batch-id = %q, want 1", snaps[1].Summary["floe.batch-id"])
	}
	// Only B's data file is live.
	r := e.OK("table", "files", table, "--json")
	var files []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil {
		t.Fatalf("table files --json: %v\n%s", err, r.Stdout)
	}
	if len(files) != 1 {
		t.Errorf("live data files = %d, want 1:\n%s", len(files), r.Stdout)
	}

	// A re-run with nothing new leaves the table alone.
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n, s := e.Count(table), len(e.Snapshots(table)); n != 500 || s != 2 {
		t.Fatalf("after a re-run: %d rows, %d snapshots; want 500 and 2", n, s)
	}
}

// Complete mode replaces the table with each batch, so a rate limit would
// leave only the last slice of the input: floe refuses the combination.
func TestCompleteModeRefusesRateLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 1000)
	r := e.Stream("db.complete2", "--trigger", "available-now", "--mode", "complete", "--max-files-per-trigger", "1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "max-files-per-trigger") || !strings.Contains(r.Stderr, "complete") {
		t.Fatalf("want exit 2 naming the conflict, got %s", r)
	}
	if r := e.Run("scan", "db.complete2", "--count"); r.Code == 0 {
		t.Fatalf("a table was written: %s", r.Stdout)
	}
}

// The Hadoop-directory catalog (--catalog-type hadoop) runs the article
// scenario: three files, one snapshot; a re-run adds nothing; a fourth file
// makes a second snapshot. The table is a directory with a version hint.
func TestHadoopCatalog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hadoop := []string{"--catalog-type", "hadoop"}
	stream := func() {
		e.T.Helper()
		e.OK(append([]string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.stream", "--checkpoint", e.Ckpt, "--trigger", "available-now"}, hadoop...)...)
	}
	count := func() int64 {
		t.Helper()
		r := e.OK(append([]string{"scan", "db.stream", "--count"}, hadoop...)...)
		n, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
		if err != nil {
			t.Fatalf("scan --count printed %q", r.Stdout)
		}
		return n
	}
	snapshots := func() []fixture.Snapshot {
		t.Helper()
		r := e.OK(append([]string{"table", "snapshots", "db.stream", "--json"}, hadoop...)...)
		var out []fixture.Snapshot
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("snapshots --json: %v\n%s", err, r.Stdout)
		}
		return out
	}

	for i := int64(0); i < 3; i++ {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), i*1000, 1000)
	}
	stream()
	snaps := snapshots()
	if n := count(); n != 3000 || len(snaps) != 1 || snaps[0].Operation != "append" {
		t.Fatalf("after the first run: %d rows, snapshots %+v; want 3000 and one append", n, snaps)
	}
	if snaps[0].Summary["floe.query-id"] == "" || snaps[0].Summary["floe.batch-id"] != "0" {
		t.Fatalf("summary lacks floe.query-id/floe.batch-id: %v", snaps[0].Summary)
	}
	stream()
	if n, s := count(), len(snapshots()); n != 3000 || s != 1 {
		t.Fatalf("after a re-run: %d rows, %d snapshots; want 3000 and 1", n, s)
	}
	e.WriteIDs("part-3.parquet", 3000, 1000)
	stream()
	if n, s := count(), len(snapshots()); n != 4000 || s != 2 {
		t.Fatalf("after a fourth file: %d rows, %d snapshots; want 4000 and 2", n, s)
	}
	r := e.OK(append([]string{"scan", "db.stream", "--output-format", "csv"}, hadoop...)...)
	if lines := strings.Count(strings.TrimSpace(r.Stdout), "\n"); lines != 4000 {
		t.Fatalf("scan printed %d rows, want 4000", lines)
	}

	// The table is a Hadoop table directory: <warehouse>/db/stream with
	// metadata/version-hint.text naming the current metadata version.
	var d struct {
		Location         string `json:"location"`
		MetadataLocation string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(e.OK(append([]string{"table", "describe", "db.stream", "--json"}, hadoop...)...).Stdout), &d); err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimPrefix(d.Location, "file://")
	if !strings.HasPrefix(dir, e.Warehouse+string(filepath.Separator)) {
		t.Errorf("table location %s is not under the warehouse %s", d.Location, e.Warehouse)
	}
	hint, err := os.ReadFile(filepath.Join(dir, "metadata", "version-hint.text"))
	if err != nil {
		t.Fatalf("no version hint: %v", err)
	}
	v := strings.TrimSpace(string(hint))
	if _, err := strconv.Atoi(v); err != nil || !strings.Contains(filepath.Base(d.MetadataLocation), v) {
		t.Errorf("version-hint.text = %q, current metadata %s", hint, d.MetadataLocation)
	}
	// No SQL catalog was involved.
	if _, err := os.Stat(filepath.Join(e.Warehouse, "catalog.db")); err == nil {
		t.Errorf("catalog.db exists: a command used the SQL catalog")
	}
}

// The table format collects rows before it aligns them: each value it
// keeps must be its own copy, since the scan reuses a record's memory once
// the record is released (the Makefile's test run poisons freed memory).
func TestFormatScanTableKeepsValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 200, nil)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.regions", "--checkpoint", e.Ckpt)
	lines := strings.Split(strings.TrimSpace(e.OK("scan", "db.regions").Stdout), "\n")
	rows := 0
	for _, l := range lines[2:] {
		cells := strings.Split(l, " | ")
		if len(cells) < 2 {
			continue // the "(N rows)" footer
		}
		id, err := strconv.ParseInt(strings.TrimSpace(cells[0]), 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		if got, want := strings.TrimSpace(cells[1]), regions[id%int64(len(regions))]; got != want {
			t.Fatalf("row %d prints region %q, want %q", id, got, want)
		}
		rows++
	}
	if rows != 200 {
		t.Fatalf("%d rows printed, want 200:\n%s", rows, strings.Join(lines, "\n"))
	}
}
