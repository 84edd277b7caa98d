package main_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
)

// helpEntries reads the flags a command's --help lists: each entry's
// spelling ("--max-file-age DURATION") with its prose joined on one line.
func helpEntries(t *testing.T, help string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var cur string
	inFlags := false
	for _, line := range strings.Split(help, "\n") {
		if line != "" && line[0] != ' ' {
			inFlags = strings.HasSuffix(line, ":") && strings.Contains(strings.ToLower(line), "flags")
		}
		switch {
		case inFlags && strings.HasPrefix(line, "  -"):
			cur = strings.TrimSpace(line)
			out[cur] = ""
		case cur != "" && strings.HasPrefix(line, "        "):
			out[cur] = strings.TrimSpace(out[cur] + " " + strings.TrimSpace(line))
		default:
			cur = ""
		}
	}
	return out
}

var helpKeyRE = regexp.MustCompile(`Key: (\S+)\.$`)

// documentedKeys reads the keys docs/config.md documents, with the flag it
// shows for each ("" for none).
func documentedKeys(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		if k, ok := strings.CutPrefix(line, "### `"); ok {
			cur = strings.TrimSuffix(k, "`")
			keys[cur] = ""
		} else if f, ok := strings.CutPrefix(line, "- Flag: `"); ok && cur != "" {
			keys[cur] = strings.TrimSuffix(f, "`")
		}
	}
	return keys
}

// The flags that mirror pipeline keys are the spec's: `floe stream --help`
// lists a flag for every documented sink key (and every key the spec gives
// a flag), spelt as config/spec.go and docs/config.md spell it, and every
// flag it marks as a key's is a documented key.
func TestFlagsMirrorSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.OK("stream", "--help")
	entries := helpEntries(t, r.Stdout)
	listed := map[string]string{} // key → spelling in --help
	for spelling, prose := range entries {
		if prose == "" {
			t.Errorf("--help lists %s without a line of prose", spelling)
		}
		if m := helpKeyRE.FindStringSubmatch(prose); m != nil {
			listed[m[1]] = spelling
		}
	}
	docs := documentedKeys(t)
	for key, spelling := range listed {
		if _, ok := docs[key]; !ok {
			t.Errorf("flag %s is the flag of key %s, which docs/config.md does not document", spelling, key)
		}
		if docs[key] != spelling {
			t.Errorf("key %s: --help spells its flag %q, docs/config.md %q", key, spelling, docs[key])
		}
	}
	expected := map[string]string{}
	for _, f := range config.Flags() {
		expected[f.Key] = f.Spelling()
	}
	section := func(key string) bool {
		for other := range docs {
			if strings.HasPrefix(other, key+".") {
				return true
			}
		}
		return false
	}
	for key := range docs {
		if strings.HasPrefix(key, "sink.") && !section(key) {
			if _, ok := expected[key]; !ok {
				t.Errorf("documented sink key %s has no flag in config/spec.go", key)
			}
		}
	}
	for key, spelling := range expected {
		if listed[key] != spelling {
			t.Errorf("key %s: floe stream --help lists %q, config/spec.go spells %q", key, listed[key], spelling)
		}
	}
	// The flags promised by docs/writes.md for every sink key work: one
	// run with those that had none before.
	e.WriteIDs("a.parquet", 0, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.keys", "--checkpoint", e.Ckpt,
		"--identifier-fields", "id", "--format-version", "3", "--write-format", "parquet",
		"--check-ordering=false", "--check-nullability=false")
	d := e.describe("db.keys")
	if d.FormatVersion != 3 {
		t.Errorf("--format-version 3 made a v%d table", d.FormatVersion)
	}
	var desc struct {
		Schema struct {
			IdentifierFieldIDs []int `json:"identifier-field-ids"`
			Fields             []struct {
				ID       int    `json:"id"`
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"fields"`
		} `json:"schema"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "describe", "db.keys", "--json").Stdout), &desc); err != nil {
		t.Fatal(err)
	}
	if len(desc.Schema.IdentifierFieldIDs) != 1 || desc.Schema.Fields[0].Name != "id" || !desc.Schema.Fields[0].Required ||
		desc.Schema.IdentifierFieldIDs[0] != desc.Schema.Fields[0].ID {
		t.Errorf("--identifier-fields id: schema %+v", desc.Schema)
	}
	if r := e.Run("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.orc", "--checkpoint", e.Ckpt+"-orc", "--write-format", "orc"); r.Code != 2 || !strings.Contains(r.Stderr, "write-format") {
		t.Errorf("--write-format orc: want a usage error naming write-format, got %s", r)
	}
	if r := e.Run("stream", "--max-open-files", "many"); r.Code != 2 || !strings.Contains(r.Stderr, "-max-open-files") || !strings.Contains(r.Stderr, "whole number") {
		t.Errorf("--max-open-files many: want a usage error naming the flag, got %s", r)
	}
}

