package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// The health report's expiry advice, run as printed, brings the snapshot
// count down to the level it names, on a table whose snapshots are all
// younger than Iceberg's 5-day default (the rate is what is unhealthy).
func TestHealthExpireAdviceExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 30
	for i := range int64(n) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*10, 10)
	}
	e.Stream("db.t", "--max-files-per-trigger", "1", "--maintenance=false")
	var h struct {
		Snapshots int `json:"snapshots"`
		Recs      []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "health", "db.t", "--json").Stdout), &h); err != nil {
		t.Fatal(err)
	}
	if h.Snapshots != n {
		t.Fatalf("%d snapshots, want %d", h.Snapshots, n)
	}
	var advice string
	for _, r := range h.Recs {
		if r.Kind == "expire-snapshots" {
			advice = r.Message
		}
	}
	cmd := regexp.MustCompile("`floe (maintain expire-snapshots [^`]*)`").FindStringSubmatch(advice)
	level := regexp.MustCompile(`keeps the newest (\d+)`).FindStringSubmatch(advice)
	if cmd == nil || level == nil {
		t.Fatalf("expire advice names no command and level: %q", advice)
	}
	e.OK(strings.Fields(cmd[1])...)
	if got := len(e.Snapshots("db.t")); fmt.Sprint(got) != level[1] {
		t.Fatalf("after `floe %s`: %d snapshots, the advice said %s (%s)", cmd[1], got, level[1], advice)
	}
	if msg := fixture.Exact(e.TableIDs("db.t"), 0, n*10); msg != "" {
		t.Fatal(msg)
	}
}

// remove-orphan-files beside a writer whose commit is in flight: an
// --older-than below an hour is refused unless --writers-stopped says no
// writer runs; and even with it (a writer the user forgot), the in-flight
// batch's data files and manifests are kept, so its commit leaves a
// readable table with every row once.
func TestRemoveOrphanFilesBesideAWriter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("f-000.parquet", 0, 100)
	e.Stream("db.t", "--maintenance=false")
	for _, older := range []string{"0s", "59m"} {
		r := e.Run("maintain", "remove-orphan-files", "db.t", "--older-than", older)
		if r.Code != 2 || !strings.Contains(r.Stderr, "--writers-stopped") || !strings.Contains(r.Stderr, "1h") {
			t.Fatalf("--older-than %s without --writers-stopped: %s", older, r)
		}
	}

	e.WriteIDs("f-001.parquet", 100, 100)
	pause := t.TempDir()
	writer := e.Command(floeBin, []string{"FLOE_TEST_PAUSE_IN_CATALOG_COMMIT=" + pause}, e.StreamArgs("db.t", "--maintenance=false")...)
	var out bytes.Buffer
	writer.Stdout, writer.Stderr = &out, &out
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- writer.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(pause, "paused")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the writer ended before its commit: %v\n%s", err, &out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer did not reach its commit\n%s", &out)
		}
	}

	var res struct {
		Paths    []string `json:"paths"`
		Deleted  int      `json:"deleted"`
		InFlight []string `json:"in_flight_files"`
	}
	r := e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "0s", "--writers-stopped", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 0 || len(res.InFlight) != 1 {
		t.Errorf("beside a commit in flight: deleted %d files %v, in flight %v; want none deleted, the batch's data file in flight", res.Deleted, res.Paths, res.InFlight)
	}
	if err := os.WriteFile(filepath.Join(pause, "resume"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("writer: %v\n%s", err, &out)
	}
	if msg := fixture.Exact(e.TableIDs("db.t"), 0, 200); msg != "" {
		t.Fatal(msg)
	}
	if r := e.OK("scan", "db.t", "--count"); strings.TrimSpace(r.Stdout) != "200" {
		t.Fatalf("scan --count: %s", r)
	}
	// Committed, the batch is no longer in flight, and nothing is an orphan.
	r = e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "0s", "--writers-stopped", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 0 || len(res.InFlight) != 0 {
		t.Fatalf("after the commit: %s", r)
	}
	if msg := fixture.Exact(e.TableIDs("db.t"), 0, 200); msg != "" {
		t.Fatal(msg)
	}
}
