package main_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// expectedChanges are the changes from one state of an upsert table to
// the next, as "TYPE|id|v" sorted: a key that appears is inserted, one
// that goes is deleted, one whose value changed is updated (a before and
// an after row), one whose value stayed is no change.
func expectedChanges(before, after map[int64]string) []string {
	var out []string
	for id, v := range before {
		w, ok := after[id]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("DELETE|%d|%s", id, v))
		case w != v:
			out = append(out, fmt.Sprintf("UPDATE_BEFORE|%d|%s", id, v), fmt.Sprintf("UPDATE_AFTER|%d|%s", id, w))
		}
	}
	for id, w := range after {
		if _, ok := before[id]; !ok {
			out = append(out, fmt.Sprintf("INSERT|%d|%s", id, w))
		}
	}
	slices.Sort(out)
	return out
}

// changeGroups groups changelog rows ("ORDER|SNAPSHOT|TYPE|id|v") by
// snapshot, in the order of their ordinals, each group's rows sorted.
func changeGroups(t *testing.T, rows []string) [][]string {
	t.Helper()
	type group struct {
		order int64
		rows  []string
	}
	bySnap := map[string]*group{}
	for _, r := range rows {
		f := strings.SplitN(r, "|", 3)
		order, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("changelog row %q: ordinal %v", r, err)
		}
		g := bySnap[f[1]]
		if g == nil {
			g = &group{order: order}
			bySnap[f[1]] = g
		}
		if g.order != order {
			t.Fatalf("snapshot %s has ordinals %d and %d", f[1], g.order, order)
		}
		g.rows = append(g.rows, f[2])
	}
	groups := slices.Collect(maps.Values(bySnap))
	slices.SortFunc(groups, func(a, b *group) int { return int(a.order - b.order) })
	out := make([][]string, len(groups))
	for i, g := range groups {
		slices.Sort(g.rows)
		out[i] = g.rows
	}
	return out
}

// The changelog of an upsert table over 20 batches of random changes
// (inserts, updates, deletes of 300 keys), with a compaction after the
// tenth, equals the changes between the oracle's states batch by batch,
// as `floe scan --changelog` prints it and as a changelog stream (killed
// once, run again, and run after more batches) writes it to a table read
// by iceberg-go; on format-version 3
// (deletion vectors) and 2 (equality deletes). The compaction is no
// change.
func TestUpsertChangelog(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"3", "2"} {
		t.Run("v"+version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(35, 300)
			states := []map[int64]string{{}}
			batches := func(n int) {
				for range n {
					g.File(t, e.Landing, 120)
					states = append(states, maps.Clone(g.Oracle))
				}
				e.OK(e.upsertArgs("--format-version", version, "--max-files-per-trigger", "1", "--maintenance=false")...)
			}
			stream := []string{"stream", "--source-type", "iceberg", "--source-table", "db.t", "--changelog", "--table", "db.changes",
				"--checkpoint", filepath.Join(e.Dir, "changes-ckpt"), "--maintenance=false"}
			batches(10)
			// Killed after its second batch's commit, the stream is finished
			// by the next run, each change once.
			if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=2"}, append(stream, "-o", "streaming-max-files-per-micro-batch=3")...); r.Code != 137 {
				t.Fatalf("want the changelog stream killed after its second commit, got %s", r)
			}
			e.OK(stream...)
			e.OK("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2")
			if ops := snapshotOps(e, "db.t"); !slices.Contains(ops, "replace") {
				t.Fatalf("the compaction made no replace snapshot: %v", ops)
			}
			batches(10)
			e.OK(stream...)

			var want [][]string
			for i := 1; i < len(states); i++ {
				want = append(want, expectedChanges(states[i-1], states[i]))
			}
			// As a scan.
			r := e.OK("scan", "db.t", "--changelog", "--output-format", "jsonl")
			var scanned []string
			for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
				var row map[string]any
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatalf("changelog line %q: %v", line, err)
				}
				scanned = append(scanned, fmt.Sprintf("%v|%v|%v|%v|%v", row["_change_ordinal"], row["_commit_snapshot_id"], row["_change_type"], row["id"], row["v"]))
			}
			compareChanges(t, "scan --changelog", changeGroups(t, scanned), want)
			ordinals := map[string]bool{}
			for _, row := range scanned {
				ordinals[strings.SplitN(row, "|", 2)[0]] = true
			}
			for i := range want {
				if !ordinals[strconv.Itoa(i)] {
					t.Fatalf("no change has ordinal %d; ordinals %v, want 0 to %d (the compaction has none)", i, slices.Sorted(maps.Keys(ordinals)), len(want)-1)
				}
			}
			// As a stream, read by iceberg-go.
			streamed := dbzRows(t, e, "db.changes", "_change_ordinal", "_commit_snapshot_id", "_change_type", "id", "v")
			compareChanges(t, "the changelog stream", changeGroups(t, streamed), want)
		})
	}
}

func compareChanges(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: changes of %d snapshots, want %d batches", what, len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("%s: batch %d's changes:\n%s\nwant:\n%s", what, i, strings.Join(got[i], "\n"), strings.Join(want[i], "\n"))
		}
	}
}

// snapshotOps are the operations of a table's snapshots.
func snapshotOps(e *env, table string) []string {
	var ops []string
	for _, s := range e.Snapshots(table) {
		ops = append(ops, s.Operation)
	}
	return ops
}

// A changelog stream that keeps running reads the snapshots committed
// after it started, each once.
func TestChangelogStreamRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(36, 100)
	states := []map[int64]string{{}}
	batch := func() {
		g.File(t, e.Landing, 60)
		states = append(states, maps.Clone(g.Oracle))
		e.OK(e.upsertArgs("--maintenance=false")...)
	}
	batch()
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, "stream", "--source-type", "iceberg", "--source-table", "db.t", "--changelog", "--table", "db.changes",
		"--checkpoint", filepath.Join(e.Dir, "changes-ckpt"), "--trigger", "100ms", "--maintenance=false")
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	fixture.WaitFor(t, 60*time.Second, "the first snapshot's changes", func() bool { return strings.Contains(stderr.String(), "snapshot") })
	for range 3 {
		batch()
	}
	var want [][]string
	for i := 1; i < len(states); i++ {
		want = append(want, expectedChanges(states[i-1], states[i]))
	}
	fixture.WaitFor(t, 60*time.Second, "every snapshot's changes", func() bool {
		snaps := map[string]bool{}
		for _, row := range dbzRows(t, e, "db.changes", "_commit_snapshot_id") {
			snaps[row] = true
		}
		return len(snaps) >= len(want) || strings.Contains(stderr.String(), "floe:")
	})
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	compareChanges(t, "the running stream", changeGroups(t, dbzRows(t, e, "db.changes", "_change_ordinal", "_commit_snapshot_id", "_change_type", "id", "v")), want)
}
