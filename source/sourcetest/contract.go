package sourcetest

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
)

var noLimit source.ReadLimit

// oneUnit is a limit every source keeps to in its own unit: one part per
// batch where it counts files, else as little as it can.
func (r *run) oneUnit() source.ReadLimit {
	switch {
	case r.h.Limits.MaxFiles:
		return source.ReadLimit{MaxFiles: 1}
	case r.h.Limits.MaxRows:
		return source.ReadLimit{MaxRows: 1}
	case r.h.Limits.MaxBytes:
		return source.ReadLimit{MaxBytes: 1}
	}
	return noLimit
}

// The source implements exactly the capabilities its harness claims.
func testClaims(t *testing.T, r *run) {
	if got := of(r.src); got != r.h.Claims {
		t.Fatalf("the source implements %+v, its harness claims %+v: a claimed capability whose method signature slipped goes unchecked; fix the method or the claim", got, r.h.Claims)
	}
}

// InitialOffset is JSON, and the same on every call, once input arrived,
// and after batches and a restart.
func testInitialOffset(t *testing.T, r *run) {
	init := r.src.InitialOffset()
	if !json.Valid(init) {
		t.Fatalf("InitialOffset %q is not JSON", init)
	}
	if again := r.src.InitialOffset(); !bytes.Equal(init, again) {
		t.Fatalf("InitialOffset changed between calls: %s, then %s", init, again)
	}
	r.append(3)
	if got := r.src.InitialOffset(); !bytes.Equal(init, got) {
		t.Fatalf("InitialOffset changed once input arrived: %s, then %s", init, got)
	}
	r.drain(init, noLimit, nil)
	r.restart()
	if got := r.src.InitialOffset(); !bytes.Equal(init, got) {
		t.Fatalf("InitialOffset changed after a batch and a restart: %s, then %s", init, got)
	}
}

// LatestOffset without new input returns start itself, byte for byte,
// whatever the limit: the engine compares bytes to tell that no batch is
// due.
func testIdleLatestOffset(t *testing.T, r *run) {
	limits := []source.ReadLimit{noLimit, {MaxFiles: 1}, {MaxBytes: 1}, {MaxRows: 1}}
	idle := func(when string, start source.Offset) {
		t.Helper()
		for _, l := range limits {
			if got := r.latest(start, l); !bytes.Equal(got, start) {
				t.Fatalf("%s, LatestOffset(%s, %+v) = %s; want start unchanged", when, start, l, got)
			}
		}
	}
	start := r.src.InitialOffset()
	idle("on an empty input", start)
	r.append(2, 3)
	end := r.drain(start, noLimit, nil)
	idle("with every unit committed", end)
	r.restart()
	idle("after a restart", end)
}

// New input moves LatestOffset past start, and the range between holds
// the new rows.
func testLatestOffsetMoves(t *testing.T, r *run) {
	start := r.src.InitialOffset()
	r.append(4)
	end := r.latest(start, noLimit)
	if bytes.Equal(end, start) {
		t.Fatalf("4 rows appended, and LatestOffset(%s) returned start", start)
	}
	r.checkIDs("first batch", ids(r.read(start, end)), r.wrote)
	r.commit(end)
	r.append(2)
	next := r.latest(end, noLimit)
	if bytes.Equal(next, end) || bytes.Equal(next, start) {
		t.Fatalf("2 more rows appended after %s, and LatestOffset returned %s", end, next)
	}
	r.checkIDs("second batch", ids(r.read(end, next)), r.wrote[4:])
}

