package main_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandSummary is the line `floe --help` gives a command, its wrapped
// continuation lines joined on.
func commandSummary(t *testing.T, help, name string) string {
	t.Helper()
	lines := strings.Split(help, "\n")
	for i, line := range lines {
		if rest, ok := strings.CutPrefix(line, "  "+name+" "); ok {
			summary := strings.TrimSpace(rest)
			for _, more := range lines[i+1:] {
				if !strings.HasPrefix(more, "     ") {
					break
				}
				summary += " " + strings.TrimSpace(more)
			}
			return summary
		}
	}
	t.Fatalf("floe --help does not list %s:\n%s", name, help)
	return ""
}

// subcommandColumns maps each subcommand a group's help lists to the
// column its summary starts at.
func subcommandColumns(help string) map[string]int {
	out := map[string]int{}
	inList := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case line == "Subcommands:":
			inList = true
		case line == "":
			inList = false
		case inList && strings.HasPrefix(line, "  ") && line[2] != ' ':
			name, _, _ := strings.Cut(line[2:], " ")
			out[name] = len(line) - len(strings.TrimLeft(line[2+len(name):], " "))
		}
	}
	return out
}

// The overview says what floe reads, and each group's summary names every
// subcommand the group has, in a list whose summaries line up.
func TestUsageTexts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	help := e.OK("--help").Stdout
	for _, want := range []string{"landing files", "object store", "Iceberg", "Kafka"} {
		if !strings.Contains(help, want) {
			t.Errorf("floe --help does not say it reads %s:\n%s", want, help)
		}
	}
	if s := commandSummary(t, help, "stream"); !strings.Contains(s, "Kafka") || !strings.Contains(s, "Iceberg") {
		t.Errorf("stream's summary does not name Kafka and Iceberg sources: %q", s)
	}
	for _, group := range []string{"checkpoint", "maintain"} {
		summary := commandSummary(t, help, group)
		cols := subcommandColumns(e.OK(group, "--help").Stdout)
		if len(cols) < 3 {
			t.Fatalf("floe %s --help lists %d subcommands: %v", group, len(cols), cols)
		}
		first := -1
		for name, col := range cols {
			if !strings.Contains(summary, name) {
				t.Errorf("floe --help: %s's summary %q leaves out %s", group, summary, name)
			}
			if first == -1 {
				first = col
			}
			if col != first || col < 2+len(name)+1 {
				t.Errorf("floe %s --help: summaries start at columns %v, want one column past the longest name", group, cols)
				break
			}
		}
	}
}

// stream --help names every source format and the read options of the
// Iceberg and Kafka sources, with Spark's names.
func TestStreamHelpSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	help := e.OK("stream", "--help").Stdout
	usage, _, _ := strings.Cut(help, "\n")
	if entry := helpEntries(t, help)["--format FORMAT"]; !strings.Contains(entry, "--source-type kafka") || !strings.Contains(entry, "protobuf") {
		t.Errorf("floe stream --help: --format does not describe Kafka's message formats: %q", entry)
	}
	for _, format := range []string{"parquet", "csv", "json", "debezium-json", "avro", "kafka", "debezium-avro", "protobuf", "json-schema"} {
		if !regexp.MustCompile(`[ |]` + format + `[|\]]`).MatchString(usage) {
			t.Errorf("floe stream --help's usage leaves out format %s: %s", format, usage)
		}
	}
	for _, option := range []string{
		"kafka.bootstrap.servers", "subscribe", "subscribePattern", "assign", "startingOffsets", "startingTimestamp",
		"endingOffsets", "maxOffsetsPerTrigger", "failOnDataLoss", "includeHeaders", "schema.registry.url", "kafka.group.id",
		"streaming-max-files-per-micro-batch", "stream-from-timestamp",
	} {
		if !strings.Contains(help, "\n  "+option+"\n        ") {
			t.Errorf("floe stream --help does not describe -o %s", option)
		}
	}
}

// --version and -version print what floe version prints.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := e.OK("version").Stdout
	if !strings.HasPrefix(want, "floe ") {
		t.Fatalf("floe version printed %q", want)
	}
	for _, flag := range []string{"--version", "-version"} {
		if r := e.OK(flag); r.Stdout != want {
			t.Errorf("floe %s printed %q, floe version %q", flag, r.Stdout, want)
		}
	}
}

