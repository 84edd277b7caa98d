package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A second checkpoint over the same source and table would ingest every file
// again: refused, unless --allow-new-query.
func TestNewQueryOnSameSourceIsRefused(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 100)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.ckpt)
	other := filepath.Join(e.dir, "ckpt-2")
	r := e.run("stream", "--source", e.landing, "--format", "parquet", "--table", "db.t", "--checkpoint", other)
	if r.code != 1 || !strings.Contains(r.stderr, "duplicate rows") || !strings.Contains(r.stderr, "--allow-new-query") {
		t.Fatalf("want a refusal naming the duplication risk and --allow-new-query, got %s", r)
	}
	if n := e.count("db.t"); n != 100 {
		t.Fatalf("rows after refusal = %d, want 100", n)
	}
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.t", "--checkpoint", other, "--allow-new-query")
	if n := e.count("db.t"); n != 200 {
		t.Fatalf("rows with --allow-new-query = %d, want 200 (a deliberate second copy)", n)
	}
}

// A checkpoint belongs to one sink: pointing it at another table is refused.
func TestCheckpointBelongsToOneSink(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 100)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.one", "--checkpoint", e.ckpt)
	r := e.run("stream", "--source", e.landing, "--format", "parquet", "--table", "db.two", "--checkpoint", e.ckpt)
	if r.code == 0 || !strings.Contains(r.stderr, "belongs to query") || !strings.Contains(r.stderr, "db.one") {
		t.Fatalf("want a refusal naming the checkpoint's sink, got %s", r)
	}
}

// --progress=json prints one StreamingQueryProgress-shaped record per batch.
func TestProgressJSON(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 1000)
	e.writeIDs("b.parquet", 1000, 500)
	r := e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.p", "--checkpoint", e.ckpt,
		"--max-files-per-trigger", "1", "--progress=json")
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stderr line is not JSON: %q", sc.Text())
		}
		recs = append(recs, m)
	}
	if len(recs) != 2 {
		t.Fatalf("want 2 progress records, got %d:\n%s", len(recs), r.stderr)
	}
	for i, m := range recs {
		for _, k := range []string{"id", "runId", "batchId", "numInputRows", "inputRowsPerSecond", "processedRowsPerSecond", "durationMs", "sources", "sink"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("record %d lacks %q: %v", i, k, m)
			}
		}
		d := m["durationMs"].(map[string]any)
		for _, k := range []string{"latestOffset", "addBatch", "commit", "walCommit", "triggerExecution"} {
			if _, ok := d[k]; !ok {
				t.Fatalf("durationMs lacks %q: %v", k, d)
			}
		}
		src := m["sources"].([]any)[0].(map[string]any)
		for _, k := range []string{"description", "startOffset", "endOffset", "numInputRows"} {
			if _, ok := src[k]; !ok {
				t.Fatalf("sources[0] lacks %q: %v", k, src)
			}
		}
		sink := m["sink"].(map[string]any)
		if sink["snapshotId"] == nil || sink["numOutputRows"] == nil || sink["description"] == nil {
			t.Fatalf("sink lacks fields: %v", sink)
		}
		if int(m["batchId"].(float64)) != i {
			t.Fatalf("record %d has batchId %v", i, m["batchId"])
		}
	}
	last, ok := recs[1]["backlog"].(map[string]any)
	if !ok || last["totalFiles"].(float64) != 2 || last["remainingFiles"].(float64) != 0 {
		t.Fatalf("the last record's backlog = %v, want 2 files in all and none left", recs[1]["backlog"])
	}
	if recs[0]["numInputRows"].(float64) != 1000 || recs[1]["numInputRows"].(float64) != 500 {
		t.Fatalf("numInputRows = %v, %v; want 1000, 500 (oldest file first)", recs[0]["numInputRows"], recs[1]["numInputRows"])
	}
}