// A planned range reads the same parts, with the same names and rows in
// the same order, every time: twice in a row, and after a restart, which
// is how the engine re-runs a batch that did not commit.
func testReadDeterministic(t *testing.T, r *run) {
	start := r.src.InitialOffset()
	r.append(3, 1, 5)
	end := r.latest(start, noLimit)
	first := r.read(start, end)
	r.checkIDs("planned batch", ids(first), r.wrote)
	if again := r.read(start, end); !sameParts(first, again) {
		t.Fatalf("a second Read of (%s, %s] gave parts %v, the first %v", start, end, names(again), names(first))
	}
	r.restart()
	if after := r.read(start, end); !sameParts(first, after) {
		t.Fatalf("Read of (%s, %s] after a restart gave parts %v, before it %v", start, end, names(after), names(first))
	}
	r.commit(end)
	if got := r.latest(end, noLimit); !bytes.Equal(got, end) {
		t.Fatalf("the re-run batch was committed, and LatestOffset(%s) planned %s", end, got)
	}

	// A range cut short by a limit is as stable.
	r.append(2, 2, 2)
	limited := r.latest(end, source.ReadLimit{MaxFiles: 1, MaxBytes: 1, MaxRows: 1})
	first = r.read(end, limited)
	r.restart()
	if after := r.read(end, limited); !sameParts(first, after) {
		t.Fatalf("Read of (%s, %s] after a restart gave parts %v, before it %v", end, limited, names(after), names(first))
	}
	got := ids(first)
	r.commit(limited)
	r.drain(limited, noLimit, func(p []part) { got = append(got, ids(p)...) })
	r.checkIDs("rows after the first batch", got, r.wrote[9:])
}

// Committing an end twice, or again after a restart, changes nothing:
// the state stays byte for byte the same and nothing is planned again.
func testCommitIdempotent(t *testing.T, r *run) {
	start := r.src.InitialOffset()
	r.append(2, 2)
	end := r.latest(start, noLimit)
	r.read(start, end)
	r.commit(end)
	once := r.stateFiles()
	r.commit(end)
	if twice := r.stateFiles(); !maps.Equal(once, twice) {
		t.Fatalf("a second Commit(%s) changed the state: %v, then %v", end, once, twice)
	}
	if got := r.latest(end, noLimit); !bytes.Equal(got, end) {
		t.Fatalf("after committing %s twice, LatestOffset planned %s", end, got)
	}
	r.restart()
	r.commit(end)
	if again := r.stateFiles(); !maps.Equal(once, again) {
		t.Fatalf("Commit(%s) after a restart changed the state: %v, then %v", end, once, again)
	}
	if got := r.latest(end, noLimit); !bytes.Equal(got, end) {
		t.Fatalf("after committing %s again after a restart, LatestOffset planned %s", end, got)
	}
	r.append(3)
	_, parts, ok := r.batch(end, noLimit)
	if !ok {
		t.Fatal("3 rows appended after the commits, and no batch was planned")
	}
	r.checkIDs("batch after the commits", ids(parts), r.wrote[4:])
}

// A zero ReadLimit takes everything waiting in one batch.
func testNoLimit(t *testing.T, r *run) {
	start := r.src.InitialOffset()
	r.append(1, 2, 3, 4)
	end, parts, ok := r.batch(start, noLimit)
	if !ok {
		t.Fatal("10 rows appended, and no batch was planned")
	}
	r.checkIDs("one unlimited batch", ids(parts), r.wrote)
	if got := r.latest(end, noLimit); !bytes.Equal(got, end) {
		t.Fatalf("an unlimited batch left work: LatestOffset(%s) = %s", end, got)
	}
}

// MaxFiles is a hard cap, and a batch takes as many parts as it allows.
func testMaxFiles(t *testing.T, r *run) {
	if !r.h.Limits.MaxFiles {
		t.Skip("the source does not count files (Harness.Limits.MaxFiles is false)")
	}
	r.append(1, 2, 1, 3, 1)
	var sizes []int
	var got []int64
	r.drain(r.src.InitialOffset(), source.ReadLimit{MaxFiles: 2}, func(p []part) {
		sizes = append(sizes, len(p))
		got = append(got, ids(p)...)
	})
	if !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("5 units under MaxFiles 2 made batches of %v parts, want [2 2 1]", sizes)
	}
	r.checkIDs("batches under MaxFiles", got, r.wrote)
}