// Each command's --help describes it, gives every flag a line of prose and
// shows examples; a group command lists its subcommands and exits 0; no
// command lists flags it ignores.
func TestHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	commands := [][]string{{"run"}, {"stream"}, {"scan"}, {"checkpoint", "show"}, {"version"}}
	for _, sub := range []string{"list", "describe", "snapshots", "files", "history", "health"} {
		commands = append(commands, []string{"table", sub})
	}
	for _, sub := range []string{"expire-snapshots", "rewrite-data-files", "rewrite-manifests", "remove-orphan-files"} {
		commands = append(commands, []string{"maintain", sub})
	}
	for _, c := range commands {
		r := e.Run(append(c, "--help")...)
		name := strings.Join(c, " ")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Usage: floe "+name) {
			t.Errorf("floe %s --help: %s", name, r)
			continue
		}
		if !strings.Contains(r.Stdout, "\nExamples:\n") {
			t.Errorf("floe %s --help shows no examples:\n%s", name, r.Stdout)
		}
		entries := helpEntries(t, r.Stdout)
		for spelling, prose := range entries {
			if prose == "" {
				t.Errorf("floe %s --help: %s has no prose", name, spelling)
			}
		}
		opensCatalog := c[0] != "version" && c[0] != "checkpoint"
		if _, listed := entries["--warehouse DIR_OR_URL"]; listed != opensCatalog {
			t.Errorf("floe %s --help lists --warehouse: %v, want %v", name, listed, opensCatalog)
		}
		byLocation := c[0] == "scan" || (c[0] == "table" && c[1] != "list") || (c[0] == "maintain" && c[1] == "remove-orphan-files")
		if _, listed := entries["--path-prefix FROM=TO"]; listed != byLocation {
			t.Errorf("floe %s --help lists --path-prefix: %v, want %v", name, listed, byLocation)
		}
	}
	// The flags version and checkpoint show do not list still parse.
	if r := e.Run("version", "--warehouse", e.Warehouse); r.Code != 0 {
		t.Errorf("version --warehouse: %s", r)
	}

	for group, subs := range map[string][]string{
		"table":      {"list", "describe", "snapshots", "files", "history", "health"},
		"maintain":   {"expire-snapshots", "rewrite-data-files", "rewrite-manifests", "remove-orphan-files"},
		"checkpoint": {"show"},
	} {
		for _, help := range []string{"--help", "-h", "help"} {
			r := e.Run(group, help)
			if r.Code != 0 {
				t.Errorf("floe %s %s: exit %d, want 0\n%s", group, help, r.Code, r)
			}
			for _, s := range subs {
				if !strings.Contains(r.Stdout, "\n  "+s+" ") {
					t.Errorf("floe %s %s does not list %s:\n%s", group, help, s, r.Stdout)
				}
			}
		}
		if r := e.Run(group); r.Code != 2 || !strings.Contains(r.Stderr, subs[0]) {
			t.Errorf("floe %s without a subcommand: want exit 2 and the list, got %s", group, r)
		}
		if r := e.Run(group, "bogus"); r.Code != 2 || !strings.Contains(r.Stderr, `no subcommand "bogus"`) {
			t.Errorf("floe %s bogus: want exit 2, got %s", group, r)
		}
	}

	r := e.OK("--help")
	for _, want := range []string{"Exit codes:", "  0  success", "  1  the job failed", "  2  invalid usage", "  3  no input"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("floe --help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// Every deprecated spelling still works, gives the same result as the
// current one, and says once, on stderr, what to write instead.
func TestDeprecatedSpellings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 6 {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), int64(i)*100, 100)
	}
	notice := func(r fixture.Result, old, use string) {
		t.Helper()
		want := fmt.Sprintf("floe: %s is deprecated; use %s\n", old, use)
		if n := strings.Count(r.Stderr, want); n != 1 {
			t.Errorf("%s: want the notice %q once on stderr, got %d times:\n%s", old, want, n, r)
		}
		if strings.Contains(r.Stdout, "deprecated") {
			t.Errorf("%s: the notice went to stdout", old)
		}
	}
	noNotice := func(r fixture.Result) {
		t.Helper()
		if strings.Contains(r.Stderr, "deprecated") {
			t.Errorf("the current spellings printed a notice:\n%s", r)
		}
	}

	// floe stream: the sink's spellings.
	old := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.old", "--checkpoint", filepath.Join(e.Dir, "ck-old"),
		"--max-files-per-trigger", "1",
		"--partition-field", "bucket(id, 4)", "--partition-field", "truncate(v, 1)",
		"--table-property", "write.metadata.previous-versions-max=7", "--table-property", "custom.key=a=b",
		"--snapshot-property", "job=nightly", "--snapshot-property", "owner=data-eng",
		"--no-fanout")
	for _, n := range [][2]string{{"--partition-field", "--partition-fields"}, {"--table-property", "-p table-default.KEY=VALUE"},
		{"--snapshot-property", "-o snapshot-property.KEY=VALUE"}, {"--no-fanout", "--fanout=false"}} {
		notice(old, n[0], n[1])
	}
	cur := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.new", "--checkpoint", filepath.Join(e.Dir, "ck-new"),
		"--max-files-per-trigger", "1",
		"--partition-fields", "bucket(id, 4),truncate(v, 1)",
		"-p", "table-default.write.metadata.previous-versions-max=7", "-p", "table-default.custom.key=a=b",
		"-o", "snapshot-property.job=nightly", "-o", "snapshot-property.owner=data-eng",
		"--fanout=false")
	noNotice(cur)
	type shape struct {
		Spec    any
		Props   map[string]string
		Summary []string
		Files   []string
		Rows    int64
	}
	shapeOf := func(table string) shape {
		var d struct {
			Spec  any               `json:"partition_spec"`
			Props map[string]string `json:"properties"`
		}
		if err := json.Unmarshal([]byte(e.OK("table", "describe", table, "--json").Stdout), &d); err != nil {
			t.Fatal(err)
		}
		// Each query's record names its own query id.
		maps.DeleteFunc(d.Props, func(k, _ string) bool { return strings.HasPrefix(k, "floe.query.") })
		s := shape{Spec: d.Spec, Props: d.Props, Rows: e.Count(table)}
		for _, snap := range e.Snapshots(table) {
			s.Summary = append(s.Summary, snap.Summary["job"]+"/"+snap.Summary["owner"])
		}
		var files []struct {
			Partition map[string]any `json:"partition"`
			Rows      int64          `json:"record_count"`
		}
		if err := json.Unmarshal([]byte(e.OK("table", "files", table, "--json").Stdout), &files); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			s.Files = append(s.Files, fmt.Sprintf("%v:%d", f.Partition, f.Rows))
		}
		slices.Sort(s.Files)
		return s
	}
	so, sn := shapeOf("db.old"), shapeOf("db.new")
	if !reflect.DeepEqual(so, sn) {
		t.Errorf("the deprecated spellings made\n%+v\nthe current ones\n%+v", so, sn)
	}
	if so.Props["write.metadata.previous-versions-max"] != "7" || so.Props["custom.key"] != "a=b" || len(so.Summary) != 6 || so.Summary[0] != "nightly/data-eng" || so.Rows != 600 {
		t.Errorf("the options did not take: %+v", so)
	}
	if _, leaked := so.Props["table-default.custom.key"]; leaked {
		t.Errorf("the table-default. prefix reached the table: %v", so.Props)
	}

	// floe scan --format.
	oldScan := e.OK("scan", "db.new", "--format", "csv")
	curScan := e.OK("scan", "db.new", "--output-format", "csv")
	notice(oldScan, "--format", "--output-format")
	noNotice(curScan)
	if oldScan.Stdout != curScan.Stdout || strings.Count(curScan.Stdout, "\n") != 601 {
		t.Errorf("scan --format csv printed %d bytes, --output-format csv %d", len(oldScan.Stdout), len(curScan.Stdout))
	}

	// floe maintain rewrite-data-files --where: the filter takes effect
	// under both names (three of the six files hold ids >= 300).
	args := []string{"maintain", "rewrite-data-files", "db.old", "--min-input-files", "2", "--dry-run", "--json"}
	oldRW := e.OK(append(args, "--where", "id >= 300")...)
	curRW := e.OK(append(args, "--filter", "id >= 300")...)
	notice(oldRW, "--where", "--filter")
	noNotice(curRW)
	var rw struct {
		Files int `json:"rewritten_data_files"`
	}
	if err := json.Unmarshal([]byte(curRW.Stdout), &rw); err != nil {
		t.Fatal(err)
	}
	if oldRW.Stdout != curRW.Stdout || rw.Files == 0 || rw.Files >= len(so.Files) {
		t.Errorf("--where gave\n%s\n--filter gave\n%s\n(%d of %d files)", oldRW.Stdout, curRW.Stdout, rw.Files, len(so.Files))
	}
}

