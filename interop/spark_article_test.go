package interop_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// floe reads what Spark writes: the reference article's scenario run by
// Spark Structured Streaming itself (availableNow over flat landing files,
// a re-run, a fourth file), then Spark's row-level and maintenance
// operations (MERGE INTO and DELETE in merge-on-read mode, which write
// position deletes on v2 and deletion vectors on v3; schema and partition
// evolution; rewrite_data_files; expire_snapshots), each step in
// engines/article.py. After every step floe's scan holds Spark's rows,
// `floe table health` counts what Spark's metadata tables count, and
// `floe stream --source-table` copies the appends Spark streamed.
//
// The default suite runs it on format v3 (deletion vectors); -spark-all
// adds v2 (position deletes).
func TestSparkArticleScenario(t *testing.T) {
	versions := []string{"3"}
	if *sparkAll {
		versions = append(versions, "2")
	}
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			sparkArticle(t, v)
		})
	}
}

// sparkCounts is what article.py reports after a step, from Spark's own
// table and metadata tables.
type sparkCounts struct {
	Rows        int64 `json:"rows"`
	Snapshots   int   `json:"snapshots"`
	DataFiles   int   `json:"data_files"`
	DeleteFiles int   `json:"delete_files"`
}

func sparkArticle(t *testing.T, version string) {
	e := newEnv(t)
	s := needSpark(t)
	// Spark creates the warehouse's catalog database; floe opens it after.
	if err := os.MkdirAll(e.Warehouse, 0o755); err != nil {
		t.Fatal(err)
	}
	cat := e.sparkCatalog(s)
	src := filepath.Join(e.Dir, "src")
	args := map[string]any{"table": "db.stream", "src": src, "checkpoint": filepath.Join(e.Dir, "spark-ckpt"), "version": version}
	step := func(name string, extra map[string]any) sparkCounts {
		t.Helper()
		a := map[string]any{"step": name}
		for k, v := range args {
			a[k] = v
		}
		for k, v := range extra {
			a[k] = v
		}
		var c sparkCounts
		cat.script(t, "article.py", a, &c)
		return c
	}
	// agree checks floe's scan and health against Spark after a step.
	agree := func(what string, c sparkCounts) {
		t.Helper()
		ti := e.describe("db.stream")
		got := e.sparkCompare(cat, sparkTable("db.stream"), "db.stream", ti)
		if got.Rows != c.Rows {
			t.Fatalf("%s: Spark's count is %d, its rows %d", what, c.Rows, got.Rows)
		}
		h := e.health("db.stream")
		if h.Snapshots != c.Snapshots || h.DataFiles != c.DataFiles || h.DeleteFiles != c.DeleteFiles {
			t.Fatalf("%s: floe table health counts %d snapshots, %d data files, %d delete files; Spark's metadata tables %d, %d, %d",
				what, h.Snapshots, h.DataFiles, h.DeleteFiles, c.Snapshots, c.DataFiles, c.DeleteFiles)
		}
		t.Logf("%s: %d rows, %d snapshots, %d data files, %d delete files — floe agrees with Spark", what, c.Rows, c.Snapshots, c.DataFiles, c.DeleteFiles)
	}

	step("create", nil)
	for n := range 3 {
		step("stage", map[string]any{"file": n})
	}
	c := step("stream", nil)
	if c.Rows != 3000 || c.Snapshots != 1 {
		t.Fatalf("Spark's availableNow over three files: %d rows in %d snapshots, the article's 3000 in 1", c.Rows, c.Snapshots)
	}
	agree("three files, one availableNow run", c)
	copyArgs := []string{"stream", "--source-table", "db.stream", "--table", "db.copy", "--checkpoint", filepath.Join(e.Dir, "copy-ckpt")}
	e.OK(copyArgs...)
	e.sameInSpark(cat, "db.copy", "db.stream")

	if c = step("stream", nil); c.Rows != 3000 || c.Snapshots != 1 {
		t.Fatalf("Spark's re-run without new input: %d rows in %d snapshots, want 3000 in 1", c.Rows, c.Snapshots)
	}
	agree("re-run, no new input", c)
	step("stage", map[string]any{"file": 3})
	if c = step("stream", nil); c.Rows != 4000 || c.Snapshots != 2 {
		t.Fatalf("Spark's run after a fourth file: %d rows in %d snapshots, want 4000 in 2", c.Rows, c.Snapshots)
	}
	agree("a fourth file", c)
	e.OK(copyArgs...)
	e.sameInSpark(cat, "db.copy", "db.stream")

	agree("MERGE INTO", step("merge", map[string]any{"seed": 1}))
	// Spark's streaming read fails on a snapshot that rewrote rows unless
	// told to skip it; floe's does the same, naming the option.
	r := e.Run(copyArgs...)
	if r.Code == 0 || !strings.Contains(r.Stderr, "streaming-skip-overwrite-snapshots") {
		t.Fatalf("floe stream --source-table past Spark's MERGE: exit %d, want a failure naming streaming-skip-overwrite-snapshots\n%s", r.Code, r.Stderr)
	}
	agree("a second MERGE INTO", step("merge", map[string]any{"seed": 2}))
	agree("DELETE", step("delete", nil))
	agree("schema and partition evolution", step("evolve", nil))
	before := step("rewrite", nil)
	agree("rewrite_data_files", before)
	c = step("expire", nil)
	if c.Snapshots >= before.Snapshots {
		t.Fatalf("expire_snapshots left %d of %d snapshots in Spark's view", c.Snapshots, before.Snapshots)
	}
	agree("expire_snapshots", c)
}

// tableHealth is the part of `floe table health --json` the tests read.
type tableHealth struct {
	Snapshots   int `json:"snapshots"`
	DataFiles   int `json:"data_files"`
	DeleteFiles int `json:"delete_files"`
}

func (e *env) health(table string) tableHealth {
	e.T.Helper()
	r := e.OK("table", "health", table, "--json", "--plan-runs", "0")
	var h tableHealth
	if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
		e.T.Fatalf("table health --json: %v\n%s", err, r.Stdout)
	}
	return h
}

// sameInSpark checks that Spark reads the same rows in two tables.
func (e *env) sameInSpark(cat *sparkCatalog, a, b string) {
	e.T.Helper()
	fields := e.describe(b).fields
	stats := func(table string) Stats {
		rows := cat.rows(e.T, "SELECT "+selectList(fields)+" FROM "+sparkTable(table))
		st, err := statsFromJSONL(fields, sparkJSONL(e.T, rows), nil)
		if err != nil {
			e.T.Fatalf("spark rows of %s: %v", table, err)
		}
		return st
	}
	want := stats(b)
	if err := compareStats(want, map[string]Stats{"spark": stats(a)}, "spark"); err != nil {
		e.T.Fatalf("%s against %s: %v", a, b, err)
	}
	e.T.Logf("%s holds %s's %d rows, as Spark reads both", a, b, want.Rows)
}
