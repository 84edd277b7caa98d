package main_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// Bad input: every kind of file floe cannot ingest makes the run exit 1
// with a message naming the file and the problem, commits nothing, and
// leaves the checkpoint as it was; after the file is removed the next good
// file is ingested as the next batch.

// tableState is what a failed run must not change.
type tableState struct {
	ckpt      map[string]string
	rows      int64
	snaps     []fixture.Snapshot
	dataFiles []string
}

func (e *env) state(table string) tableState {
	e.T.Helper()
	return tableState{ckpt: fixture.Tree(e.T, e.Ckpt), rows: e.Count(table), snaps: e.Snapshots(table), dataFiles: e.dataFiles()}
}

// dataFiles lists the Parquet files under the warehouse, so that a failed
// batch that left data files behind (written, then not committed or not
// deleted) is noticed.
func (e *env) dataFiles() []string {
	var out []string
	_ = filepath.WalkDir(e.Warehouse, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// treeDiff describes how two fixture.Tree() results differ, one line per file.
func treeDiff(before, after map[string]string) []string {
	var diff []string
	for k, v := range before {
		a, ok := after[k]
		switch {
		case !ok:
			diff = append(diff, "removed "+k)
		case a != v:
			diff = append(diff, fmt.Sprintf("changed %s: %q -> %q", k, v, a))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, fmt.Sprintf("added %s: %q", k, v))
		}
	}
	sort.Strings(diff)
	return diff
}

// checkUnchanged fails the test when the table or the checkpoint changed.
func checkUnchanged(t *testing.T, what string, before, after tableState) {
	t.Helper()
	if after.rows != before.rows {
		t.Errorf("%s: table has %d rows, had %d", what, after.rows, before.rows)
	}
	if len(after.snaps) != len(before.snaps) {
		t.Errorf("%s: table has %d snapshots, had %d: %+v", what, len(after.snaps), len(before.snaps), after.snaps)
	}
	if strings.Join(after.dataFiles, "\n") != strings.Join(before.dataFiles, "\n") {
		t.Errorf("%s: data files in the warehouse changed:\nbefore %v\nafter  %v", what, before.dataFiles, after.dataFiles)
	}
	for _, d := range treeDiff(before.ckpt, after.ckpt) {
		t.Errorf("%s: checkpoint changed: %s", what, d)
	}
}

func ageFile(t *testing.T, path string, by time.Duration) {
	t.Helper()
	old := time.Now().Add(-by)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// parquetBytes returns the bytes of a complete Parquet file of ids.
func parquetBytes(t *testing.T, first, n int64) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "whole.parquet")
	if err := fixture.WriteIDFile(p, first, n); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeMismatchedParquet writes ids with a long column v, where the article
// table has v string.
func writeMismatchedParquet(t *testing.T, path string, first, n int64) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := first; i < first+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int64Builder).Append(i * 10)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

// badCase is one kind of bad file in one format.
type badCase struct {
	name   string
	format string
	// bad writes the bad file into the landing directory and returns its
	// path.
	bad func(t *testing.T, e *env) string
	// want are substrings of stderr besides the file's path.
	want []string
	// runArgs, when set, run floe instead of the default stream command
	// (used for the unreadable file, which needs a process without root's
	// file-access override).
	run func(e *env, args ...string) fixture.Result
}

// writeGood drops a good file of n ids in the case's format.
func writeGood(t *testing.T, e *env, format, name string, first, n int64) {
	t.Helper()
	switch format {
	case "parquet":
		e.WriteIDs(name+".parquet", first, n)
	case "csv":
		var b strings.Builder
		b.WriteString("id,v\n")
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, "%d,v%d\n", i, i)
		}
		writeFile(t, filepath.Join(e.Landing, name+".csv"), []byte(b.String()))
	case "json":
		var b strings.Builder
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&b, "{\"id\":%d,\"v\":\"v%d\"}\n", i, i)
		}
		writeFile(t, filepath.Join(e.Landing, name+".json"), []byte(b.String()))
	default:
		t.Fatalf("format %q", format)
	}
}