// MaxBytes is soft: a batch always holds a part, and, where the source
// keeps to the limit, ends with the part that reaches it.
func testMaxBytes(t *testing.T, r *run) {
	honoured := r.h.Limits.MaxBytes
	r.append(3, 5, 2, 8, 4)
	var got []int64
	var sizes []int64
	end := r.drain(r.src.InitialOffset(), source.ReadLimit{MaxBytes: 1}, func(p []part) {
		got = append(got, ids(p)...)
		for _, x := range p {
			sizes = append(sizes, x.size)
		}
		if honoured && len(p) != 1 {
			t.Fatalf("MaxBytes 1: a batch of %d parts; the first part reaches the limit, so a batch holds one", len(p))
		}
	})
	r.checkIDs("batches under MaxBytes 1", got, r.wrote)
	slices.Sort(sizes)
	if honoured && (len(sizes) < 5 || sizes[0] < 0) {
		t.Fatalf("the source keeps to MaxBytes, but 5 units made parts sized %v: one part per unit, each knowing its size", sizes)
	}

	// A limit of about two parts.
	limit := int64(1)
	if len(sizes) > 1 {
		limit = max(sizes[0]+sizes[1], 1)
	}
	r.append(3, 5, 2, 8, 4, 1, 1)
	got = nil
	r.drain(end, source.ReadLimit{MaxBytes: limit}, func(p []part) {
		got = append(got, ids(p)...)
		var before int64
		for _, x := range p[:len(p)-1] {
			before += x.size
		}
		if honoured && before >= limit {
			t.Fatalf("MaxBytes %d: a batch of parts sized %v went on after reaching the limit", limit, partSizes(p))
		}
	})
	r.checkIDs("batches under MaxBytes", got, r.wrote[22:])
}

// MaxRows is soft: a batch always holds a part, and, where the source
// keeps to the limit, ends with the part that reaches it, or before.
func testMaxRows(t *testing.T, r *run) {
	honoured := r.h.Limits.MaxRows
	end := r.src.InitialOffset()
	for _, limit := range []int64{1, 5} {
		start := len(r.wrote)
		r.append(3, 3, 3, 10, 3, 1, 1)
		var got []int64
		end = r.drain(end, source.ReadLimit{MaxRows: limit}, func(p []part) {
			got = append(got, ids(p)...)
			if honoured && rows(p[:len(p)-1]) >= int(limit) {
				t.Fatalf("MaxRows %d: a batch of parts with %v rows went on after reaching the limit", limit, partRows(p))
			}
		})
		r.checkIDs("batches under MaxRows", got, r.wrote[start:])
	}
}

// Every row is read exactly once across many batches, with input arriving
// between batches, stops before and after commits, and every commit made
// twice.
func testExactlyOnce(t *testing.T, r *run) {
	limit := r.oneUnit()
	rounds := [][]int{{5, 1, 7}, {2}, {3, 3, 3, 3}, {1, 9}, {4, 4, 4, 4}, {6}}
	r.append(rounds[0]...)
	rounds = rounds[1:]
	start := r.src.InitialOffset()
	var got []int64
	batches := 0
	for n := 0; ; n++ {
		if n > 200 {
			t.Fatal("200 rounds of planning and the source still plans batches")
		}
		end := r.latest(start, limit)
		if bytes.Equal(end, start) {
			if len(rounds) == 0 {
				break
			}
			r.append(rounds[0]...)
			rounds = rounds[1:]
			continue
		}
		parts := r.read(start, end)
		if len(parts) == 0 {
			t.Fatalf("batch (%s, %s] has no parts", start, end)
		}
		batches++
		if batches%3 == 0 {
			// A stop before the commit: the batch is re-run as planned.
			r.restart()
			if again := r.read(start, end); !sameParts(parts, again) {
				t.Fatalf("batch (%s, %s] re-run after a restart read %v, first %v", start, end, names(again), names(parts))
			}
		}
		r.commit(end)
		r.commit(end)
		got = append(got, ids(parts)...)
		if batches%2 == 0 && len(rounds) > 0 {
			r.append(rounds[0]...)
			rounds = rounds[1:]
		}
		if batches%4 == 0 {
			r.restart() // a stop after the commit
		}
		start = end
	}
	r.checkIDs("all batches", got, r.wrote)
	if got := r.latest(start, noLimit); !bytes.Equal(got, start) {
		t.Fatalf("everything read, and LatestOffset(%s) = %s", start, got)
	}
}