// A file changed after it was ingested is reported, not re-read.
func TestChangedFileIsReportedNotReread(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 100)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.c", "--checkpoint", e.ckpt)
	e.writeIDs("a.parquet", 100, 300)
	r := e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.c", "--checkpoint", e.ckpt)
	if !strings.Contains(r.stderr, "changed after it was ingested") || !strings.Contains(r.stderr, "a.parquet") {
		t.Fatalf("want a warning naming the changed file, got %s", r)
	}
	if n := e.count("db.c"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}

// clean-source moves or deletes files only once their batch committed.
func TestCleanSource(t *testing.T) {
	for _, mode := range []string{"archive", "delete"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			e.writeIDs("a.parquet", 0, 100)
			e.writeIDs("b.parquet", 100, 100)
			archive := filepath.Join(e.dir, "archive")
			args := []string{"stream", "--source", e.landing, "--format", "parquet", "--table", "db.cs", "--checkpoint", e.ckpt, "--clean-source", mode}
			if mode == "archive" {
				args = append(args, "--source-archive-dir", archive)
			}
			e.ok(args...)
			if n := e.count("db.cs"); n != 200 {
				t.Fatalf("rows = %d, want 200", n)
			}
			left, _ := os.ReadDir(e.landing)
			if len(left) != 0 {
				t.Fatalf("landing directory still holds %d files", len(left))
			}
			if mode == "archive" {
				for _, f := range []string{"a.parquet", "b.parquet"} {
					if _, err := os.Stat(filepath.Join(archive, f)); err != nil {
						t.Fatalf("archived file missing: %v", err)
					}
				}
			}
		})
	}
}