func badCases() []badCase {
	return []badCase{
		{
			name: "truncated-parquet", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				whole := parquetBytes(t, 100, 100)
				p := filepath.Join(e.Landing, "truncated.parquet")
				writeFile(t, p, whole[:len(whole)/2])
				ageFile(t, p, time.Hour) // old: not a copy in progress
				return p
			},
			want: []string{"not a readable Parquet file", "truncated or corrupt"},
		},
		{
			// Magic bytes and footer length intact, footer metadata garbage.
			name: "corrupt-parquet-footer", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				b := parquetBytes(t, 100, 100)
				n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
				for i := len(b) - 8 - n; i < len(b)-8; i++ {
					b[i] = 0xff
				}
				p := filepath.Join(e.Landing, "corrupt.parquet")
				writeFile(t, p, b)
				ageFile(t, p, time.Hour)
				return p
			},
			want: []string{"not a readable Parquet file", "truncated or corrupt"},
		},
		{
			name: "not-parquet", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "misnamed.parquet")
				writeFile(t, p, []byte("id,v\n1,a\n2,b\n"))
				ageFile(t, p, time.Hour)
				return p
			},
			want: []string{"not a readable Parquet file"},
		},
		{
			name: "zero-byte-parquet", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "empty.parquet")
				writeFile(t, p, nil)
				ageFile(t, p, time.Hour)
				return p
			},
			want: []string{"the file is empty (0 bytes)"},
		},
		{
			name: "zero-byte-csv", format: "csv",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "empty.csv")
				writeFile(t, p, nil)
				return p
			},
			want: []string{"the file is empty (0 bytes)"},
		},
		{
			name: "zero-byte-json", format: "json",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "empty.json")
				writeFile(t, p, nil)
				return p
			},
			want: []string{"the file is empty (0 bytes)"},
		},
		{
			name: "unreadable-parquet", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "unreadable.parquet")
				writeFile(t, p, parquetBytes(t, 100, 100))
				if err := os.Chmod(p, 0); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: []string{"cannot read the file", "permission denied"},
			run:  runUnprivileged,
		},
		{
			name: "unreadable-csv", format: "csv",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "unreadable.csv")
				writeFile(t, p, []byte("id,v\n100,v100\n"))
				if err := os.Chmod(p, 0); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: []string{"cannot read the file", "permission denied"},
			run:  runUnprivileged,
		},
		{
			name: "csv-wrong-column-count", format: "csv",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "ragged.csv")
				writeFile(t, p, []byte("id,v\n100,v100\n101,v101,extra\n102,v102\n"))
				return p
			},
			want: []string{"line 3 has 3 columns, the header has 2"},
		},
		{
			name: "csv-too-few-columns", format: "csv",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "short.csv")
				writeFile(t, p, []byte("id,v\n100,v100\n101,v101\n102\n"))
				return p
			},
			want: []string{"line 4 has 1 columns, the header has 2"},
		},
		{
			name: "json-malformed-line", format: "json",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "malformed.json")
				writeFile(t, p, []byte("{\"id\":100,\"v\":\"v100\"}\n{\"id\":101,\"v\":\"v101\"}\n{\"id\":102,\"v\":\n{\"id\":103,\"v\":\"v103\"}\n"))
				return p
			},
			want: []string{"line 3", "malformed JSON"},
		},
		{
			name: "json-not-an-object", format: "json",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "array.json")
				writeFile(t, p, []byte("{\"id\":100,\"v\":\"v100\"}\n[101,\"v101\"]\n"))
				return p
			},
			want: []string{"line 2", "malformed JSON", "one object"},
		},
		{
			name: "parquet-schema-mismatch", format: "parquet",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "mismatch.parquet")
				writeMismatchedParquet(t, p, 100, 100)
				return p
			},
			want: []string{`column "v"`, "long", "string", "schema mismatch"},
		},
		{
			name: "json-schema-mismatch", format: "json",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "mismatch.json")
				writeFile(t, p, []byte("{\"id\":\"a100\",\"v\":\"v100\"}\n"))
				return p
			},
			want: []string{`column "id"`, "type string in the input but long in table"},
		},
		{
			name: "csv-extra-column", format: "csv",
			bad: func(t *testing.T, e *env) string {
				p := filepath.Join(e.Landing, "extra.csv")
				writeFile(t, p, []byte("id,v,w\n100,v100,1.5\n"))
				return p
			},
			want: []string{`column "w" (double) is not in table`},
		},
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			table := "db.bad"
			args := []string{"stream", "--source", e.Landing, "--format", c.format, "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now"}
			run := c.run
			if run == nil {
				run = func(e *env, args ...string) fixture.Result { return e.Run(args...) }
			}
			writeGood(t, e, c.format, "good-0", 0, 100)
			if r := run(e, args...); r.Code != 0 {
				t.Fatalf("first, good batch: %s", r)
			}
			before := e.state(table)
			if before.rows != 100 || len(before.snaps) != 1 {
				t.Fatalf("after the good batch: %d rows, %d snapshots; want 100 and 1", before.rows, len(before.snaps))
			}

			bad := c.bad(t, e)
			for attempt := 1; attempt <= 2; attempt++ { // failing again changes nothing either
				r := run(e, args...)
				if r.Code != 1 {
					t.Fatalf("attempt %d with %s: want exit 1, got %s", attempt, filepath.Base(bad), r)
				}
				for _, w := range append([]string{bad}, c.want...) {
					if !strings.Contains(r.Stderr, w) {
						t.Errorf("attempt %d: stderr does not contain %q:\n%s", attempt, w, r.Stderr)
					}
				}
				checkUnchanged(t, fmt.Sprintf("attempt %d", attempt), before, e.state(table))
			}

			// Without the bad file the query goes on: the next good file is
			// batch 1, the batch number the failed attempts did not use up.
			if err := os.Remove(bad); err != nil {
				t.Fatal(err)
			}
			writeGood(t, e, c.format, "good-1", 1000, 50)
			if r := run(e, args...); r.Code != 0 {
				t.Fatalf("after removing the bad file: %s", r)
			}
			snaps := e.Snapshots(table)
			if n := e.Count(table); n != 150 || len(snaps) != 2 {
				t.Fatalf("after the next good file: %d rows, %d snapshots; want 150 and 2", n, len(snaps))
			}
			if got := snaps[1].Summary["floe.batch-id"]; got != "1" {
				t.Errorf("next good batch has floe.batch-id %q, want 1", got)
			}
			ids := e.IDs(table)
			for _, id := range []int64{0, 99, 1000, 1049} {
				if !ids[id] {
					t.Errorf("id %d missing after recovery", id)
				}
			}
			if len(ids) != 150 {
				t.Errorf("%d distinct ids, want 150", len(ids))
			}
		})
	}
}