// Parts that tell their schema tell the one their reader reports.
func testPartSchema(t *testing.T, r *run) {
	start := r.src.InitialOffset()
	r.append(3, 4)
	end := r.latest(start, noLimit)
	parts, err := r.src.Read(r.ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range parts {
		sp, ok := p.(schemaPart)
		if !ok {
			continue
		}
		found = true
		s1, err := sp.Schema(r.ctx)
		if err != nil {
			t.Fatalf("part %s: Schema: %v", p.Name(), err)
		}
		if s2, err := sp.Schema(r.ctx); err != nil || !s1.Equal(s2) {
			t.Fatalf("part %s: Schema gave %v, then %v, %v", p.Name(), s1, s2, err)
		}
		rdr, err := p.Open(r.ctx)
		if err != nil {
			t.Fatalf("open part %s: %v", p.Name(), err)
		}
		if !rdr.Schema().Equal(s1) {
			rdr.Release()
			t.Fatalf("part %s: Schema %v, its reader's %v", p.Name(), s1, rdr.Schema())
		}
		_, err = fixture.Int64s(rdr, IDColumn)
		rdr.Release()
		if err != nil {
			t.Fatalf("read part %s after Schema: %v", p.Name(), err)
		}
	}
	if !found {
		t.Skip("the parts do not tell their schema (no Schema(ctx) method)")
	}
}

// An available-now run reads the backlog fixed when it was prepared; what
// arrives later waits for the next run.
func testAvailableNow(t *testing.T, r *run) {
	prepare := func() {
		t.Helper()
		if err := r.src.PrepareForAvailableNow(r.ctx); err != nil {
			t.Fatalf("PrepareForAvailableNow: %v", err)
		}
	}
	limit := r.oneUnit()
	r.append(2, 3)
	prepare()
	r.append(4, 1)
	var got []int64
	end := r.drain(r.src.InitialOffset(), limit, func(p []part) { got = append(got, ids(p)...) })
	r.checkIDs("first run", got, r.wrote[:5])
	if l := r.latest(end, noLimit); !bytes.Equal(l, end) {
		t.Fatalf("the run's backlog is read, and LatestOffset(%s) planned %s from input that arrived later", end, l)
	}

	r.restart()
	prepare()
	r.append(5)
	got = nil
	end = r.drain(end, limit, func(p []part) { got = append(got, ids(p)...) })
	r.checkIDs("second run", got, r.wrote[5:10])

	// A source that is not prepared reads all there is.
	r.restart()
	got = nil
	r.drain(end, noLimit, func(p []part) { got = append(got, ids(p)...) })
	r.checkIDs("stream after the runs", got, r.wrote[10:])
}

// The backlog of an available-now run shrinks with every batch, to nothing.
func testBacklog(t *testing.T, r *run) {
	if !r.h.Claims.BacklogReporter {
		t.Skip("the source does not claim source.BacklogReporter")
	}
	bs := r.src.(source.BacklogReporter)
	r.append(2, 3, 4)
	if err := r.src.PrepareForAvailableNow(r.ctx); err != nil {
		t.Fatal(err)
	}
	b, ok := bs.Backlog()
	if !ok {
		t.Fatal("Backlog reports nothing after PrepareForAvailableNow")
	}
	if b.RemainingFiles <= 0 || b.TotalFiles < b.RemainingFiles || b.RemainingBytes < 0 {
		t.Fatalf("backlog of 3 units before any batch: %+v", b)
	}
	total, last := b.TotalFiles, b
	r.drain(r.src.InitialOffset(), r.oneUnit(), func([]part) {
		b, ok := bs.Backlog()
		if !ok || b.RemainingFiles >= last.RemainingFiles || b.TotalFiles != total {
			t.Fatalf("backlog after a batch: %+v (ok %v), before it %+v", b, ok, last)
		}
		last = b
	})
	if b, _ := bs.Backlog(); b.RemainingFiles != 0 || b.RemainingBytes != 0 || b.TotalFiles != total {
		t.Fatalf("backlog with every unit read: %+v; want none remaining of %d", b, total)
	}
}

// Excluding a part drops it from the uncommitted batch, durably, and the
// unit comes back in a later batch.
func testExclude(t *testing.T, r *run) {
	if !r.h.Claims.Excluder {
		t.Skip("the source does not claim source.Excluder")
	}
	start := r.src.InitialOffset()
	r.append(2, 3, 4)
	end := r.latest(start, noLimit)
	parts := r.read(start, end)
	victim := parts[0]
	if err := r.src.(source.Excluder).Exclude(r.ctx, end, []string{victim.name}); err != nil {
		t.Fatalf("Exclude %s: %v", victim.name, err)
	}
	if rest := r.read(start, end); !sameParts(rest, parts[1:]) {
		t.Fatalf("after excluding %s the batch reads %v, want %v", victim.name, names(rest), names(parts[1:]))
	}
	r.restart()
	if rest := r.read(start, end); !sameParts(rest, parts[1:]) {
		t.Fatalf("after excluding %s and a restart the batch reads %v, want %v", victim.name, names(rest), names(parts[1:]))
	}
	r.commit(end)
	var later []part
	r.drain(end, noLimit, func(p []part) { later = append(later, p...) })
	if len(later) != 1 || !sameParts(later, []part{victim}) {
		t.Fatalf("after the batch, the excluded part came back as %v, want %s with %d rows", names(later), victim.name, len(victim.ids))
	}
	r.checkIDs("the batch and the excluded part", append(ids(parts[1:]), ids(later)...), r.wrote)
}

// Discarding a plan puts the state back as it was before LatestOffset
// planned it, and its units are planned again.
func testDiscard(t *testing.T, r *run) {
	if !r.h.Claims.Discarder {
		t.Skip("the source does not claim source.Discarder")
	}
	r.append(2)
	start := r.drain(r.src.InitialOffset(), noLimit, nil)
	before := r.stateFiles()
	r.append(3, 4)
	end := r.latest(start, noLimit)
	planned := r.read(start, end)
	if err := r.src.(source.Discarder).Discard(r.ctx, start, end); err != nil {
		t.Fatalf("Discard(%s, %s): %v", start, end, err)
	}
	if after := r.stateFiles(); !maps.Equal(before, after) {
		t.Fatalf("Discard left the state changed: before the plan %v, after the discard %v", before, after)
	}
	r.restart()
	var got []part
	r.drain(start, noLimit, func(p []part) { got = append(got, p...) })
	if !slices.Equal(sortedNames(got), sortedNames(planned)) {
		t.Fatalf("after Discard the units were planned as %v, want those of the discarded plan %v", names(got), names(planned))
	}
	r.checkIDs("rows after the discard", ids(got), r.wrote[2:])
}

// A source that claims source.Resumable goes on from a committed end with
// its state lost (a new, empty state directory), as a run whose checkpoint
// was lost goes on from the table's record of that end: the rest of the
// input, every row once.
func testResumeWithoutState(t *testing.T, r *run) {
	if !r.h.Claims.Resumable {
		t.Skip("the source does not claim source.Resumable")
	}
	if !r.src.(source.Resumable).OwnPosition(config.Trigger{Kind: config.TriggerAvailableNow}) {
		t.Fatal("OwnPosition is false under an available-now trigger: the harness's query has no position to resume")
	}
	r.append(2, 3, 1)
	var got []int64
	end := r.drain(r.src.InitialOffset(), r.oneUnit(), func(p []part) { got = append(got, ids(p)...) })
	r.append(4, 2)
	r.state = filepath.Join(t.TempDir(), "sources", "0")
	r.restart()
	r.drain(end, noLimit, func(p []part) { got = append(got, ids(p)...) })
	r.checkIDs("rows read before and after the state was lost", got, r.wrote)
}

// Ordinary input gives no warnings.
func testWarnings(t *testing.T, r *run) {
	warnings := func(when string) {
		t.Helper()
		if w := r.src.Warnings(); len(w) > 0 {
			t.Fatalf("%s: warnings %q on ordinary input", when, w)
		}
	}
	r.append(2, 3, 1)
	warnings("before planning")
	end := r.drain(r.src.InitialOffset(), r.oneUnit(), func([]part) { warnings("after a batch") })
	warnings("with everything read")
	r.restart()
	r.append(2)
	r.drain(end, noLimit, nil)
	warnings("after a restart")
}

func partSizes(p []part) []int64 {
	out := make([]int64, len(p))
	for i, x := range p {
		out[i] = x.size
	}
	return out
}

func partRows(p []part) []int {
	out := make([]int, len(p))
	for i, x := range p {
		out[i] = len(x.ids)
	}
	return out
}

func sortedNames(p []part) []string {
	return slices.Sorted(slices.Values(names(p)))
}