// The README's tour works as written, right after the command at the top
// of the README, which has already filled ./warehouse: the tour's first
// run ingests the quickstart's rows, the second finds nothing new.
func TestReadmeTour(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	text := e.readme()
	top := shBlock(t, text)
	tourAt := strings.Index(text, "## A five-minute tour")
	if tourAt < 0 {
		t.Fatal("README.md has no tour")
	}
	tour := shBlock(t, text[tourAt:])

	// The top command: `go run ./cmd/floe ARGS` is floe ARGS in ./warehouse,
	// as the harness's FLOE_WAREHOUSE is.
	for _, line := range top {
		if args, ok := strings.CutPrefix(line, "go run ./cmd/floe "); ok {
			e.OK(shellWords(t, args)...)
		}
	}
	var vars []string
	var outputs []fixture.Result
	for _, line := range tour {
		switch {
		case strings.HasPrefix(line, "go build"):
		case strings.HasPrefix(line, "export "):
			vars = append(vars, strings.ReplaceAll(strings.TrimPrefix(line, "export "), "$PWD", e.Dir))
		case strings.HasPrefix(line, "./floe "):
			args := shellWords(t, strings.TrimPrefix(line, "./floe "))
			r := e.RunEnv(floeBin, vars, args...)
			if r.Code != 0 {
				t.Fatalf("README tour: %s: %s", line, r)
			}
			outputs = append(outputs, r)
		default:
			t.Fatalf("README tour: a line the test does not know how to run: %q", line)
		}
	}
	if len(outputs) < 3 {
		t.Fatalf("the tour ran %d floe commands", len(outputs))
	}
	if first := outputs[0].Stderr; !strings.Contains(first, "3 input files read, 60 rows, 1 snapshot committed to db.quickstart") {
		t.Errorf("the tour's first run did not ingest the quickstart:\n%s", first)
	}
	if second := outputs[1].Stderr; !strings.Contains(second, "no new input; nothing committed") {
		t.Errorf("the tour's second run:\n%s", second)
	}
}

