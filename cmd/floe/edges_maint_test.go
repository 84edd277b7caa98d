package main_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

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
