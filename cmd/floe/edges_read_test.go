package main_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The binary's part of a scan's option errors: --limit and
// --as-of-timestamp are checked as flags, and an error package scan finds
// (scan.TestOptionErrors) exits 2 with its message, also with --count.
func TestScanOptionErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK(e.StreamArgs("db.t", "--trigger", "available-now")...)
	first := time.UnixMilli(e.Snapshots("db.t")[0].TimestampMs).UTC().Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--as-of-timestamp", "0", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--as-of-timestamp", "1970-01-01T00:00:00Z", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--keep", "nope"}, []string{`no column "nope"`}},
		{[]string{"--drop", "nope", "--count"}, []string{`drop`, `no column "nope"`}},
		{[]string{"--limit", "-1"}, []string{"--limit -1", "0 for all"}},
		{[]string{"--limit", "-1", "--count"}, []string{"--limit -1"}},
	} {
		r := e.Run(append([]string{"scan", "db.t"}, c.args...)...)
		ok := r.Code == 2
		for _, w := range c.want {
			ok = ok && strings.Contains(r.Stderr, w)
		}
		if !ok {
			t.Errorf("scan %v: want exit 2 naming %q, got %s", c.args, c.want, r)
		}
	}
	if n := e.Count("db.t"); n != 10 {
		t.Errorf("count %d, want 10", n)
	}
	r := e.OK("scan", "db.t", "--as-of-timestamp", strconv.FormatInt(e.Snapshots("db.t")[0].TimestampMs, 10), "--count")
	if strings.TrimSpace(r.Stdout) != "10" {
		t.Errorf("as of the first snapshot: %s", r.Stdout)
	}
}
