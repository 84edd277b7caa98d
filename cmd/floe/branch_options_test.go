package main_test

import (
	"strings"
	"testing"
)

// Spark's branch write options, -o branch=NAME and -o
// spark.wap.branch=NAME, are in stream's help among the write options, and
// a run that commits to a branch says so in its summary: main does not
// change, so "committed to db.t" alone would send the reader to an empty
// main.
func TestBranchWriteOptionsShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	help := e.OK("stream", "--help").Stdout
	_, section, ok := strings.Cut(help, "\nWrite options")
	if !ok {
		t.Fatalf("stream --help has no write options section:\n%s", help)
	}
	section, _, _ = strings.Cut(section, "\n\n")
	for _, o := range []string{"\n  branch\n", "\n  spark.wap.branch\n", "\n  snapshot-property.KEY\n"} {
		if !strings.Contains(section, o) {
			t.Errorf("stream --help's write options do not list %q:\n%s", strings.TrimSpace(o), section)
		}
	}

	e.WriteIDs("a.parquet", 0, 10)
	for _, opt := range []string{"branch=audit", "spark.wap.branch=audit"} {
		r := e.OK(e.StreamArgs("db.t", "-o", opt)...)
		if !strings.Contains(r.Stderr, "committed to db.t (branch audit)") {
			t.Errorf("-o %s: the summary does not name the branch:\n%s", opt, r.Stderr)
		}
	}
	if n := len(e.Snapshots("db.t")); n != 1 {
		t.Errorf("db.t has %d snapshots, want 1: the batch on branch audit", n)
	}
}
