package interop_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"

	"github.com/floe-io/floe/internal/canonical"
)

// A table floe writes with the Hadoop-directory catalog is found by icebird
// through metadata/version-hint.text alone: the checker is given only the
// table directory (--table-dir), so icebird resolves the current metadata
// file itself, and its stats and DuckDB's (on the metadata icebird
// resolved) must equal floe's. floe's catalog-less read of the same
// directory must agree too. A second snapshot moves the hint, and the
// checker must follow it; without the hint icebird finds nothing, which
// shows the hint is what it used.
func TestHadoopTableDirChecker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hadoop := []string{"--catalog-type", "hadoop"}
	for i := int64(0); i < 3; i++ {
		if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("part-%d.parquet", i)), i*1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	e.OK(e.StreamArgs("db.t", hadoop...)...)

	var ti tableInfo
	r := e.OK(append([]string{"table", "describe", "db.t", "--json"}, hadoop...)...)
	if err := json.Unmarshal([]byte(r.Stdout), &ti); err != nil {
		t.Fatalf("table describe --json: %v\n%s", err, r.Stdout)
	}
	st, err := canonical.ParseType(ti.Schema)
	if err != nil {
		t.Fatalf("table schema: %v", err)
	}
	dir := ti.Location
	if u, err := url.Parse(ti.Location); err == nil && u.Scheme == "file" {
		dir = u.Path
	}
	if !filepath.IsAbs(dir) || !strings.HasPrefix(dir, e.Warehouse+string(filepath.Separator)) {
		t.Fatalf("table location %s is not a directory under the warehouse %s", ti.Location, e.Warehouse)
	}
	hintPath := filepath.Join(dir, "metadata", "version-hint.text")

	// check compares floe's stats (through the catalog and catalog-less),
	// icebird's and DuckDB's for the table as it is now, and returns floe's.
	check := func(wantRows int64) Stats {
		t.Helper()
		hint, err := os.ReadFile(hintPath)
		if err != nil {
			t.Fatalf("the Hadoop table has no version hint: %v", err)
		}
		want, err := statsFromJSONL(st.Fields, []byte(e.OK(append([]string{"scan", "db.t", "--output-format", "jsonl"}, hadoop...)...).Stdout), nil)
		if err != nil {
			t.Fatalf("floe scan jsonl: %v", err)
		}
		if want.Rows != wantRows {
			t.Fatalf("floe scan: %d rows, want %d", want.Rows, wantRows)
		}
		// Catalog-less: floe finds the table's metadata from the directory.
		r := e.OK("scan", dir, "--count")
		if n, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64); err != nil || n != wantRows {
			t.Fatalf("floe scan %s --count printed %q, want %d", dir, r.Stdout, wantRows)
		}
		direct, err := statsFromJSONL(st.Fields, []byte(e.OK("scan", dir, "--output-format", "jsonl").Stdout), nil)
		if err != nil {
			t.Fatalf("floe scan %s jsonl: %v", dir, err)
		}
		if direct.Checksum != want.Checksum || direct.Rows != want.Rows {
			t.Fatalf("catalog-less scan of %s: %d rows, checksum %s; through the catalog %d, %s", dir, direct.Rows, direct.Checksum, want.Rows, want.Checksum)
		}
		c := runCheckerEnv(t, nil, "--table-dir", dir)
		if c.Code != 0 {
			t.Fatalf("check.mjs --table-dir %s: %s", dir, c.Result)
		}
		if err := compareStats(want, c.stats); err != nil {
			t.Fatalf("%v\n(rerun with CHECK_DUMP=1 to print every reader's canonical rows)", err)
		}
		t.Logf("version hint %q: %d rows, checksum %s — floe (catalog and directory), icebird and DuckDB agree", strings.TrimSpace(string(hint)), want.Rows, want.Checksum)
		return want
	}

	first := check(3000)
	if first.Sums["id"] != "4498500" {
		t.Fatalf("sum(id) = %s, want 4498500 (ids 0..2999)", first.Sums["id"])
	}
	hint1, _ := os.ReadFile(hintPath)

	// A fourth file: a second snapshot, a new metadata file, and a hint that
	// names it; the checker must read the new snapshot, not the first.
	if err := fixture.WriteIDFile(filepath.Join(e.Landing, "part-3.parquet"), 3000, 1000); err != nil {
		t.Fatal(err)
	}
	e.OK(e.StreamArgs("db.t", hadoop...)...)
	hint2, _ := os.ReadFile(hintPath)
	if string(hint1) == string(hint2) {
		t.Fatalf("version hint stayed %q after a second snapshot", hint1)
	}
	check(4000)

	// Without the hint icebird cannot find the table (it lists only S3), so
	// the checker fails: the passing runs above did resolve the hint.
	if err := os.Rename(hintPath, hintPath+".away"); err != nil {
		t.Fatal(err)
	}
	c := runCheckerEnv(t, nil, "--table-dir", dir)
	if c.Code == 0 || !strings.Contains(c.Stderr, "version-hint.text") {
		t.Errorf("check.mjs --table-dir without a version hint: want a failure naming version-hint.text, got %s", c.Result)
	}
}