// runUnprivileged runs floe so that a file with mode 000 cannot be read.
// Tests often run as root, which reads any file whatever its mode: then floe
// runs without the capabilities that override file permissions
// (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), exactly as a process of the
// file's owner without them. It skips the test when that is not possible.
func runUnprivileged(e *env, args ...string) fixture.Result {
	e.T.Helper()
	if os.Geteuid() != 0 {
		return e.Run(args...)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		e.T.Skip("running as root, which can read a file with mode 000, and setpriv (util-linux) is not installed to drop CAP_DAC_OVERRIDE; run as a non-root user to test unreadable files")
	}
	return e.RunEnv(setpriv, nil, append([]string{"--bounding-set=-dac_override,-dac_read_search", "--", floeBin}, args...)...)
}

// A check that runUnprivileged really takes root's override away, so that
// the unreadable-file cases test what they claim.
func TestBadInputUnprivilegedCannotRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := filepath.Join(e.Landing, "secret.csv")
	writeFile(t, p, []byte("id\n1\n"))
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	r := runUnprivileged(e, "stream", "--source", e.Landing, "--format", "csv", "--table", "db.secret", "--checkpoint", e.Ckpt)
	if r.Code != 1 || !strings.Contains(r.Stderr, "permission denied") {
		t.Fatalf("reading a mode-000 file: want exit 1 and permission denied, got %s", r)
	}
}