// readme returns the README's text, with the examples it uses copied
// into the env's directory.
func (e *env) readme() string {
	e.T.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		e.T.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(e.Dir, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		e.T.Fatal(err)
	}
	return string(readme)
}

// shBlock returns the command lines of the first ```sh block in text,
// without comments.
func shBlock(t *testing.T, text string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```sh block")
	}
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// shellWords splits a command line as sh does for the quoting READMEs use.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// The run summary counts input files read and data files written, in the
// right number, per batch and in total, with the rate and the time taken;
// progress records carry the input file count too.
func TestRunSummaryCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 3 {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), int64(i)*100, 100)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "2", "--progress", "summary")
	for _, want := range []string{
		`(?m)^batch 0: 2 input files read, 200 rows, 1 data file written, snapshot \d+, \d+ ms, \d+ rows/s$`,
		`(?m)^batch 1: 1 input file read, 100 rows, 1 data file written, snapshot \d+, \d+ ms, \d+ rows/s$`,
		`(?m)^floe: 2 batches, 3 input files read, 300 rows, 2 snapshots committed to db\.t in [0-9.]+m?s, \d+ rows/s$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.Stderr) {
			t.Errorf("want %s in\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "lag") || strings.Contains(r.Stderr, "message") {
		t.Errorf("a file source's summary speaks of Kafka:\n%s", r.Stderr)
	}
	if r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt); !strings.Contains(r.Stderr, "floe: no new input; nothing committed to db.t\n") {
		t.Errorf("a run without input:\n%s", r.Stderr)
	}
	e.WriteIDs("part-3.parquet", 300, 100)
	r = e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt, "--progress", "json")
	var p struct {
		Sources []struct {
			NumInputFiles int   `json:"numInputFiles"`
			NumInputRows  int64 `json:"numInputRows"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(r.Stderr, "\n", 2)[0]), &p); err != nil {
		t.Fatalf("%v\n%s", err, r.Stderr)
	}
	if len(p.Sources) != 1 || p.Sources[0].NumInputFiles != 1 || p.Sources[0].NumInputRows != 100 {
		t.Errorf("progress sources %+v, want 1 input file of 100 rows", p.Sources)
	}
}

// A run that fails prints no success summary: with batches committed
// before the failure, it says so after the error.
func TestFailedRunSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	bad := filepath.Join(e.Landing, "b.parquet")
	if err := os.WriteFile(bad, []byte("not a parquet file"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(filepath.Join(e.Landing, "a.parquet"), now.Add(-2*time.Minute), now.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(bad, now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	r := e.Stream("db.t", "--max-files-per-trigger", "1", "--progress", "summary")
	if r.Code != 1 {
		t.Fatalf("want exit 1, got %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	errAt := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "floe: ") && strings.Contains(l, "b.parquet") })
	if errAt < 0 {
		t.Fatalf("no error naming b.parquet:\n%s", r.Stderr)
	}
	for i, l := range lines {
		if strings.Contains(l, "committed to db.t") && i < errAt {
			t.Errorf("a summary before the error: %q\n%s", l, r.Stderr)
		}
		if strings.HasPrefix(l, "floe: 1 batch,") {
			t.Errorf("a success-looking summary: %q", l)
		}
	}
	if last := lines[len(lines)-1]; last != "floe: before the failure, 1 batch, 100 rows committed to db.t; the next run goes on after them" {
		t.Errorf("last line %q, want the partial progress after the error\n%s", last, r.Stderr)
	}

	// Failing in its first batch, a run prints the error alone.
	e2 := newEnv(t)
	bad = filepath.Join(e2.Landing, "b.parquet")
	if err := os.WriteFile(bad, []byte("not a parquet file"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Old enough not to pass for a file still being copied in.
	if err := os.Chtimes(bad, now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	r = e2.Stream("db.t", "--progress", "summary")
	if r.Code != 1 || strings.Contains(r.Stderr, "committed") || strings.Contains(r.Stderr, "batches") {
		t.Errorf("a run failing at once: %s", r)
	}
}

// checkpoint show prints a readable listing, not Go's rendering of maps,
// and JSON with --json; it changes nothing in the checkpoint.
func TestCheckpointShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.WriteIDs("b.parquet", 100, 50)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "1")
	snaps := e.Snapshots("db.t")
	before := fixture.Tree(t, e.Ckpt)
	out := e.OK("checkpoint", "show", e.Ckpt).Stdout
	for _, want := range []string{
		"query id:   " + snaps[1].Summary["floe.query-id"] + "\n",
		"latest batch planned:   1 at ",
		", up to offset logOffset=1\n",
		"latest batch committed: 1 at ",
		", 50 rows\n",
		fmt.Sprintf("  db.t: snapshot %d\n", snaps[1].SnapshotID),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("checkpoint show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "map[") || strings.Contains(out, "{") {
		t.Errorf("checkpoint show prints Go or JSON values:\n%s", out)
	}
	var js struct {
		Dir          string              `json:"dir"`
		Metadata     struct{ ID string } `json:"metadata"`
		LatestCommit struct {
			Rows      int64            `json:"rows"`
			Snapshots map[string]int64 `json:"snapshots"`
		} `json:"latestCommit"`
		Pending *int64 `json:"pendingBatch"`
	}
	if err := json.Unmarshal([]byte(e.OK("checkpoint", "show", e.Ckpt, "--json").Stdout), &js); err != nil {
		t.Fatal(err)
	}
	if js.Metadata.ID != snaps[1].Summary["floe.query-id"] || js.LatestCommit.Rows != 50 || js.LatestCommit.Snapshots["db.t"] != snaps[1].SnapshotID ||
		js.Pending != nil || js.Dir != e.Ckpt {
		t.Errorf("checkpoint show --json: %+v", js)
	}
	if after := fixture.Tree(t, e.Ckpt); !reflect.DeepEqual(before, after) {
		t.Errorf("checkpoint show changed the checkpoint: %v", treeDiff(before, after))
	}
	if r := e.Run("checkpoint", "show", filepath.Join(e.Dir, "nope")); r.Code != 2 || !strings.Contains(r.Stderr, "no checkpoint at") {
		t.Errorf("checkpoint show of a missing directory: %s", r)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "nope")); err == nil {
		t.Error("checkpoint show created the directory it was given")
	}
}

// What iceberg-go logs goes through floe's log format: an SQL catalog on
// the legacy V0 schema makes iceberg-go warn with the standard log package.
func TestLibraryLogsFormatted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.MkdirAll(e.Warehouse, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(e.Warehouse, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
		table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000),
		PRIMARY KEY (catalog_name, table_namespace, table_name))`)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	r := e.OK("table", "list")
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if strings.Contains(line, "legacy V0 schema") {
			found = true
			if !strings.HasPrefix(line, "time=") || !strings.Contains(line, " level=WARN ") || !strings.Contains(line, `msg="iceberg_tables is on the legacy V0 schema`) {
				t.Errorf("iceberg-go's warning is not in floe's format: %q", line)
			}
		}
	}
	if !found {
		t.Fatalf("no legacy-schema warning; the test no longer exercises iceberg-go's logging:\n%s", r)
	}
}

