package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// A run that finds its pending batch already in the table (the stopped
// run committed it) reports it as found, not as rows it committed.
func TestRecoveredBatchIsNotCountedAsCommitted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=1"}, e.StreamArgs("db.t", "--progress", "summary")...); r.Code != 137 {
		t.Fatalf("want the crash hook's exit 137, got %s", r)
	}
	r := e.OK(e.StreamArgs("db.t", "--progress", "summary")...)
	if !strings.Contains(r.Stderr, "no new input; nothing committed to db.t; 1 batch the stopped run had committed to db.t found there and recorded") {
		t.Fatalf("the summary of a run that only recorded a batch the stopped run committed:\n%s", r.Stderr)
	}
	e.exactly("db.t", 100)
}

// A stream whose batch keeps failing names that batch in every retry
// warning, not batch 0 once its recovery has failed too.
func TestRetryWarningsNameTheFailedBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	e.land(1)
	e.OK(e.StreamArgs("db.t", "--max-files-per-trigger", "1")...)
	e.OK(e.StreamArgs("db.t", "--max-files-per-trigger", "1")...)
	// A file where the table's data directory was: every write fails until
	// it is a directory again.
	data := filepath.Join(e.Warehouse, "db.db", "t", "data")
	if err := os.Rename(data, data+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.land(2)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, e.StreamArgs("db.t", "--trigger", "processing-time=100ms", "--progress", "summary")...)
	defer cmd.Process.Kill()
	failed := regexp.MustCompile(`batch (\d+) failed \(\d+ in a row\), retrying`)
	fixture.WaitFor(t, 30*time.Second, "three retry warnings", func() bool {
		return len(failed.FindAllString(stderr.String(), -1)) >= 3
	})
	for _, m := range failed.FindAllStringSubmatch(stderr.String(), -1) {
		if n, _ := strconv.Atoi(m[1]); n != 2 {
			t.Fatalf("a retry warning names batch %d; batch 2 is the one failing:\n%s", n, stderr.String())
		}
	}
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(data+".away", data); err != nil {
		t.Fatal(err)
	}
	fixture.WaitFor(t, 60*time.Second, "the batch once the directory is back", func() bool { return len(e.TableIDs("db.t")) == 300 })
	e.exactly("db.t", 300)
}

// A table whose metadata files were deleted is not a passing outage: the
// stream stops and names the repair instead of retrying forever.
func TestDeletedTableMetadataStopsTheStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	e.OK(e.StreamArgs("db.t")...)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, e.StreamArgs("db.t", "--trigger", "processing-time=100ms", "--progress", "summary")...)
	defer cmd.Process.Kill()
	metas, _ := filepath.Glob(filepath.Join(e.Warehouse, "db.db", "t", "metadata", "*.metadata.json"))
	for _, m := range metas {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
	e.land(1)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the stream still retries a table whose metadata is gone:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(stderr.String(), "floe table register") {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
}

// An idle stream with a tiny trigger interval does not list its source in
// a busy loop.
func TestTinyTriggerDoesNotSpin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, e.StreamArgs("db.t", "--trigger", "1ns", "--progress", "summary")...)
	defer cmd.Process.Kill()
	fixture.WaitFor(t, 20*time.Second, "the first file", func() bool { return len(e.TableIDs("db.t")) == 100 })
	before := cpuTime(t, cmd.Process.Pid)
	time.Sleep(2 * time.Second)
	used := cpuTime(t, cmd.Process.Pid) - before
	// A busy loop uses the whole 2 s; polling every 100 ms a few ms.
	if used > 500*time.Millisecond {
		t.Fatalf("an idle stream with --trigger 1ns used %v of CPU in 2 s", used)
	}
}

// cpuTime is the user and system time a process has used, from /proc.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 14th and 15th fields of the line.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}