// A Parquet file still being copied in (no footer yet, changed within the
// last minute) is neither ingested nor an error, only named in a warning
// as left for a later run; once complete, it is ingested.
func TestBadInputParquetStillBeingCopied(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	table := "db.copying"
	e.WriteIDs("part-0.parquet", 0, 1000)
	whole := parquetBytes(t, 1000, 1000)
	half := filepath.Join(e.Landing, "part-1.parquet")
	writeFile(t, half, whole[:len(whole)/2])

	r := e.Stream(table, "--trigger", "available-now")
	if r.Code != 0 {
		t.Fatalf("run with a half-written file: %s", r)
	}
	if strings.Contains(r.Stderr, "bad input") || !strings.Contains(r.Stderr, "available-now leaves "+half+" for a later run") {
		t.Errorf("half-written file was reported as bad, or not named as left for a later run:\n%s", r.Stderr)
	}
	before := e.state(table)
	if before.rows != 1000 || len(before.snaps) != 1 {
		t.Fatalf("%d rows, %d snapshots; want 1000 and 1 (the complete file only)", before.rows, len(before.snaps))
	}
	for _, content := range before.ckpt {
		if strings.Contains(content, "part-1.parquet") {
			t.Errorf("checkpoint records the half-written file:\n%s", content)
		}
	}

	// Still being copied on the next run: nothing happens at all.
	r = e.Stream(table, "--trigger", "available-now")
	if r.Code != 0 {
		t.Fatalf("second run with the half-written file: %s", r)
	}
	checkUnchanged(t, "second run", before, e.state(table))

	// The copy completes.
	writeFile(t, half, whole)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if n, s := e.Count(table), len(e.Snapshots(table)); n != 2000 || s != 2 {
		t.Fatalf("after the copy completed: %d rows, %d snapshots; want 2000 and 2", n, s)
	}
	if ids := e.IDs(table); len(ids) != 2000 || !ids[1999] {
		t.Fatalf("distinct ids = %d, want 2000 including 1999", len(ids))
	}
}

// progressLines decodes the batch records of --progress=json from stderr.
func progressLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("progress line %q: %v", line, err)
		}
		if _, ok := m["batchId"]; ok {
			out = append(out, m)
		}
	}
	return out
}

type quarantined struct {
	Path, MovedTo, Reason string
}

func quarantinedFiles(t *testing.T, stderr string) []quarantined {
	t.Helper()
	var out []quarantined
	for _, p := range progressLines(t, stderr) {
		list, _ := p["quarantined"].([]any)
		for _, q := range list {
			m, _ := q.(map[string]any)
			path, _ := m["path"].(string)
			moved, _ := m["movedTo"].(string)
			reason, _ := m["reason"].(string)
			out = append(out, quarantined{path, moved, reason})
		}
	}
	return out
}

// --on-bad-file quarantine moves bad files to <checkpoint>/quarantine/,
// records them in the progress record, and ingests the rest.
func TestQuarantine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	table := "db.quarantine"
	args := []string{"--trigger", "available-now", "--on-bad-file", "quarantine", "--progress", "json"}
	e.WriteIDs("good-0.parquet", 0, 1000)
	whole := parquetBytes(t, 5000, 1000)
	corrupt := filepath.Join(e.Landing, "corrupt.parquet")
	writeFile(t, corrupt, whole[:len(whole)/3])
	ageFile(t, corrupt, time.Hour) // planned first, before the table exists
	e.WriteIDs("good-1.parquet", 1000, 1000)

	r := e.Stream(table, args...)
	if r.Code != 0 {
		t.Fatalf("quarantine run: %s", r)
	}
	if n := e.Count(table); n != 2000 {
		t.Fatalf("rows = %d, want 2000 (the two good files)", n)
	}
	if s := e.Snapshots(table); len(s) != 1 {
		t.Fatalf("snapshots = %d, want 1", len(s))
	}
	if ids := e.IDs(table); ids[5000] || !ids[0] || !ids[1999] {
		t.Fatalf("ids wrong: has 5000=%v 0=%v 1999=%v", ids[5000], ids[0], ids[1999])
	}
	qdir := filepath.Join(e.Ckpt, "quarantine")
	moved := filepath.Join(qdir, "corrupt.parquet")
	if b, err := os.ReadFile(moved); err != nil || !bytes.Equal(b, whole[:len(whole)/3]) {
		t.Fatalf("quarantined file %s: err %v, %d bytes (want the original %d)", moved, err, len(b), len(whole)/3)
	}
	if _, err := os.Stat(corrupt); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bad file still in the landing directory: %v", err)
	}
	q := quarantinedFiles(t, r.Stderr)
	if len(q) != 1 || q[0].Path != corrupt || q[0].MovedTo != moved || !strings.Contains(q[0].Reason, "not a readable Parquet file") {
		t.Fatalf("progress quarantined = %+v, want one entry for %s moved to %s with its reason\nstderr:\n%s", q, corrupt, moved, r.Stderr)
	}

	// A file that does not fit the existing table is quarantined too.
	mismatch := filepath.Join(e.Landing, "mismatch.parquet")
	writeMismatchedParquet(t, mismatch, 6000, 10)
	e.WriteIDs("good-2.parquet", 2000, 1000)
	r = e.Stream(table, args...)
	if r.Code != 0 {
		t.Fatalf("second quarantine run: %s", r)
	}
	if n := e.Count(table); n != 3000 {
		t.Fatalf("rows = %d, want 3000", n)
	}
	q = quarantinedFiles(t, r.Stderr)
	if len(q) != 1 || q[0].Path != mismatch || q[0].MovedTo != filepath.Join(qdir, "mismatch.parquet") || !strings.Contains(q[0].Reason, `column "v"`) {
		t.Fatalf("progress quarantined = %+v, want the mismatched file\nstderr:\n%s", q, r.Stderr)
	}

	// Nothing is left to do, and the quarantined files are not retried.
	before := e.state(table)
	r = e.Stream(table, args...)
	if r.Code != 0 {
		t.Fatalf("re-run: %s", r)
	}
	if q := quarantinedFiles(t, r.Stderr); len(q) != 0 {
		t.Errorf("re-run quarantined again: %+v", q)
	}
	checkUnchanged(t, "re-run", before, e.state(table))
	entries, _ := os.ReadDir(qdir)
	if len(entries) != 2 {
		t.Errorf("quarantine holds %d files, want 2", len(entries))
	}
}