// Commands that only read refuse a warehouse that does not exist, instead
// of creating an empty one where a mistyped path points; run and stream
// still create the embedded default.
func TestReadCommandsNeedWarehouse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{
		{"scan", "db.t", "--count"},
		{"table", "list"},
		{"table", "describe", "db.t"},
		{"table", "snapshots", "db.t"},
		{"table", "files", "db.t"},
		{"table", "history", "db.t"},
		{"table", "health", "db.t"},
		{"maintain", "expire-snapshots", "db.t"},
		{"maintain", "rewrite-data-files", "db.t"},
		{"maintain", "rewrite-manifests", "db.t"},
		{"maintain", "remove-orphan-files", "db.t"},
	} {
		r := e.Run(args...)
		want := "floe: no warehouse at " + e.Warehouse + " (no catalog.db); check --warehouse or $FLOE_WAREHOUSE\n"
		if r.Code != 2 || r.Stderr != want {
			t.Errorf("floe %s: want exit 2 and %q, got %s", strings.Join(args, " "), want, r)
		}
	}
	typo := filepath.Join(e.Dir, "warehuose")
	if r := e.Run("table", "list", "--warehouse", typo); r.Code != 2 || !strings.Contains(r.Stderr, "no warehouse at "+typo) {
		t.Errorf("a mistyped --warehouse: %s", r)
	}
	if r := e.Run("table", "list", "--catalog-uri", filepath.Join(e.Dir, "catalog.db")); r.Code != 2 || !strings.Contains(r.Stderr, "no catalog database at") {
		t.Errorf("a mistyped --catalog-uri: %s", r)
	}
	for _, p := range []string{e.Warehouse, typo, filepath.Join(e.Dir, "catalog.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a read command created %s", p)
		}
	}
	e.WriteIDs("a.parquet", 0, 10)
	e.Stream("db.t")
	if _, err := os.Stat(filepath.Join(e.Warehouse, "catalog.db")); err != nil {
		t.Fatalf("stream did not create the embedded catalog: %v", err)
	}
	if n := e.Count("db.t"); n != 10 {
		t.Errorf("%d rows", n)
	}
}

