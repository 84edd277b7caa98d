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
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt)
	other := filepath.Join(e.Dir, "ckpt-2")
	r := e.Run("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", other)
	if r.Code != 2 || !strings.Contains(r.Stderr, "duplicate rows") || !strings.Contains(r.Stderr, "--allow-new-query") {
		t.Fatalf("want a refusal naming the duplication risk and --allow-new-query, got %s", r)
	}
	if n := e.Count("db.t"); n != 100 {
		t.Fatalf("rows after refusal = %d, want 100", n)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", other, "--allow-new-query")
	if n := e.Count("db.t"); n != 200 {
		t.Fatalf("rows with --allow-new-query = %d, want 200 (a deliberate second copy)", n)
	}
}

// A checkpoint belongs to one sink: pointing it at another table is refused.
func TestCheckpointBelongsToOneSink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.one", "--checkpoint", e.Ckpt)
	r := e.Run("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.two", "--checkpoint", e.Ckpt)
	if r.Code == 0 || !strings.Contains(r.Stderr, "belongs to query") || !strings.Contains(r.Stderr, "db.one") {
		t.Fatalf("want a refusal naming the checkpoint's sink, got %s", r)
	}
}

// --progress=json prints one StreamingQueryProgress-shaped record per batch.
func TestProgressJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 1000)
	e.WriteIDs("b.parquet", 1000, 500)
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.p", "--checkpoint", e.Ckpt,
		"--max-files-per-trigger", "1", "--progress=json")
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.Stderr))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stderr line is not JSON: %q", sc.Text())
		}
		recs = append(recs, m)
	}
	if len(recs) != 2 {
		t.Fatalf("want 2 progress records, got %d:\n%s", len(recs), r.Stderr)
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
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.c", "--checkpoint", e.Ckpt)
	e.WriteIDs("a.parquet", 100, 300)
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.c", "--checkpoint", e.Ckpt)
	if !strings.Contains(r.Stderr, "changed after it was ingested") || !strings.Contains(r.Stderr, "a.parquet") {
		t.Fatalf("want a warning naming the changed file, got %s", r)
	}
	if n := e.Count("db.c"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}

// clean-source moves or deletes files only once their batch committed.
func TestCleanSource(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"archive", "delete"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.WriteIDs("a.parquet", 0, 100)
			e.WriteIDs("b.parquet", 100, 100)
			archive := filepath.Join(e.Dir, "archive")
			args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.cs", "--checkpoint", e.Ckpt, "--clean-source", mode}
			if mode == "archive" {
				args = append(args, "--source-archive-dir", archive)
			}
			e.OK(args...)
			if n := e.Count("db.cs"); n != 200 {
				t.Fatalf("rows = %d, want 200", n)
			}
			left, _ := os.ReadDir(e.Landing)
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
	t.Parallel()
	e := newEnv(t)
	old := time.Now().Add(-time.Hour)
	for i := int64(0); i < 4; i++ {
		name := fmt.Sprintf("f%d.parquet", i)
		e.WriteIDs(name, i*100, 100)
		mt := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(e.Landing, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.Landing, "notes.txt"), []byte("not data"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.sel", "--checkpoint", e.Ckpt,
		"--path-glob-filter", "*.parquet", "--latest-first", "--trigger", "once", "--max-files-per-trigger", "1", "--progress=json")
	var p struct {
		NumInputRows int64 `json:"numInputRows"`
	}
	_ = json.Unmarshal([]byte(strings.SplitN(r.Stderr, "\n", 2)[0]), &p)
	// once ignores rate limits: every parquet file, notes.txt filtered out.
	if n := e.Count("db.sel"); n != 400 || p.NumInputRows != 400 {
		t.Fatalf("once: %d rows (%d in progress), want 400", n, p.NumInputRows)
	}

	e2 := newEnv(t)
	for i := int64(0); i < 3; i++ {
		name := fmt.Sprintf("f%d.parquet", i)
		e2.WriteIDs(name, i*100, 100)
		mt := old.Add(time.Duration(i) * time.Minute)
		_ = os.Chtimes(filepath.Join(e2.Landing, name), mt, mt)
	}
	e2.OK("stream", "--source", e2.Landing, "--format", "parquet", "--table", "db.lf", "--checkpoint", e2.Ckpt,
		"--latest-first", "--max-files-per-trigger", "1")
	snaps := e2.Snapshots("db.lf")
	if len(snaps) != 3 {
		t.Fatalf("latest-first with 1 file per trigger: %d snapshots, want 3", len(snaps))
	}
	// The first batch's source log entry names the file it took.
	var first []struct{ Path string }
	data, err := os.ReadFile(filepath.Join(e2.Ckpt, "sources", "0", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &first); err != nil || len(first) != 1 || filepath.Base(first[0].Path) != "f2.parquet" {
		t.Fatalf("latest-first: first batch took %s, want f2.parquet (the newest)", data)
	}

	e3 := newEnv(t)
	e3.WriteIDs("young.parquet", 0, 100)
	r = e3.OK("stream", "--source", e3.Landing, "--format", "parquet", "--table", "db.young", "--checkpoint", e3.Ckpt, "--min-file-age", "1h")
	if r := e3.Run("scan", "db.young", "--count"); r.Code == 0 && strings.TrimSpace(r.Stdout) != "0" {
		t.Fatalf("a file younger than min-file-age was ingested: %s", r.Stdout)
	}
}

// Without --create-table a missing table is an error that says how to fix
// it, and nothing is recorded as done.
func TestCreateTableOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	r := e.Stream("db.absent", "--create-table=false")
	if r.Code != 1 || !strings.Contains(r.Stderr, "db.absent does not exist") || !strings.Contains(r.Stderr, "create-table") {
		t.Fatalf("want a missing-table error naming create-table, got %s", r)
	}
	if _, err := os.Stat(filepath.Join(e.Ckpt, "commits")); !os.IsNotExist(err) {
		t.Fatalf("a commits log exists after the failed run: %v", err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.absent", "--checkpoint", e.Ckpt)
	if n := e.Count("db.absent"); n != 10 {
		t.Fatalf("rows after creating the table = %d, want 10", n)
	}
}

// max-file-age ignores files older than the window, measured from the
// newest file already seen; the first batch considers every file.
func TestMaxFileAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	e.WriteIDs("new.parquet", 0, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.age", "--checkpoint", e.Ckpt, "--max-file-age", "1h")
	e.WriteIDs("stale.parquet", 10, 10)
	stale := now.Add(-3 * time.Hour)
	if err := os.Chtimes(filepath.Join(e.Landing, "stale.parquet"), stale, stale); err != nil {
		t.Fatal(err)
	}
	e.WriteIDs("fresh.parquet", 20, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.age", "--checkpoint", e.Ckpt, "--max-file-age", "1h")
	if n := e.Count("db.age"); n != 20 {
		t.Fatalf("rows = %d, want 20 (the 3-hour-old file ignored)", n)
	}
}

// A malformed -p is refused without echoing it: it may hold a secret.
func TestMalformedPropertyIsNotEchoed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Run("scan", "db.t", "--count", "-p", "s3.secret-access-key:hunter2-secret")
	if r.Code != 2 || !strings.Contains(r.Stderr, "key=value") || strings.Contains(r.Stdout+r.Stderr, "hunter2") {
		t.Fatalf("want exit 2 without the value, got %s", r)
	}
}

// A batch that started and did not finish is re-run as it was planned: a
// changed output mode waits until it is done, and a checkpoint that lost its
// offsets log is refused rather than read from the start again.
func TestPendingBatchKeepsItsPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.pend", "--checkpoint", e.Ckpt)
	// As if the run had stopped between the table commit and commits/0.
	if err := os.Remove(filepath.Join(e.Ckpt, "commits", "0")); err != nil {
		t.Fatal(err)
	}
	r := e.Stream("db.pend", "--mode", "complete")
	if r.Code != 2 || !strings.Contains(r.Stderr, "planned in append mode") {
		t.Fatalf("a changed mode with a pending batch: %s", r)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.pend", "--checkpoint", e.Ckpt)
	if n, s := e.Count("db.pend"), len(e.Snapshots("db.pend")); n != 100 || s != 1 {
		t.Fatalf("after finishing the pending batch: %d rows, %d snapshots; want 100 and 1", n, s)
	}
	if err := os.RemoveAll(filepath.Join(e.Ckpt, "offsets")); err != nil {
		t.Fatal(err)
	}
	if r := e.Stream("db.pend"); r.Code != 2 || !strings.Contains(r.Stderr, "offsets entries were deleted") {
		t.Fatalf("a checkpoint without its offsets log: %s", r)
	}
	if n := e.Count("db.pend"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}

// A misspelt catalog property would be passed on and ignored, sending writes
// to AWS instead of the endpoint meant: refused, naming the one meant, while
// the properties the catalogs read and the open families are taken.
func TestUnknownCatalogPropertyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	for _, args := range [][]string{
		e.StreamArgs("db.p", "-p", "s3.endpiont=http://localhost:9000"),
		{"scan", "db.p", "--count", "-p", "s3.endpiont=http://localhost:9000"},
	} {
		r := e.Run(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, `"s3.endpiont"`) || !strings.Contains(r.Stderr, `"s3.endpoint"`) {
			t.Fatalf("%v: want exit 2 naming s3.endpiont and s3.endpoint, got %s", args[0], r)
		}
	}
	if _, err := os.Stat(e.Ckpt); err == nil {
		t.Fatalf("a refused run wrote checkpoint %s", e.Ckpt)
	}
	e.OK(e.StreamArgs("db.p", "-p", "s3.region=us-east-1", "-p", "header.X-Tenant=a", "-p", "adls.sas-token.acct=x",
		"-p", "client.region=us-east-1", "-p", "table-default.write.parquet.compression-codec=zstd")...)
	if n := e.Count("db.p"); n != 10 {
		t.Fatalf("rows = %d, want 10", n)
	}
}

// A read option given to a landing directory is refused naming the flag and
// its value and listing the write options -o takes there, which work.
func TestReadOptionOnLandingIsNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	r := e.Run(e.StreamArgs("db.o", "-o", "stream-from-timestamp=1700000000000")...)
	for _, want := range []string{"-o stream-from-timestamp=1700000000000", "snapshot-property.KEY=VALUE", "branch=NAME"} {
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Fatalf("want exit 2 naming %q, got %s", want, r)
		}
	}
	e.OK(e.StreamArgs("db.o", "-o", "branch=audit", "-o", "snapshot-property.job=nightly")...)
	if n := e.Count("db.o"); n != 0 {
		t.Fatalf("main holds %d rows, want 0: -o branch=audit commits to the branch", n)
	}
}
