package main_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// syncBuffer collects a background process's output while the test reads it.
type syncBuffer = fixture.SyncBuffer

var crashKills = flag.Int("crash-kills", 20, "how many times TestCrashSafety kills floe with SIGKILL")

// startFloe starts floe in the background; the caller signals or kills it.
func (e *env) startFloe(stderr *syncBuffer, args ...string) *exec.Cmd {
	e.T.Helper()
	cmd := exec.Command(floeBin, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), "FLOE_WAREHOUSE="+e.Warehouse)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	return cmd
}

// runOrKill runs floe with args and kills it (SIGKILL) once delay has
// passed, unless it finished first; it tells whether it killed it, and
// fails the test when floe finished with an error.
func (e *env) runOrKill(delay time.Duration, args ...string) bool {
	e.T.Helper()
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, args...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 0 {
			e.T.Fatalf("floe failed on a restart after kills (exit %d):\n%s", code, stderr.String())
		}
		return false
	case <-time.After(delay):
		_ = cmd.Process.Kill()
		<-done
		return true
	}
}

// killWhileFeeding runs floe with args and kills it with SIGKILL at
// random, 20 times (or -fault-rounds), while feed adds records 0, 1, ...
// in chunks of 100 to 999; every fifth run lives until it committed a
// batch, so that the runs make progress on a loaded machine. It returns
// how many records it fed and the kills.
func killWhileFeeding(t *testing.T, e *env, rng *rand.Rand, feed func(first, n int64), args ...string) (fed int64, kills int) {
	t.Helper()
	for tries := 0; kills < 20*max(1, *faultRounds/20); tries++ {
		if tries > 200 {
			t.Fatalf("only %d of %d runs were killed while running", kills, tries)
		}
		var stderr syncBuffer
		cmd := e.startFloe(&stderr, args...)
		for range 1 + rng.IntN(4) {
			n := int64(100 + rng.IntN(900))
			feed(fed, n)
			fed += n
			time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		}
		for deadline := time.Now().Add(30 * time.Second); tries%5 == 0 && !strings.Contains(stderr.String(), "snapshot") && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != -1 {
			t.Fatalf("run %d exited %d before it was killed:\n%s", tries, code, stderr.String())
		}
		kills++
	}
	return fed, kills
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// checkpointConsistent asserts every planned batch committed.
func (e *env) checkpointConsistent(ckpt string) {
	e.T.Helper()
	r := e.OK("checkpoint", "show", ckpt, "--json")
	var out struct {
		LatestOffsets *struct{ BatchID int64 } `json:"latestOffsets"`
		LatestCommit  *struct{ BatchID int64 } `json:"latestCommit"`
		Pending       *int64                   `json:"pendingBatch"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		e.T.Fatal(err)
	}
	if out.Pending != nil || out.LatestOffsets == nil || out.LatestCommit == nil || out.LatestOffsets.BatchID != out.LatestCommit.BatchID {
		e.T.Fatalf("checkpoint not consistent after a graceful stop:\n%s", r.Stdout)
	}
}

// processing-time: a file dropped in while floe runs lands within the
// trigger interval plus a batch; SIGTERM stops cleanly; a restart ingests
// nothing twice.
func TestProcessingTimeAndGracefulStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("first.parquet", 0, 1000)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, "stream", "--source", e.Landing, "--format", "parquet", "--table", "db.live",
		"--checkpoint", e.Ckpt, "--trigger", "processing-time=1s", "--progress=json")
	defer cmd.Process.Kill()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("floe's stderr:\n%s", stderr.String())
		}
	})
	fixture.WaitFor(t, 20*time.Second, "the first file", func() bool {
		r := e.Run("scan", "db.live", "--count")
		return r.Code == 0 && r.Stdout == "1000\n"
	})

	e.WriteIDs("second.parquet", 1000, 1000)
	took := fixture.WaitFor(t, 10*time.Second, "the dropped file", func() bool {
		r := e.Run("scan", "db.live", "--count")
		return r.Code == 0 && r.Stdout == "2000\n"
	})
	t.Logf("dropped file visible in the table after %v", took)
	if took > 3*time.Second {
		t.Errorf("dropped file took %v to land; want within 3s of a 1s trigger", took)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 0 {
		t.Fatalf("after SIGTERM floe exited %d, want 0; stderr:\n%s", code, stderr.String())
	}
	e.checkpointConsistent(e.Ckpt)

	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.live", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if ids := e.IDs("db.live"); len(ids) != 2000 {
		t.Fatalf("after restart: %d distinct ids, want 2000", len(ids))
	}
}

// Crash safety: SIGKILL at random moments during an ingest, restart, repeat;
// every row must end up in the table exactly once.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 60, 500
	for i := range int64(files) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*rows, rows)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.crash",
		"--checkpoint", e.Ckpt, "--trigger", "available-now", "--max-files-per-trigger", "2"}
	kills, finished := 0, 0
	for kills < *crashKills {
		if e.runOrKill(time.Duration(rng.IntN(400))*time.Millisecond, args...) {
			kills++
			continue
		}
		finished++
		// All input is in: add more so later kills still hit work.
		base := int64(files+(finished-1)*10) * rows
		for j := range int64(10) {
			e.WriteIDs(fmt.Sprintf("g-%03d-%02d.parquet", finished, j), base+j*rows, rows)
		}
	}
	e.OK(args...)
	total := int64(files+finished*10) * rows
	ids := e.IDs("db.crash")
	if int64(len(ids)) != total {
		t.Fatalf("after %d kills: %d distinct ids, want %d", kills, len(ids), total)
	}
	if n := e.Count("db.crash"); n != total {
		t.Fatalf("after %d kills: %d rows, want %d", kills, n, total)
	}
	for id := range total {
		if !ids[id] {
			t.Fatalf("id %d is missing", id)
		}
	}
	t.Logf("%d kills, %d runs that finished, %d rows exactly once", kills, finished, total)
}

// Two processes writing different landing directories into one table at the
// same time: every batch of both lands and neither fails.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dirs := []string{filepath.Join(e.Dir, "landing-a"), filepath.Join(e.Dir, "landing-b")}
	var cmds []*exec.Cmd
	var errs []*syncBuffer
	for i, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		var stderr syncBuffer
		errs = append(errs, &stderr)
		cmds = append(cmds, e.startFloe(&stderr, "stream", "--source", d, "--format", "parquet", "--table", "db.shared",
			"--checkpoint", filepath.Join(e.Dir, "ckpt-"+strconv.Itoa(i)), "--trigger", "1s"))
	}
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
		}
	}()
	const rows = 1000
	var total int64
	deadline := time.Now().Add(20 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		for i, d := range dirs {
			id := total
			if err := fixture.WriteIDFile(filepath.Join(d, fmt.Sprintf("f-%03d.parquet", n)), id, rows); err != nil {
				t.Fatal(err)
			}
			total += rows
			_ = i
		}
		time.Sleep(700 * time.Millisecond)
	}
	// Let the last files land, then stop both.
	fixture.WaitFor(t, 30*time.Second, "every file", func() bool {
		r := e.Run("scan", "db.shared", "--count")
		return r.Code == 0 && r.Stdout == strconv.FormatInt(total, 10)+"\n"
	})
	for i, c := range cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
		if code := exitCode(c.Wait()); code != 0 {
			t.Fatalf("writer %d exited %d:\n%s", i, code, errs[i].String())
		}
	}
	if ids := e.IDs("db.shared"); int64(len(ids)) != total {
		t.Fatalf("%d distinct ids, want %d", len(ids), total)
	}
	snaps := e.Snapshots("db.shared")
	queries := map[string]int{}
	for _, s := range snaps {
		if s.Operation == "append" { // the writers' maintenance adds replace snapshots
			queries[s.Summary["floe.query-id"]]++
		}
	}
	if len(queries) != 2 {
		t.Fatalf("snapshots come from %d queries, want 2: %v", len(queries), queries)
	}
	t.Logf("%d rows in %d snapshots from two writers", total, len(snaps))
}

// Two runs of one query at once (a scheduled job overlapping its previous
// run) would plan the same batch twice: the second is refused.
func TestCheckpointIsLocked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	var stderr syncBuffer
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.lock", "--checkpoint", e.Ckpt, "--trigger", "1s"}
	cmd := e.startFloe(&stderr, args...)
	defer cmd.Process.Kill()
	fixture.WaitFor(t, 20*time.Second, "the first run's batch", func() bool {
		r := e.Run("scan", "db.lock", "--count")
		return r.Code == 0 && r.Stdout == "100\n"
	})
	r := e.Run(args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "in use by another floe run") {
		t.Fatalf("a second run on a busy checkpoint: %s", r)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(cmd.Wait()); code != 0 {
		t.Fatalf("first run exited %d:\n%s", code, stderr.String())
	}
	e.OK(append(args[:len(args)-2], "--trigger", "once")...)
	if n := e.Count("db.lock"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
}

// A processing-time stream outlives a landing directory that is briefly
// gone: it warns, backs off, and picks up where it was.
func TestProcessingTimeSurvivesTransientFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, "stream", "--source", e.Landing, "--format", "parquet", "--table", "db.flaky",
		"--checkpoint", e.Ckpt, "--trigger", "500ms")
	defer cmd.Process.Kill()
	count := func(want string) func() bool {
		return func() bool {
			r := e.Run("scan", "db.flaky", "--count")
			return r.Code == 0 && r.Stdout == want+"\n"
		}
	}
	fixture.WaitFor(t, 20*time.Second, "the first file", count("100"))
	aside := e.Landing + ".aside"
	if err := os.Rename(e.Landing, aside); err != nil {
		t.Fatal(err)
	}
	fixture.WaitFor(t, 10*time.Second, "a warning about the failed batch", func() bool {
		return strings.Contains(stderr.String(), "retrying in")
	})
	if err := os.Rename(aside, e.Landing); err != nil {
		t.Fatal(err)
	}
	e.WriteIDs("b.parquet", 100, 100)
	fixture.WaitFor(t, 20*time.Second, "the file dropped after the failure", count("200"))
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(cmd.Wait()); code != 0 {
		t.Fatalf("floe exited %d:\n%s", code, stderr.String())
	}
	if ids := e.IDs("db.flaky"); len(ids) != 200 {
		t.Fatalf("%d distinct ids, want 200", len(ids))
	}
}

// paused is a floe run stopped in place of its first catalog commit
// (the floetest build's FLOE_TEST_PAUSE_IN_CATALOG_COMMIT), its files and
// manifests written: a test steps in, then resumes it.
type paused struct {
	dir    string
	out    *syncBuffer
	exited chan error
}

// startPaused starts floe with args and waits until it is paused in its
// commit, failing the test if it ends or takes a minute first.
func (e *env) startPaused(args ...string) *paused {
	e.T.Helper()
	p := &paused{dir: e.T.TempDir(), out: &syncBuffer{}, exited: make(chan error, 1)}
	cmd := e.Command(floeBin, []string{"FLOE_TEST_PAUSE_IN_CATALOG_COMMIT=" + p.dir}, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(p.dir, "paused")); err == nil {
			return p
		}
		select {
		case err := <-p.exited:
			e.T.Fatalf("floe %v ended before its commit: %v\n%s", args, err, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("floe %v did not reach its commit\n%s", args, p.out.String())
		}
	}
}

// resume lets the paused run commit and waits for its end.
func (p *paused) resume(t *testing.T) error {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, "resume"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return <-p.exited
}

// SIGTERM while the pipeline is still opening (a pod stopped as it starts,
// its catalog slow to answer) stops it before its first batch with exit 0,
// as a stop between batches does, not by the signal's default death.
func TestStopWhileOpening(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("first.parquet", 0, 10)
	// A catalog that takes connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			t.Cleanup(func() { c.Close() })
		}
	}()
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, "stream", "--source", e.Landing, "--format", "parquet", "--table", "db.live",
		"--checkpoint", e.Ckpt, "--trigger", "processing-time=1s", "--catalog-type", "rest", "--catalog-uri", "http://"+ln.Addr().String())
	defer cmd.Process.Kill()
	fixture.WaitFor(t, 20*time.Second, "floe to ask the catalog", func() bool { return accepted.Load() > 0 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 0 || !strings.Contains(stderr.String(), "stopped before the first batch") {
		t.Fatalf("SIGTERM while opening: exit %d, want 0 saying it stopped before the first batch; stderr:\n%s", code, stderr.String())
	}
}