// Rate limits and file selection, with Spark's meaning.
func TestFileSelectionOptions(t *testing.T) {
	e := newEnv(t)
	old := time.Now().Add(-time.Hour)
	for i := int64(0); i < 4; i++ {
		name := fmt.Sprintf("f%d.parquet", i)
		e.writeIDs(name, i*100, 100)
		mt := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(e.landing, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.landing, "notes.txt"), []byte("not data"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.sel", "--checkpoint", e.ckpt,
		"--path-glob-filter", "*.parquet", "--latest-first", "--trigger", "once", "--max-files-per-trigger", "1", "--progress=json")
	var p struct {
		NumInputRows int64 `json:"numInputRows"`
	}
	_ = json.Unmarshal([]byte(strings.SplitN(r.stderr, "\n", 2)[0]), &p)
	// once ignores rate limits: every parquet file, notes.txt filtered out.
	if n := e.count("db.sel"); n != 400 || p.NumInputRows != 400 {
		t.Fatalf("once: %d rows (%d in progress), want 400", n, p.NumInputRows)
	}

	e2 := newEnv(t)
	for i := int64(0); i < 3; i++ {
		name := fmt.Sprintf("f%d.parquet", i)
		e2.writeIDs(name, i*100, 100)
		mt := old.Add(time.Duration(i) * time.Minute)
		_ = os.Chtimes(filepath.Join(e2.landing, name), mt, mt)
	}
	e2.ok("stream", "--source", e2.landing, "--format", "parquet", "--table", "db.lf", "--checkpoint", e2.ckpt,
		"--latest-first", "--max-files-per-trigger", "1")
	snaps := e2.snapshots("db.lf")
	if len(snaps) != 3 {
		t.Fatalf("latest-first with 1 file per trigger: %d snapshots, want 3", len(snaps))
	}
	// The first batch's source log entry names the file it took.
	var first []struct{ Path string }
	data, err := os.ReadFile(filepath.Join(e2.ckpt, "sources", "0", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &first); err != nil || len(first) != 1 || filepath.Base(first[0].Path) != "f2.parquet" {
		t.Fatalf("latest-first: first batch took %s, want f2.parquet (the newest)", data)
	}

	e3 := newEnv(t)
	e3.writeIDs("young.parquet", 0, 100)
	r = e3.ok("stream", "--source", e3.landing, "--format", "parquet", "--table", "db.young", "--checkpoint", e3.ckpt, "--min-file-age", "1h")
	if r := e3.run("scan", "db.young", "--count"); r.code == 0 && strings.TrimSpace(r.stdout) != "0" {
		t.Fatalf("a file younger than min-file-age was ingested: %s", r.stdout)
	}
}

// Without --create-table a missing table is an error that says how to fix
// it, and nothing is recorded as done.
func TestCreateTableOff(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 10)
	r := e.stream("db.absent", "--create-table=false")
	if r.code != 1 || !strings.Contains(r.stderr, "db.absent does not exist") || !strings.Contains(r.stderr, "create-table") {
		t.Fatalf("want a missing-table error naming create-table, got %s", r)
	}
	if _, err := os.Stat(filepath.Join(e.ckpt, "commits")); !os.IsNotExist(err) {
		t.Fatalf("a commits log exists after the failed run: %v", err)
	}
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.absent", "--checkpoint", e.ckpt)
	if n := e.count("db.absent"); n != 10 {
		t.Fatalf("rows after creating the table = %d, want 10", n)
	}
}

// max-file-age ignores files older than the window, measured from the
// newest file already seen; the first batch considers every file.
func TestMaxFileAge(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	e.writeIDs("new.parquet", 0, 10)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.age", "--checkpoint", e.ckpt, "--max-file-age", "1h")
	e.writeIDs("stale.parquet", 10, 10)
	stale := now.Add(-3 * time.Hour)
	if err := os.Chtimes(filepath.Join(e.landing, "stale.parquet"), stale, stale); err != nil {
		t.Fatal(err)
	}
	e.writeIDs("fresh.parquet", 20, 10)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.age", "--checkpoint", e.ckpt, "--max-file-age", "1h")
	if n := e.count("db.age"); n != 20 {
		t.Fatalf("rows = %d, want 20 (the 3-hour-old file ignored)", n)
	}
}

// A malformed -p is refused without echoing it: it may hold a secret.
func TestMalformedPropertyIsNotEchoed(t *testing.T) {
	e := newEnv(t)
	r := e.run("scan", "db.t", "--count", "-p", "s3.secret-access-key:hunter2-secret")
	if r.code != 2 || !strings.Contains(r.stderr, "key=value") || strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Fatalf("want exit 2 without the value, got %s", r)
	}
}

// A batch that started and did not finish is re-run as it was planned: a
// changed output mode waits until it is done, and a checkpoint that lost its
// offsets log is refused rather than read from the start again.
func TestPendingBatchKeepsItsPlan(t *testing.T) {
	e := newEnv(t)
	e.writeIDs("a.parquet", 0, 100)
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.pend", "--checkpoint", e.ckpt)
	// As if the run had stopped between the table commit and commits/0.
	if err := os.Remove(filepath.Join(e.ckpt, "commits", "0")); err != nil {
		t.Fatal(err)
	}
	r := e.stream("db.pend", "--mode", "complete")
	if r.code != 1 || !strings.Contains(r.stderr, "planned in append mode") {
		t.Fatalf("a changed mode with a pending batch: %s", r)
	}
	e.ok("stream", "--source", e.landing, "--format", "parquet", "--table", "db.pend", "--checkpoint", e.ckpt)
	if n, s := e.count("db.pend"), len(e.snapshots("db.pend")); n != 100 || s != 1 {
		t.Fatalf("after finishing the pending batch: %d rows, %d snapshots; want 100 and 1", n, s)
	}
	if err := os.RemoveAll(filepath.Join(e.ckpt, "offsets")); err != nil {
		t.Fatal(err)
	}
	if r := e.stream("db.pend"); r.code != 1 || !strings.Contains(r.stderr, "no offsets log") {
		t.Fatalf("a checkpoint without its offsets log: %s", r)
	}
	if n := e.count("db.pend"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}
