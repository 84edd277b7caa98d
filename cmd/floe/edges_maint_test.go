package main_test

import (
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
// The table is a backfill's, registered with its 30 commits moved 2.5
// minutes apart: a rate is told only from an hour of history.
func TestHealthExpireAdviceExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 30
	for i := range int64(n) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*10, 10)
	}
	e.Stream("db.t", "--max-files-per-trigger", "1", "--maintenance=false")
	e.OK("table", "register", "db.r", editedMetadata(t, e, spaced(150*time.Second)))
	var h struct {
		Snapshots int `json:"snapshots"`
		Recs      []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"recommendations"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "health", "db.r", "--json").Stdout), &h); err != nil {
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
	if got := len(e.Snapshots("db.r")); fmt.Sprint(got) != level[1] {
		t.Fatalf("after `floe %s`: %d snapshots, the advice said %s (%s)", cmd[1], got, level[1], advice)
	}
	if msg := fixture.Exact(e.TableIDs("db.r"), 0, n*10); msg != "" {
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
	run := e.startPaused(e.StreamArgs("db.t", "--maintenance=false")...)

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
	if err := run.resume(t); err != nil {
		t.Fatalf("writer: %v\n%s", err, run.out.String())
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

// readerArgs is a stream reading db.src's appends into db.dst under the
// given checkpoint.
func (e *env) readerArgs(ckpt string, extra ...string) []string {
	return append([]string{"stream", "--source-table", "db.src", "--table", "db.dst", "--checkpoint", ckpt, "--trigger", "available-now"}, extra...)
}

// A reader of a table that a writer with default maintenance (expiry at 25
// snapshots, keeping 10) feeds, paused for 30 of the writer's batches:
// the writer's expiry keeps the snapshots the reader has not read, so it
// reads every row exactly once.
func TestIcebergReaderSurvivesWriterExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range int64(10) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*100, 100)
	}
	e.Stream("db.src", "--max-files-per-trigger", "1")
	reader := e.Ckpt + "-reader"
	e.OK(e.readerArgs(reader)...)
	if msg := fixture.Exact(e.TableIDs("db.dst"), 0, 1000); msg != "" {
		t.Fatalf("before the pause: %s", msg)
	}

	for i := int64(10); i < 40; i++ {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*100, 100)
	}
	e.Stream("db.src", "--max-files-per-trigger", "1")
	if n := len(e.Snapshots("db.src")); n >= 40 {
		t.Fatalf("db.src holds %d snapshots: the writer's maintenance expired none", n)
	}
	r := e.OK(e.readerArgs(reader)...)
	if msg := fixture.Exact(e.TableIDs("db.dst"), 0, 4000); msg != "" {
		t.Fatalf("after the pause: %s\n%s", msg, r)
	}
	if strings.Contains(r.Stderr, "expired") {
		t.Fatalf("the reader warned of expired snapshots:\n%s", r.Stderr)
	}
	// Caught up, the reader still pins only the snapshots after its position.
	e.WriteIDs("f-040.parquet", 4000, 100)
	e.Stream("db.src")
	if n := len(e.Snapshots("db.src")); n > 25 {
		t.Fatalf("db.src holds %d snapshots after the reader caught up, want at most 25", n)
	}
}

// Snapshots a reader has not read expired without its protection (its
// query released, as for a reader whose checkpoint is gone): the reader
// stops, naming the snapshots and the option, unless
// streaming-skip-expired-snapshots is set, which goes on with a warning
// naming the skipped snapshots.
func TestIcebergReaderStopsOnExpiredSnapshots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("f-000.parquet", 0, 100)
	e.Stream("db.src", "--maintenance=false")
	reader := e.Ckpt + "-reader"
	e.OK(e.readerArgs(reader)...)
	for i := int64(1); i < 6; i++ {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*100, 100)
	}
	e.Stream("db.src", "--max-files-per-trigger", "1", "--maintenance=false")

	var meta struct {
		ID string `json:"id"`
	}
	b, err := os.ReadFile(filepath.Join(reader, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.ID == "" {
		t.Fatalf("reader's checkpoint metadata %s: %v", b, err)
	}
	// Protected, the reader's snapshots survive an expiry of everything old.
	e.OK("maintain", "expire-snapshots", "db.src", "--older-than", "0s", "--retain-last", "1")
	if n := len(e.Snapshots("db.src")); n != 6 {
		t.Fatalf("%d snapshots after an expiry beside the reader, want its 6", n)
	}
	e.OK("maintain", "expire-snapshots", "db.src", "--older-than", "0s", "--retain-last", "2", "--release-query", meta.ID)
	if n := len(e.Snapshots("db.src")); n != 2 {
		t.Fatalf("%d snapshots after releasing the reader, want 2", n)
	}

	r := e.Run(e.readerArgs(reader)...)
	if r.Code == 0 || !strings.Contains(r.Stderr, "streaming-skip-expired-snapshots") || !strings.Contains(r.Stderr, "expired") {
		t.Fatalf("reader after its snapshots expired: %s\nwant a failure naming the expired snapshots and the option", r)
	}
	if msg := fixture.Exact(e.TableIDs("db.dst"), 0, 100); msg != "" {
		t.Fatalf("after the refusal: %s", msg)
	}
	r = e.OK(e.readerArgs(reader, "-o", "streaming-skip-expired-snapshots=true")...)
	if !strings.Contains(r.Stderr, "expired") || !strings.Contains(r.Stderr, "not read") {
		t.Fatalf("no warning naming the skipped snapshots:\n%s", r.Stderr)
	}
	ids := e.TableIDs("db.dst")
	if msg := fixture.Exact(ids, 0, 100); !strings.Contains(msg, "200 unexpected") {
		t.Fatalf("after skipping: %s; want the first 100 and the 200 of the 2 snapshots left", msg)
	}
	for id := int64(400); id < 600; id++ {
		if ids[id] != 1 {
			t.Fatalf("id %d occurs %d times after skipping", id, ids[id])
		}
	}
}
