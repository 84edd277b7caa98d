package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
)

// contents counts a table's rows and sums a hash of each (its JSON line),
// a checksum that does not depend on the order of rows or files.
func (e *env) contents(name string) (rows int64, sum uint64) {
	e.T.Helper()
	r := e.OK("scan", name, "--output-format", "jsonl")
	for line := range strings.Lines(r.Stdout) {
		h := fnv.New64a()
		h.Write([]byte(strings.TrimSpace(line)))
		sum += h.Sum64()
		rows++
	}
	return rows, sum
}

func (e *env) sameContents(a, b string) {
	e.T.Helper()
	na, sa := e.contents(a)
	nb, sb := e.contents(b)
	if na != nb || sa != sb {
		e.T.Fatalf("%s has %d rows (checksum %x), %s has %d rows (checksum %x)", a, na, sa, b, nb, sb)
	}
}

func (e *env) catalog(ctx context.Context) catalog.Catalog {
	e.T.Helper()
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: e.Warehouse})
	if err != nil {
		e.T.Fatal(err)
	}
	return cat
}

func (e *env) loadTable(ctx context.Context, cat catalog.Catalog, name string) *table.Table {
	e.T.Helper()
	ident, _ := floe.ParseIdent(name)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		e.T.Fatal(err)
	}
	return tbl
}

// batchRows parses --progress=json output into each batch's input rows.
func batchRows(t *testing.T, stderr string) []int64 {
	t.Helper()
	var out []int64
	for line := range strings.Lines(stderr) {
		var p struct {
			BatchID      *int64 `json:"batchId"`
			NumInputRows int64  `json:"numInputRows"`
		}
		if json.Unmarshal([]byte(line), &p) == nil && p.BatchID != nil {
			out = append(out, p.NumInputRows)
		}
	}
	return out
}

// TestStreamIcebergToIceberg: a pipeline appends to table A from a landing
// directory while a second one streams A into B, and A is compacted in
// the middle. After both stop, B holds exactly A's rows.
func TestStreamIcebergToIceberg(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 24, 100
	e.WriteIDs("f-000.parquet", 0, rows)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.a", "--checkpoint", e.Ckpt+"-a", "--trigger", "once")

	var errA, errB syncBuffer
	// The writer's own maintenance stays off: the one replace snapshot is
	// the test's compaction, and no expiry runs ahead of the reader.
	writer := e.startFloe(&errA, "stream", "--source", e.Landing, "--format", "parquet", "--table", "db.a",
		"--checkpoint", e.Ckpt+"-a", "--trigger", "100ms", "--max-files-per-trigger", "1", "--maintenance=false")
	defer writer.Process.Kill()
	reader := e.startFloe(&errB, "stream", "--source-table", "db.a", "--table", "db.b",
		"--checkpoint", e.Ckpt+"-b", "--trigger", "150ms", "-o", "streaming-max-files-per-micro-batch=3", "--progress=json")
	defer reader.Process.Kill()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("writer's stderr:\n%s\nreader's stderr:\n%s", errA.String(), errB.String())
		}
	})

	ctx := context.Background()
	cat := e.catalog(ctx)
	compacted := false
	for i := int64(1); i < files; i++ {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*rows, rows)
		time.Sleep(60 * time.Millisecond)
		if i == files/2 {
			// The writer commits to A meanwhile: retry on conflict.
			fixture.WaitFor(t, 20*time.Second, "a compaction of table a", func() bool {
				tbl := e.loadTable(ctx, cat, "db.a")
				tasks, err := tbl.Scan().PlanFiles(ctx)
				if err != nil || len(tasks) < 2 {
					return false
				}
				_, err = tbl.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{Tasks: tasks}}, table.RewriteDataFilesOptions{})
				return err == nil
			})
			compacted = true
		}
	}
	fixture.WaitFor(t, 30*time.Second, "every file in table a", func() bool { return e.Count("db.a") == files*rows })
	if err := writer.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(writer.Wait()); code != 0 {
		t.Fatalf("writer exited %d", code)
	}
	fixture.WaitFor(t, 30*time.Second, "table b to catch up", func() bool { return e.Count("db.b") >= files*rows })
	if err := reader.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(reader.Wait()); code != 0 {
		t.Fatalf("reader exited %d", code)
	}
	if !compacted {
		t.Fatal("table a was not compacted")
	}
	ops := map[string]int{}
	for _, s := range e.Snapshots("db.a") {
		ops[s.Operation]++
	}
	if ops["replace"] != 1 {
		t.Fatalf("table a's snapshots by operation: %v, want one replace", ops)
	}
	e.sameContents("db.a", "db.b")
	if n := len(e.IDs("db.b")); n != files*rows {
		t.Fatalf("table b has %d distinct ids, want %d", n, files*rows)
	}
	for _, n := range batchRows(t, errB.String()) {
		if n > 3*rows {
			t.Fatalf("a batch of %d rows: more than 3 files", n)
		}
	}
}

func TestStreamSourceTableOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range int64(10) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*100, 100)
	}
	e.Stream("db.a", "--max-files-per-trigger", "1")

	t.Run("two files per batch", func(t *testing.T) {
		r := e.OK("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b",
			"-o", "streaming-max-files-per-micro-batch=2", "--progress=json")
		if got := batchRows(t, r.Stderr); fmt.Sprint(got) != "[200 200 200 200 200]" {
			t.Fatalf("batches %v, want 5 of 200", got)
		}
		e.sameContents("db.a", "db.b")
	})
	t.Run("fail on empty", func(t *testing.T) {
		args := []string{"stream", "--source-table", "db.a", "--table", "db.empty", "--checkpoint", e.Ckpt + "-empty", "--fail-on-empty"}
		e.OK(args...)
		r := e.Run(args...) // nothing was appended since
		if r.Code != 3 || !strings.Contains(r.Stderr, "no data file was appended to db.a") || strings.Contains(r.Stderr, "source.path") {
			t.Fatalf("no new appends with --fail-on-empty: %s\nwant exit 3 and a message about the table, not about a landing directory", r)
		}
	})
	t.Run("soft row limit", func(t *testing.T) {
		// The file crossing 150 rows is included; with 50, every file is
		// larger than the limit and a batch alone.
		for limit, want := range map[string]string{"150": "[200 200 200 200 200]", "50": "[100 100 100 100 100 100 100 100 100 100]"} {
			ck := e.Ckpt + "-rows" + limit
			r := e.OK("stream", "--source-table", "db.a", "--table", "db.rows"+limit, "--checkpoint", ck,
				"-o", "streaming-max-rows-per-micro-batch="+limit, "--progress=json")
			if got := fmt.Sprint(batchRows(t, r.Stderr)); got != want {
				t.Fatalf("row limit %s: batches %s, want %s", limit, got, want)
			}
			e.sameContents("db.a", "db.rows"+limit)
		}
	})
	t.Run("async planning", func(t *testing.T) {
		var got []string
		for _, async := range []string{"false", "true"} {
			r := e.OK("stream", "--source-table", "db.a", "--table", "db.async_"+async, "--checkpoint", e.Ckpt+"-async-"+async,
				"-o", "streaming-max-files-per-micro-batch=3", "-o", "async-micro-batch-planning-enabled="+async, "--progress=json")
			got = append(got, fmt.Sprint(batchRows(t, r.Stderr)))
			e.sameContents("db.a", "db.async_"+async)
		}
		if got[0] != got[1] || got[0] != "[300 300 300 100]" {
			t.Fatalf("batches without async planning %s, with %s; want both [300 300 300 100]", got[0], got[1])
		}
	})
	t.Run("filter and keep", func(t *testing.T) {
		e.OK("stream", "--source-table", "db.a", "--table", "db.c", "--checkpoint", e.Ckpt+"-c",
			"--filter", "id BETWEEN 250 AND 349", "--keep", "id")
		r := e.OK("scan", "db.c", "--output-format", "csv")
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if lines[0] != "id" || len(lines) != 101 {
			t.Fatalf("table c: header %q and %d rows, want id alone and 100 rows", lines[0], len(lines)-1)
		}
		if ids := e.IDs("db.c"); !ids[250] || !ids[349] || ids[249] || ids[350] {
			t.Fatalf("table c holds the wrong ids")
		}
	})
	t.Run("console", func(t *testing.T) {
		r := e.OK("stream", "--source-table", "db.a", "--sink", "console", "--checkpoint", e.Ckpt+"-console", "--filter", "id < 3")
		if got := strings.Count(r.Stdout, "\n"); got != 3 || !strings.Contains(r.Stdout, `"id":2`) {
			t.Fatalf("console printed:\n%s\nwant the 3 rows with id < 3", r.Stdout)
		}
	})
	t.Run("bad option", func(t *testing.T) {
		r := e.Run("stream", "--source-table", "db.a", "--table", "db.x", "--checkpoint", e.Ckpt+"-x", "-o", "streaming-max-file-per-micro-batch=2")
		if r.Code == 0 || !strings.Contains(r.Stderr, `did you mean "streaming-max-files-per-micro-batch"`) {
			t.Fatalf("misspelt option: %s", r)
		}
		r = e.Run("stream", "--source-table", "db.a", "--source", e.Landing, "--format", "parquet", "--table", "db.x", "--checkpoint", e.Ckpt+"-x")
		if r.Code == 0 || !strings.Contains(r.Stderr, "not both") {
			t.Fatalf("--source-table with --source: %s", r)
		}
		r = e.Run("stream", "--source-table", "db.nope", "--table", "db.x", "--checkpoint", e.Ckpt+"-nope")
		if r.Code == 0 || !strings.Contains(r.Stderr, "table db.nope does not exist") {
			t.Fatalf("missing source table: %s", r)
		}
		r = e.Run("stream", "--source-table", "db.a", "--table", "db.x", "--checkpoint", e.Ckpt+"-x", "--filter", "id >")
		if r.Code == 0 || !strings.Contains(r.Stderr, "^") {
			t.Fatalf("bad filter: %s", r)
		}
	})
}

func TestStreamSourceTableOverwriteAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("f-000.parquet", 0, 100)
	e.Stream("db.a")
	e.OK("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b")

	// A complete-mode write replaces a's rows: an overwrite snapshot.
	full := e.Dir + "/full"
	if err := fixture.WriteIDFile(full+"/all.parquet", 1000, 50); err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", full, "--format", "parquet", "--table", "db.a", "--checkpoint", e.Ckpt+"-full", "--mode", "complete")
	r := e.Run("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b")
	if r.Code == 0 || !strings.Contains(r.Stderr, "is an overwrite") || !strings.Contains(r.Stderr, "streaming-skip-overwrite-snapshots") {
		t.Fatalf("overwrite snapshot: %s\nwant an error naming the snapshot and the option", r)
	}
	e.OK("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b", "-o", "streaming-skip-overwrite-snapshots=true")
	if n := e.Count("db.b"); n != 100 {
		t.Fatalf("table b has %d rows after skipping the overwrite, want 100", n)
	}

	// Expire every snapshot but the newest two, the query's start among them.
	e.WriteIDs("f-001.parquet", 100, 100)
	e.Stream("db.a")
	e.WriteIDs("f-002.parquet", 200, 100)
	e.Stream("db.a")
	ctx := context.Background()
	cat := e.catalog(ctx)
	tx := e.loadTable(ctx, cat, "db.a").NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// iceberg-go's expiry keeps the query's tagged snapshot but not the
	// overwrite after it: the query cannot tell what it missed, and stops
	// unless told to go on.
	r = e.Run("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b", "-o", "streaming-skip-overwrite-snapshots=true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "were expired") || !strings.Contains(r.Stderr, "streaming-skip-expired-snapshots") {
		t.Fatalf("expired snapshots after the query's position: %s\nwant an error naming them and the option", r)
	}
	r = e.OK("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", e.Ckpt+"-b", "-o", "streaming-skip-overwrite-snapshots=true",
		"-o", "streaming-skip-expired-snapshots=true")
	if !strings.Contains(r.Stderr, "were expired") {
		t.Fatalf("no warning about the expired snapshots:\n%s", r.Stderr)
	}
	if n := e.Count("db.b"); n != 300 {
		t.Fatalf("table b has %d rows, want 300: its first 100 and the two appends after the expired snapshot", n)
	}
}

// TestStreamSourceTableTemplateKeep: --keep shapes the rows written, but a
// table template routes each row before keep, by a column keep leaves out.
func TestStreamSourceTableTemplateKeep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, nil)
	e.Stream("db.a")
	e.OK("stream", "--source-table", "db.a", "--table", "db.t_{region}", "--keep", "id", "--checkpoint", e.Ckpt+"-t")
	var total int64
	for _, reg := range regions {
		total += e.Count("db.t_" + reg)
		r := e.OK("scan", "db.t_"+reg, "--output-format", "csv", "--limit", "1")
		if header, _, _ := strings.Cut(r.Stdout, "\n"); header != "id" {
			t.Fatalf("table db.t_%s has columns %q, want id alone", reg, header)
		}
	}
	if total != 100 {
		t.Fatalf("the region tables hold %d rows, want 100", total)
	}
}
