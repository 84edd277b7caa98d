// Package interop_test checks that tables floe writes read back identically
// through implementations that share no code with floe or iceberg-go:
// icebird and DuckDB, driven by check.mjs. Each test runs the built floe
// binary, then compares three sets of statistics exactly — floe's own scan,
// icebird's and DuckDB's.
//
// Needs node and npm; the package is skipped without them. node_modules is
// installed with `npm ci` from package-lock.json when it is missing.
package interop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/fixture"

	"github.com/floe-io/floe/internal/canonical"
)

// floeBin is the binary under test; skipReason is set when node or npm is
// missing, so every test skips with the same message.
var (
	floeBin    string
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipReason = fmt.Sprintf("interop tests need %s on PATH (%v); skipping", tool, err)
			fmt.Fprintln(os.Stderr, skipReason)
			return m.Run()
		}
	}
	// The binary goes to a temporary directory rather than interop/tmp, so
	// that the tree holds nothing git does not ignore.
	dir, err := os.MkdirTemp("", "floe-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if floeBin, err = fixture.BuildFloe(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if !installed("icebird", "iceberg-js", "ajv") {
		// `npm ci` installs exactly package-lock.json; it needs the registry
		// or a warm npm cache.
		ci := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		ci.Stdout, ci.Stderr = os.Stderr, os.Stderr
		if err := ci.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "npm ci in interop/:", err)
			return 1
		}
	}
	defer stopSpark()
	defer jvmDecoders.stop()
	return m.Run()
}

// env is one test's world (fixture.Env) with the checker's steps; spark
// is its warehouse's catalog in the Spark session, once registered.
// checkTable and checkRows read with Spark too, unless sparkOff is set: a
// test that checks many states of one table sets it for most of them, as
// a Spark read costs a second or two. pages are the zstd pages of its
// tables that checkPagesDecode read, decoded at the test's end.
type env struct {
	*fixture.Env
	spark    *sparkCatalog
	sparkOff bool
	pages    *pageCheck
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	e := &env{Env: fixture.NewEnv(t, floeBin), pages: &pageCheck{files: map[string]bool{}}}
	t.Cleanup(e.decodePages)
	return e
}

// tableInfo is what `floe table describe --json` tells the tests.
type tableInfo struct {
	Location         string          `json:"location"`
	MetadataLocation string          `json:"metadata_location"`
	FormatVersion    int             `json:"format_version"`
	Schema           json.RawMessage `json:"schema"`
	fields           []canonical.Field
}

func (e *env) describe(table string) tableInfo {
	e.T.Helper()
	r := e.OK("table", "describe", table, "--json")
	var ti tableInfo
	if err := json.Unmarshal([]byte(r.Stdout), &ti); err != nil {
		e.T.Fatalf("table describe --json: %v\n%s", err, r.Stdout)
	}
	st, err := canonical.ParseType(ti.Schema)
	if err != nil {
		e.T.Fatalf("table schema: %v", err)
	}
	ti.fields = st.Fields
	return ti
}

// floeStats is Stats from floe's own scan of the table.
func (e *env) floeStats(table string, ti tableInfo) Stats {
	e.T.Helper()
	r := e.OK("scan", table, "--output-format", "jsonl")
	var dump io.Writer
	if os.Getenv("CHECK_DUMP") != "" {
		dump = os.Stderr
	}
	st, err := statsFromJSONL(ti.fields, []byte(r.Stdout), dump)
	if err != nil {
		e.T.Fatalf("floe scan jsonl: %v", err)
	}
	return st
}

// runChecker runs check.mjs on a metadata file and returns each reader's
// stats, or an error carrying the checker's stderr.
func runChecker(metadata string, prefixes ...string) (map[string]Stats, error) {
	args := []string{"check.mjs", metadata}
	for _, p := range prefixes {
		args = append(args, "--path-prefix", p)
	}
	cmd := exec.Command("node", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("check.mjs %s: %v\n%s", metadata, err, errb.String())
	}
	var got map[string]Stats
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("check.mjs printed %q: %v", out.String(), err)
	}
	return got, nil
}

// checkTable compares floe's, icebird's and DuckDB's stats for a table,
// checks its zstd pages decode in every decoder (checkPagesDecode), and
// returns floe's.
func (e *env) checkTable(table string) Stats {
	e.T.Helper()
	ti := e.describe(table)
	want := e.floeStats(table, ti)
	got, err := runChecker(ti.MetadataLocation)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := compareStats(want, got); err != nil {
		e.T.Fatalf("%s: %v\n(rerun with CHECK_DUMP=1 to print every reader's canonical rows)", table, err)
	}
	e.T.Logf("%s: %d rows, checksum %s — floe, icebird and DuckDB agree", table, want.Rows, want.Checksum)
	e.sparkCheck(table, ti)
	e.checkPagesDecode(ti)
	return want
}

// installed tells whether node_modules holds every package named.
func installed(packages ...string) bool {
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join("node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}
