// Package sourcetest is the contract suite every source.Source passes, as
// iceberg-go's catalogtest is for catalogs. A source's tests describe the
// source with a Harness and call Run:
//
//	func TestContract(t *testing.T) {
//		sourcetest.Run(t, sourcetest.Harness{New: newInput, Limits: sourcetest.Limits{MaxFiles: true}})
//	}
//
// Each subtest gets a fresh input and fresh state, and drives the source as
// the engine does: LatestOffset from the last end, Read of the planned
// range, Commit of its end, a restart by closing the source and opening
// another over the same state. Rows are told apart by an integer column
// "id", so that a row lost and another read twice do not cancel out.
package sourcetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
)

// IDColumn is the column every row the suite appends carries, and by which
// it tells rows apart.
const IDColumn = "id"

// Harness describes the source under test.
type Harness struct {
	// New returns a fresh, empty input for one subtest. Subtests run in
	// parallel, so New is called concurrently; cleanup goes through
	// t.Cleanup.
	New func(t *testing.T) Input
	// Limits names the bounds of source.ReadLimit the source keeps to. Every
	// source must make progress under any limit; the suite checks a bound
	// itself only where it is named here.
	Limits Limits
	// Claims names the capabilities the source implements. The suite
	// fails when the source's methods and the claims disagree, so that a
	// signature slip cannot quietly turn a capability's checks off.
	Claims Capabilities
}

// Capabilities names the optional interfaces of package source.
type Capabilities struct {
	Excluder, Discarder, BacklogReporter, MetricsReporter, Recorder, Resumable, QueryAware, Aliased, SchemaAware bool
}

// of is the capabilities src implements.
func of(src source.Source) Capabilities {
	var c Capabilities
	_, c.Excluder = src.(source.Excluder)
	_, c.Discarder = src.(source.Discarder)
	_, c.BacklogReporter = src.(source.BacklogReporter)
	_, c.MetricsReporter = src.(source.MetricsReporter)
	_, c.Recorder = src.(source.Recorder)
	_, c.Resumable = src.(source.Resumable)
	_, c.QueryAware = src.(source.QueryAware)
	_, c.Aliased = src.(source.Aliased)
	_, c.SchemaAware = src.(source.SchemaAware)
	return c
}

// Limits names the bounds of source.ReadLimit.
type Limits struct {
	// MaxFiles: a batch holds at most MaxFiles parts, and exactly that
	// many while enough units wait. One Append must make one part.
	MaxFiles bool
	// MaxBytes: a batch ends with the part that reaches MaxBytes, counted
	// by the parts' SizeBytes (soft: that part is included).
	MaxBytes bool
	// MaxRows: a batch ends with the part that reaches MaxRows, or before
	// it (soft: a batch holds at least one part).
	MaxRows bool
}

// Input is what a source reads, which the suite adds to.
type Input interface {
	// Open builds a source over the input whose private state lives in
	// stateDir (the checkpoint's sources/0). Opening another over the same
	// stateDir, after closing the first, is a restart.
	Open(t *testing.T, stateDir string) source.Source
	// Append adds, as one unit of delivery (a file, a commit), the rows
	// whose integer column "id" runs from first to first+n-1. LatestOffset
	// sees them once Append returns.
	Append(t *testing.T, first int64, n int)
}

// schemaPart is the optional capability of parts that tell their schema
// without being read.
type schemaPart interface {
	Schema(ctx context.Context) (*arrow.Schema, error)
}

// Run runs the suite, each check as a subtest named after the behaviour.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("sourcetest.Harness.New must be set")
	}
	tests := []struct {
		name string
		f    func(*testing.T, *run)
	}{
		{"Claims", testClaims},
		{"InitialOffset", testInitialOffset},
		{"IdleLatestOffset", testIdleLatestOffset},
		{"LatestOffsetMoves", testLatestOffsetMoves},
		{"ReadDeterministic", testReadDeterministic},
		{"CommitIdempotent", testCommitIdempotent},
		{"NoLimit", testNoLimit},
		{"MaxFiles", testMaxFiles},
		{"MaxBytes", testMaxBytes},
		{"MaxRows", testMaxRows},
		{"ExactlyOnce", testExactlyOnce},
		{"PartSchema", testPartSchema},
		{"AvailableNow", testAvailableNow},
		{"Backlog", testBacklog},
		{"Exclude", testExclude},
		{"Discard", testDiscard},
		{"ResumeWithoutState", testResumeWithoutState},
		{"Warnings", testWarnings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.f(t, newRun(t, h))
		})
	}
}

// run is one subtest's input, state and source, and what was appended.
type run struct {
	t      *testing.T
	h      Harness
	ctx    context.Context
	in     Input
	state  string
	src    source.Source
	next   int64
	wrote  []int64
	closed bool
}

func newRun(t *testing.T, h Harness) *run {
	r := &run{t: t, h: h, ctx: t.Context(), in: h.New(t), state: filepath.Join(t.TempDir(), "sources", "0")}
	r.src = r.in.Open(t, r.state)
	t.Cleanup(func() {
		if !r.closed {
			_ = r.src.Close()
		}
	})
	return r
}