// A pipeline file that does not exist is a usage error naming the file.
func TestRunMissingFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, cmd := range [][]string{{"run", "missing.yaml"}, {"checkpoint", "verify", "missing.yaml"}} {
		r := e.Run(cmd...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "missing.yaml does not exist") {
			t.Errorf("floe %s: want exit 2 naming the file, got %s", strings.Join(cmd, " "), r)
		}
	}
}

// A mistyped command, subcommand, flag or table is a usage mistake whose
// message names what was most likely meant.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sacn", "db.events"}, 2, `unknown command "sacn"; did you mean "scan"?`},
		{[]string{"tabel", "list"}, 2, `did you mean "table"?`},
		{[]string{"table", "snapshot", "db.events"}, 2, `table has no subcommand "snapshot"; did you mean "snapshots"?`},
		{[]string{"maintain", "expire-snapshot", "db.events"}, 2, `did you mean "expire-snapshots"?`},
		{[]string{"checkpoint", "verfy", "p.yaml"}, 2, `did you mean "verify"?`},
		{[]string{"stream", "--checkpiont", "ckpt"}, 2, "stream has no flag --checkpiont; did you mean --checkpoint?"},
		{[]string{"scan", "db.events", "--cuont"}, 2, "scan has no flag --cuont; did you mean --count?"},
		{[]string{"table", "describe", "db.events", "--jsno"}, 2, "table describe has no flag --jsno; did you mean --json?"},
		{[]string{"completion", "bsh"}, 2, "did you mean bash?"},
		{[]string{"scan", "db.events", "--no-such-thing"}, 2, "scan has no flag --no-such-thing; floe scan --help lists the flags"},
		{[]string{"scan", "db.events", "--output-format", "jsn"}, 2, `--output-format "jsn" is not known; did you mean jsonl?`},
		{[]string{"stream", "--source", "landing", "--format", "csv", "--table", "db.t", "--checkpoint", "ck", "-o", "maxFilesPerTrigger=5"}, 2,
			"-o maxFilesPerTrigger=5 is not an option of a landing directory; give it as the flag --max-files-per-trigger=5"},
	} {
		r := e.Run(c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("floe %s: want exit %d and %q, got %s", strings.Join(c.args, " "), c.code, c.want, r)
		}
		if strings.Contains(r.Stderr, "flag provided but not defined") {
			t.Errorf("floe %s: the flag package's message reached the user: %s", strings.Join(c.args, " "), r.Stderr)
		}
	}

	e.WriteIDs("a.parquet", 0, 10)
	e.Stream("db.events")
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.users", "--checkpoint", e.Ckpt+"-users")
	for _, args := range [][]string{
		{"scan", "db.evnts", "--count"},
		{"table", "describe", "db.evnts"},
		{"table", "refs", "db.evnts"},
		{"maintain", "expire-snapshots", "db.evnts"},
		{"maintain", "rewrite-manifests", "db.evnts"},
	} {
		r := e.Run(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "did you mean db.events?") || !strings.Contains(r.Stderr, "namespace db also has db.users;") ||
			strings.Count(r.Stderr, "db.events") != 1 {
			t.Errorf("floe %s: want exit 2, the table meant once and the namespace's other tables, got %s", strings.Join(args, " "), r)
		}
	}
	if r := e.Run("scan", "dbb.events", "--count"); r.Code == 0 || !strings.Contains(r.Stderr, "did you mean db.events?") {
		t.Errorf("floe scan dbb.events: want the table meant in another namespace, got %s", r)
	}
	if r := e.Run("scan", "db.zzzzzzzz", "--count"); r.Code == 0 || strings.Contains(r.Stderr, "did you mean") ||
		!strings.Contains(r.Stderr, "table db.zzzzzzzz does not exist") {
		t.Errorf("floe scan db.zzzzzzzz: want no suggestion, got %s", r)
	}
}