// floe run takes -p table-default.KEY=VALUE as floe stream does: a
// property of the tables it creates, not a catalog property.
func TestRunTableDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	pipeline := filepath.Join(e.Dir, "p.yaml")
	yaml := fmt.Sprintf("source: {path: %s, format: parquet}\nsink: {table: db.t, table-properties: {from.file: f}}\ncheckpoint: %s\n", e.Landing, e.Ckpt)
	if err := os.WriteFile(pipeline, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("run", pipeline, "-p", "table-default.from.flag=v", "-p", "table-default.from.file=flag")
	p := e.describe("db.t").Properties
	if p["from.flag"] != "v" || p["from.file"] != "flag" {
		t.Errorf("table properties %v, want from.flag=v and the flag's from.file=flag", p)
	}
}

// The progress bar shows the rows so far with their rate and the time
// taken, and the time left while planned files wait.
func TestProgressBarRateAndETA(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 3 {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), int64(i)*100, 100)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "1", "--progress", "bar")
	for _, want := range []string{
		`\] 1/3 files, batch 0, 100 rows, \d+ rows/s, [0-9.]+m?s elapsed, ETA [0-9.]+m?s\r`,
		`\] 3/3 files, batch 2, 300 rows, \d+ rows/s, [0-9.]+m?s elapsed\r`,
	} {
		if !regexp.MustCompile(want).MatchString(r.Stderr) {
			t.Errorf("want %s in\n%q", want, r.Stderr)
		}
	}
}

// The console sink's summary says the rows were printed and that nothing
// was committed because it writes no table, not that a batch had no rows.
func TestConsoleSummarySaysPrinted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 3 {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), int64(i)*20, 20)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--sink", "console", "--checkpoint", e.Ckpt, "--progress", "summary")
	if n := strings.Count(r.Stdout, "\n"); n != 60 {
		t.Fatalf("the console sink printed %d lines, want 60:\n%s", n, r.Stdout)
	}
	for _, want := range []string{
		`(?m)^batch 0: 3 input files read, 60 rows printed, nothing committed \(the console sink writes no table\), \d+ ms, \d+ rows/s$`,
		`(?m)^floe: 1 batch, 3 input files read, 60 rows printed to the console in [0-9.]+m?s, \d+ rows/s; nothing committed \(the console sink writes no table\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.Stderr) {
			t.Errorf("want %s in\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "no snapshot") || strings.Contains(r.Stderr, "no rows") {
		t.Errorf("the summary tells of no rows after printing them:\n%s", r.Stderr)
	}
}