// append adds one unit per size, ids following the previous unit's.
func (r *run) append(sizes ...int) {
	r.t.Helper()
	for _, n := range sizes {
		r.in.Append(r.t, r.next, n)
		for i := range int64(n) {
			r.wrote = append(r.wrote, r.next+i)
		}
		r.next += int64(n)
	}
}

// restart closes the source and opens another over the same state.
func (r *run) restart() {
	r.t.Helper()
	r.closed = true
	if err := r.src.Close(); err != nil {
		r.t.Fatalf("Close: %v", err)
	}
	r.src = r.in.Open(r.t, r.state)
	r.closed = false
}

func (r *run) latest(start source.Offset, limit source.ReadLimit) source.Offset {
	r.t.Helper()
	end, err := r.src.LatestOffset(r.ctx, start, limit)
	if err != nil {
		r.t.Fatalf("LatestOffset(%s, %+v): %v", start, limit, err)
	}
	if !json.Valid(end) {
		r.t.Fatalf("LatestOffset(%s, %+v) = %q, not JSON", start, limit, end)
	}
	return end
}

// part is what the suite saw of one part.
type part struct {
	name string
	size int64
	ids  []int64
}

// read plans (start, end] and reads every part.
func (r *run) read(start, end source.Offset) []part {
	r.t.Helper()
	parts, err := r.src.Read(r.ctx, start, end)
	if err != nil {
		r.t.Fatalf("Read(%s, %s): %v", start, end, err)
	}
	out := make([]part, len(parts))
	names := map[string]bool{}
	for i, p := range parts {
		if p.Name() == "" || names[p.Name()] {
			r.t.Fatalf("Read(%s, %s): part %d has the name %q, empty or used twice in the batch", start, end, i, p.Name())
		}
		names[p.Name()] = true
		if s := p.SizeBytes(); s != -1 && s <= 0 {
			r.t.Fatalf("part %s: SizeBytes %d, want -1 (unknown) or the size", p.Name(), s)
		}
		rdr, err := p.Open(r.ctx)
		if err != nil {
			r.t.Fatalf("open part %s: %v", p.Name(), err)
		}
		ids, err := fixture.Int64s(rdr, IDColumn)
		rdr.Release()
		if err != nil {
			r.t.Fatalf("read part %s: %v", p.Name(), err)
		}
		out[i] = part{name: p.Name(), size: p.SizeBytes(), ids: ids}
	}
	return out
}

func (r *run) commit(end source.Offset) {
	r.t.Helper()
	if err := r.src.Commit(r.ctx, end); err != nil {
		r.t.Fatalf("Commit(%s): %v", end, err)
	}
}

// batch plans, reads and commits the next batch after start; ok is false
// when the source has nothing new, and then end is start.
func (r *run) batch(start source.Offset, limit source.ReadLimit) (end source.Offset, parts []part, ok bool) {
	r.t.Helper()
	end = r.latest(start, limit)
	if bytes.Equal(end, start) {
		return start, nil, false
	}
	parts = r.read(start, end)
	if len(parts) == 0 || rows(parts) == 0 {
		r.t.Fatalf("batch (%s, %s] under %+v is empty: a planned batch holds at least one unit", start, end, limit)
	}
	r.commit(end)
	return end, parts, true
}

// drain runs batches until the source has nothing new, calling f with
// each, and returns the last end. It fails when the source does not stop:
// every batch holds a row, so there are at most as many as rows written.
func (r *run) drain(start source.Offset, limit source.ReadLimit, f func([]part)) source.Offset {
	r.t.Helper()
	for n := 0; ; n++ {
		if n > len(r.wrote)+1 {
			r.t.Fatalf("%d batches under %+v and the source still plans more; %d rows were written", n, limit, len(r.wrote))
		}
		end, parts, ok := r.batch(start, limit)
		if !ok {
			return end
		}
		if f != nil {
			f(parts)
		}
		start = end
	}
}

// stateFiles is the content of every file in the state directory: what
// survives a restart.
func (r *run) stateFiles() map[string]string {
	r.t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(r.state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.state, p)
		files[rel] = string(b)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	return files
}

// checkIDs fails unless got holds every id written exactly once.
func (r *run) checkIDs(what string, got, want []int64) {
	r.t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if slices.Equal(got, want) {
		return
	}
	seen := map[int64]int{}
	for _, id := range got {
		seen[id]++
	}
	var lost, twice []int64
	for _, id := range want {
		if seen[id] == 0 {
			lost = append(lost, id)
		}
		seen[id]--
	}
	for id, n := range seen {
		if n != 0 {
			twice = append(twice, id)
		}
	}
	slices.Sort(twice)
	r.t.Fatalf("%s: read %d rows, want %d; missing %v, read too often or never written %v", what, len(got), len(want), head(lost), head(twice))
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 20)] }

func ids(parts []part) []int64 {
	var out []int64
	for _, p := range parts {
		out = append(out, p.ids...)
	}
	return out
}

func rows(parts []part) int {
	n := 0
	for _, p := range parts {
		n += len(p.ids)
	}
	return n
}

func names(parts []part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.name
	}
	return out
}

func sameParts(a, b []part) bool {
	return slices.EqualFunc(a, b, func(x, y part) bool {
		return x.name == y.name && x.size == y.size && slices.Equal(x.ids, y.ids)
	})
}