// A table that does not exist is a name on the command line that names
// nothing: every command that takes a table exits 2, as for a missing
// warehouse, and suggests the table meant.
func TestMissingTableIsUsageError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK(e.StreamArgs("db.events")...)
	for _, args := range [][]string{
		{"scan", "db.evnts"},
		{"scan", "db.evnts", "--count"},
		{"table", "describe", "db.evnts"},
		{"table", "snapshots", "db.evnts"},
		{"table", "files", "db.evnts"},
		{"table", "history", "db.evnts"},
		{"table", "health", "db.evnts"},
		{"table", "refs", "db.evnts"},
		{"table", "drop", "db.evnts"},
		{"table", "create-branch", "db.evnts", "b"},
		{"table", "create-tag", "db.evnts", "t"},
		{"table", "rollback", "db.evnts", "1"},
		{"table", "set-current", "db.evnts", "1"},
		{"table", "fast-forward", "db.evnts", "main", "b"},
		{"table", "cherrypick", "db.evnts", "1"},
		{"table", "set-partition-spec", "db.evnts", "--partition-fields", "id"},
		{"maintain", "expire-snapshots", "db.evnts"},
		{"maintain", "rewrite-data-files", "db.evnts"},
		{"maintain", "convert-equality-deletes", "db.evnts"},
		{"maintain", "rewrite-manifests", "db.evnts"},
		{"maintain", "remove-orphan-files", "db.evnts"},
	} {
		r := e.Run(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "table db.evnts does not exist") {
			t.Errorf("floe %s: want exit 2 naming the missing table, got %s", strings.Join(args, " "), r)
		}
	}
	if r := e.Run("scan", "db.events", "--warehouse", filepath.Join(e.Dir, "nowhere")); r.Code != 2 {
		t.Errorf("a missing warehouse: want exit 2, got %s", r)
	}
}

// With a pipeline file, checkpoint verify and rebuild take only floe
// run's flags: one that gives the pipeline as flags is refused saying so,
// not as a flag the command lacks, since its help lists it.
func TestCheckpointFlagsWithPipelineFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, sub := range []string{"verify", "rebuild"} {
		for _, flag := range []string{"--mode", "--table"} {
			r := e.Run("checkpoint", sub, "quickstart.yaml", flag, "x")
			want := flag + " is set by the pipeline file quickstart.yaml; with a pipeline file, checkpoint " + sub + " takes only the flags of floe run"
			if r.Code != 2 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "has no flag") {
				t.Errorf("floe checkpoint %s quickstart.yaml %s x: want exit 2 and %q, got %s", sub, flag, want, r)
			}
		}
		help := e.Run("checkpoint", sub, "--help")
		if !strings.Contains(help.Stdout+help.Stderr, "With a pipeline file, only the flags floe run takes apply") {
			t.Errorf("floe checkpoint %s --help does not say which flags go with a pipeline file:\n%s", sub, help)
		}
	}
	if r := e.Run("checkpoint", "verify", "quickstart.yaml", "--no-such-flag"); r.Code != 2 || !strings.Contains(r.Stderr, "has no flag --no-such-flag") {
		t.Errorf("a flag neither form takes: %s", r)
	}
}

// table register takes a table's directory as well as a metadata file,
// and its usage says so.
func TestTableRegisterUsageNamesDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	help := e.Run("table", "register", "--help")
	if out := help.Stdout + help.Stderr; !strings.Contains(out, "table register NS.TABLE (METADATA_FILE | TABLE_DIR)") ||
		!strings.Contains(out, "newest metadata file") {
		t.Errorf("table register --help:\n%s", out)
	}
	if r := e.Run("table", "register", "db.t"); r.Code != 2 || !strings.Contains(r.Stderr, "a metadata file or table directory (its newest metadata file)") {
		t.Errorf("table register with one argument: %s", r)
	}
}

// The completion scripts and the man page go to stdout, for redirecting
// into a file.
func TestCompletionAndManOnStdout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ args, prefix string }{
		{"completion bash", "# bash completion for floe"},
		{"completion zsh", "#compdef floe\n"},
		{"completion fish", "# fish completion for floe"},
		{"man", ".TH FLOE 1 "},
	} {
		r := e.OK(strings.Fields(c.args)...)
		if !strings.HasPrefix(r.Stdout, c.prefix) || r.Stderr != "" {
			t.Errorf("floe %s: want stdout starting %q and nothing on stderr, got %s", c.args, c.prefix, r)
		}
	}
}
