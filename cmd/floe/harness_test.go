package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// floeBin is the binary under test, built once by TestMain.
var floeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "floe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	floeBin = filepath.Join(dir, "floe")
	build := exec.Command("go", "build", "-tags", "floetest", "-o", floeBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build floe:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's world: a warehouse, a landing directory and a
// checkpoint, all under the test's temporary directory.
type env struct {
	t         *testing.T
	dir       string
	warehouse string
	landing   string
	ckpt      string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, warehouse: filepath.Join(dir, "warehouse"), landing: filepath.Join(dir, "landing"), ckpt: filepath.Join(dir, "ckpt")}
	if err := os.MkdirAll(e.landing, 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

type result struct {
	stdout, stderr string
	code           int
	maxRSS         int64
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run executes floe with the env's warehouse.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runProgram(floeBin, args...)
}

// runProgram is env.run for any program (a wrapper around floe).
func (e *env) runProgram(prog string, args ...string) result {
	e.t.Helper()
	return e.runEnv(prog, nil, args...)
}

// runEnv runs a program with extra environment variables (KEY=VALUE).
func (e *env) runEnv(prog string, vars []string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = e.dir
	cmd.Env = append(append(os.Environ(), "FLOE_WAREHOUSE="+e.warehouse), vars...)
	o, err := fixture.Run(cmd)
	if err != nil {
		e.t.Fatalf("run %s %v: %v", prog, args, err)
	}
	return result{stdout: o.Stdout, stderr: o.Stderr, code: o.Code, maxRSS: o.MaxRSS}
}

// ok runs floe and fails the test unless it exits 0.
func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("floe %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// stream runs `floe stream` on the env's landing directory and checkpoint.
func (e *env) stream(table string, extra ...string) result {
	e.t.Helper()
	args := append([]string{"stream", "--source", e.landing, "--format", "parquet", "--table", table, "--checkpoint", e.ckpt}, extra...)
	return e.run(args...)
}

func (e *env) count(table string) int64 {
	e.t.Helper()
	r := e.ok("scan", table, "--count")
	n, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64)
	if err != nil {
		e.t.Fatalf("scan --count printed %q", r.stdout)
	}
	return n
}

type snapshot struct {
	SnapshotID  int64             `json:"snapshot_id"`
	ParentID    *int64            `json:"parent_id"`
	TimestampMs int64             `json:"timestamp_ms"`
	Operation   string            `json:"operation"`
	Summary     map[string]string `json:"summary"`
}

func (e *env) snapshots(table string) []snapshot {
	e.t.Helper()
	r := e.ok("table", "snapshots", table, "--json")
	var out []snapshot
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("snapshots --json: %v\n%s", err, r.stdout)
	}
	return out
}

// ids returns every id in the table, failing on duplicates.
func (e *env) ids(table string) map[int64]bool {
	e.t.Helper()
	r := e.ok("scan", table, "--output-format", "csv")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	seen := map[int64]bool{}
	for _, l := range lines[1:] {
		id, err := strconv.ParseInt(strings.SplitN(l, ",", 2)[0], 10, 64)
		if err != nil {
			e.t.Fatalf("scan csv line %q: %v", l, err)
		}
		if seen[id] {
			e.t.Fatalf("id %d appears twice in %s", id, table)
		}
		seen[id] = true
	}
	return seen
}

// writeIDs drops a Parquet file of n rows with ids from first.
func (e *env) writeIDs(rel string, first, n int64) {
	e.t.Helper()
	if err := fixture.WriteIDFile(filepath.Join(e.landing, rel), first, n); err != nil {
		e.t.Fatal(err)
	}
}

// tree lists every file under dir with its content, so tests can assert a
// directory is unchanged.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", timeout, what)
	return 0
}

func writeIDsTo(path string, first, n int64) error { return fixture.WriteIDFile(path, first, n) }
