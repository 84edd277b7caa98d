package main_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"testing"

	"github.com/floe-io/floe/maintenance"
)

var unmaintainedBatches = flag.Int("unmaintained-batches", 150, "batches of TestMaintenanceRestoresUnmaintainedStream (the full scenario is 2000)")

type healthJSON struct {
	Snapshots  int     `json:"snapshots"`
	Manifests  int     `json:"manifests"`
	DataFiles  int     `json:"data_files"`
	DataBytes  int64   `json:"data_bytes"`
	SmallShare float64 `json:"small_file_share"`
	MetaFiles  int     `json:"metadata_files"`
	PlanMs     float64 `json:"plan_ms"`
	Recs       []struct {
		Kind string `json:"kind"`
	} `json:"recommendations"`
}

func (e *env) health(name string) healthJSON {
	e.T.Helper()
	r := e.OK("table", "health", name, "--json")
	var h healthJSON
	if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
		e.T.Fatalf("health --json: %v\n%s", err, r.Stdout)
	}
	return h
}

// TestMaintenanceRestoresUnmaintainedStream: the table a stream leaves after weeks without
// maintenance, shrunk: many batches of 100 rows, one snapshot, manifest
// and small file each. The health report shows the growth; then
// rewrite-data-files, rewrite-manifests, expire-snapshots and
// remove-orphan-files bring it back, with the same rows.
// -unmaintained-batches=2000 runs the full scenario (a few minutes).
// Not parallel: it compares planning times measured before and after.
func TestMaintenanceRestoresUnmaintainedStream(t *testing.T) {
	e := newEnv(t)
	n := *unmaintainedBatches
	for i := range int64(n) {
		e.WriteIDs(fmt.Sprintf("f-%05d.parquet", i), i*100, 100)
	}
	e.Stream("db.w", "--max-files-per-trigger", "1", "--maintenance=false")
	before := e.health("db.w")
	t.Logf("after %d batches: %+v", n, before)
	if before.Snapshots != n || before.DataFiles != n || before.Manifests != n || before.SmallShare != 1 {
		t.Fatalf("health after %d batches: %+v; want %d snapshots, data files and manifests, all small", n, before, n)
	}
	kinds := map[string]bool{}
	for _, r := range before.Recs {
		kinds[r.Kind] = true
	}
	// Shrunk, the weeks are seconds: too short a history for a rate, so
	// expiry is advised by the count alone.
	if !kinds["rewrite-data-files"] || kinds["expire-snapshots"] != (n > maintenance.MaxHealthySnapshots) {
		t.Fatalf("recommendations %v after %d batches, want rewrite-data-files and, past %d snapshots, expire-snapshots", kinds, n, maintenance.MaxHealthySnapshots)
	}
	rows, sum := e.contents("db.w")

	const retain = 10
	e.OK("maintain", "rewrite-data-files", "db.w")
	e.OK("maintain", "rewrite-manifests", "db.w")
	e.OK("maintain", "expire-snapshots", "db.w", "--older-than", "0s", "--retain-last", fmt.Sprint(retain))
	e.OK("maintain", "remove-orphan-files", "db.w", "--older-than", "0s", "--writers-stopped")
	after := e.health("db.w")
	t.Logf("after maintenance: %+v", after)
	const target = 512 << 20
	if max := int((after.DataBytes+target-1)/target) + 1; after.DataFiles > max {
		t.Errorf("%d data files, want at most %d", after.DataFiles, max)
	}
	if after.Snapshots > retain {
		t.Errorf("%d snapshots, want at most %d", after.Snapshots, retain)
	}
	if after.Manifests > 5 {
		t.Errorf("%d manifests, want at most 5", after.Manifests)
	}
	if after.PlanMs >= before.PlanMs {
		t.Errorf("full-scan planning took %.1f ms before and %.1f ms after", before.PlanMs, after.PlanMs)
	}
	t.Logf("planning a full scan: %.1f ms before, %.1f ms after (%.1fx faster)", before.PlanMs, after.PlanMs, before.PlanMs/after.PlanMs)
	if r2, s2 := e.contents("db.w"); r2 != rows || s2 != sum {
		t.Fatalf("after maintenance: %d rows, checksum %x; before: %d, %x", r2, s2, rows, sum)
	}
}