// Without --on-bad-file quarantine, the same corrupt file fails the run and
// stays where it is.
func TestQuarantineOffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	corrupt := filepath.Join(e.Landing, "corrupt.parquet")
	writeFile(t, corrupt, []byte("PAR1 not really"))
	ageFile(t, corrupt, time.Hour)
	r := e.Stream("db.noquarantine", "--trigger", "available-now")
	if r.Code != 1 || !strings.Contains(r.Stderr, corrupt) {
		t.Fatalf("want exit 1 naming %s, got %s", corrupt, r)
	}
	if _, err := os.Stat(corrupt); err != nil {
		t.Errorf("bad file moved without quarantine: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Ckpt, "quarantine")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("quarantine directory exists: %v", err)
	}
	if r := e.Run("table", "snapshots", "db.noquarantine", "--json"); r.Code == 0 && strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("table has snapshots: %s", r.Stdout)
	}
}

// copyInto copies a file to dst, creating dst's directory.
func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b)
}

// usePipeline copies testdata/good/NAME.yaml into the env's directory and
// the files of testdata/good/NAME/ (when there is one) into its landing
// directory. The fixtures use paths relative to the env's directory, where
// e.run runs floe: ./landing, ./ckpt. It returns the pipeline file's name.
func (e *env) usePipeline(name string) string {
	e.T.Helper()
	file := name + ".yaml"
	copyInto(e.T, filepath.Join("testdata", "good", file), filepath.Join(e.Dir, file))
	entries, err := os.ReadDir(filepath.Join("testdata", "good", name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.T.Fatal(err)
	}
	for _, de := range entries {
		copyInto(e.T, filepath.Join("testdata", "good", name, de.Name()), filepath.Join(e.Landing, de.Name()))
	}
	return file
}

// goodPipelines are the expectations of testdata/good: the table each
// pipeline writes and the rows it must hold after one run.
var goodPipelines = map[string]struct {
	table string
	rows  int64
	setup func(e *env)
}{
	"csv-schema":     {table: "db.typed", rows: 3},
	"csv-delimiter":  {table: "db.semicolon", rows: 3},
	"csv-headerless": {table: "db.headerless", rows: 2},
	"json-schema":    {table: "db.jsontyped", rows: 3},
	"parquet-minimal": {table: "db.events", rows: 3000, setup: func(e *env) {
		for i := int64(0); i < 3; i++ {
			e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), i*1000, 1000)
		}
	}},
}

// Every pipeline in testdata/good runs: one snapshot with the expected rows,
// and a second run adds nothing.
func TestConfigGoodFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "good", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/good: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			want, ok := goodPipelines[name]
			if !ok {
				t.Fatalf("testdata/good/%s.yaml has no entry in goodPipelines", name)
			}
			e := newEnv(t)
			file := e.usePipeline(name)
			if want.setup != nil {
				want.setup(e)
			}
			e.OK("run", file)
			if n, s := e.Count(want.table), len(e.Snapshots(want.table)); n != want.rows || s != 1 {
				t.Fatalf("after floe run %s: %d rows, %d snapshots; want %d and 1", file, n, s, want.rows)
			}
			if _, err := os.Stat(filepath.Join(e.Dir, "ckpt", "commits", "0")); err != nil {
				t.Errorf("checkpoint ./ckpt not written relative to the working directory: %v", err)
			}
			e.OK("run", file)
			if n, s := e.Count(want.table), len(e.Snapshots(want.table)); n != want.rows || s != 1 {
				t.Fatalf("after a second run: %d rows, %d snapshots; want %d and 1", n, s, want.rows)
			}
		})
	}
}

// A refused pipeline file exits 2 with config's message under a line
// naming the file, before anything is created. Package config's golden
// files hold every message (config.TestBadFixtures); here one YAML error
// and one file of several invalid values show how the binary reports them.
func TestConfigBadFixtures(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tab-indent", "misspelt-values"} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join("..", "..", "config", "testdata", "bad", name+".yaml")
			file := filepath.Base(f)
			golden, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".err")
			if err != nil {
				t.Fatalf("expected message: %v", err)
			}
			head, body, ok := strings.Cut(string(golden), "\n")
			if !ok || head != "invalid pipeline config:" {
				t.Fatalf("%s.err does not start with config's heading: %q", name, golden)
			}
			want := "floe: invalid pipeline config " + file + ":\n" + body
			e := newEnv(t)
			copyInto(t, f, filepath.Join(e.Dir, file))
			writeGood(t, e, "parquet", "part-0", 0, 10)
			r := e.Run("run", file)
			if r.Code != 2 {
				t.Errorf("want exit 2 (invalid configuration), got %s", r)
			}
			if r.Stderr != want {
				t.Errorf("stderr differs from %s.err under the file's heading\n got:\n%s\nwant:\n%s", name, r.Stderr, want)
			}
			if r.Stdout != "" {
				t.Errorf("stdout not empty: %q", r.Stdout)
			}
			entries, _ := os.ReadDir(e.Dir)
			var names []string
			for _, de := range entries {
				names = append(names, de.Name())
			}
			sort.Strings(names)
			wantNames := []string{file, "landing"}
			sort.Strings(wantNames)
			if strings.Join(names, " ") != strings.Join(wantNames, " ") {
				t.Errorf("a refused pipeline created files: %s holds %v", e.Dir, names)
			}
			if l := fixture.Tree(t, e.Landing); len(l) != 1 {
				t.Errorf("landing directory changed: %v", l)
			}
		})
	}
}

// A table column declared required (source.schema required: true) refuses
// a null, naming the column and the row, and nothing is committed.
func TestBadInputRequiredColumnNull(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, pipeline, table, format string
		bad, good                     string
	}{
		{"csv-empty-value", "csv-schema", "db.typed", "csv",
			"id,qty,price,ratio,score,ok,day,t,at,at_tz,name\n10,1,1.00,,,,,,,,x\n,2,2.00,,,,,,,,y\n",
			"id,qty,price,ratio,score,ok,day,t,at,at_tz,name\n11,1,1.00,,,,,,,,x\n"},
		{"json-missing-key", "json-schema", "db.jsontyped", "json",
			"{\"id\": 10, \"tag\": \"x\"}\n{\"tag\": \"no id\"}\n",
			"{\"id\": 11, \"tag\": \"x\"}\n"},
		{"json-null", "json-schema", "db.jsontyped", "json",
			"{\"id\": 10, \"tag\": \"x\"}\n{\"id\": null, \"tag\": \"null id\"}\n",
			"{\"id\": 11, \"tag\": \"x\"}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			file := e.usePipeline(c.pipeline)
			e.OK("run", file)
			if f := e.fields(c.table); !f["id"].Required {
				t.Fatalf("id is not a required column: %+v", f["id"])
			}
			before := e.state(c.table)
			bad := filepath.Join(e.Landing, "nulls."+c.format)
			writeFile(t, bad, []byte(c.bad))
			r := e.Run("run", file)
			want := fmt.Sprintf(`column "id" is required in table %s but row 2 is null`, c.table)
			if r.Code != 1 || !strings.Contains(r.Stderr, bad) || !strings.Contains(r.Stderr, want) {
				t.Fatalf("want exit 1 naming %s and %q, got %s", bad, want, r)
			}
			checkUnchanged(t, "after the null", before, e.state(c.table))

			if err := os.Remove(bad); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(e.Landing, "next."+c.format), []byte(c.good))
			e.OK("run", file)
			if n := e.Count(c.table); n != before.rows+1 {
				t.Fatalf("after the next good file: %d rows, want %d", n, before.rows+1)
			}
		})
	}
}
