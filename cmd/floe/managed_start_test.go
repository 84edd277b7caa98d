package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// startTable appends ids [10*i, 10*i+10) to db.events in a snapshot of
// its own for each i < n, and returns the snapshots' ids, oldest first.
func startTable(e *env, from, n int) []int64 {
	e.T.Helper()
	for i := from; i < from+n; i++ {
		e.WriteIDs(fmt.Sprintf("f-%02d.parquet", i), int64(10*i), 10)
		e.OK(e.StreamArgs("db.events", "--trigger", "once")...)
	}
	var ids []int64
	for _, s := range e.Snapshots("db.events") {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

// printedIDs are the ids of the JSON lines a console query printed, in
// order.
func printedIDs(t *testing.T, stdout string) []int64 {
	t.Helper()
	var ids []int64
	for line := range strings.Lines(stdout) {
		var row struct{ ID int64 }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		ids = append(ids, row.ID)
	}
	slices.Sort(ids)
	return ids
}

// seqIDs are the ids from from up to to, in order.
func seqIDs(from, to int64) []int64 {
	var ids []int64
	for id := from; id < to; id++ {
		ids = append(ids, id)
	}
	return ids
}

// TestManagedReadStart runs Managed I/O read configs with Beam's start
// keys: from_snapshot reads that snapshot's appends and the later ones,
// starting_strategy latest the current snapshot's and the later ones (the
// default of a streaming read), a restarted query goes on from its
// checkpoint, and a start snapshot the table lacks is an error naming it.
func TestManagedReadStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	snaps := startTable(e, 0, 3) // ids 0-9, 10-19, 20-29
	catalog := "catalog_properties:\n  type: jdbc\n  uri: jdbc:sqlite:" + filepath.Join(e.Warehouse, "catalog.db") + "\n  warehouse: " + e.Warehouse + "\n"
	write := func(name, keys string) string {
		path := filepath.Join(e.Dir, name+".yaml")
		if err := os.WriteFile(path, []byte("table: db.events\n"+keys+catalog), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path, ckpt string, extra ...string) []int64 {
		t.Helper()
		r := e.OK(append([]string{"run", path, "--checkpoint", filepath.Join(e.Dir, ckpt)}, extra...)...)
		return printedIDs(t, r.Stdout)
	}

	fromSecond := write("from-snapshot", fmt.Sprintf("from_snapshot: %d\n", snaps[1]))
	latest := write("latest", "starting_strategy: latest\n")
	streaming := write("streaming", "streaming: true\npoll_interval_seconds: 1\n")
	if got := read(fromSecond, "ck-from"); !slices.Equal(got, seqIDs(10, 30)) {
		t.Fatalf("from_snapshot %d (the second) printed ids %v, want 10-29: the snapshot's own appends and the later ones", snaps[1], got)
	}
	if got := read(latest, "ck-latest"); !slices.Equal(got, seqIDs(20, 30)) {
		t.Fatalf("starting_strategy: latest printed ids %v, want 20-29, the current snapshot's appends", got)
	}
	if got := read(streaming, "ck-streaming", "--trigger", "available-now"); !slices.Equal(got, seqIDs(20, 30)) {
		t.Fatalf("a streaming read without a start printed ids %v, want 20-29: Beam starts it at the latest snapshot", got)
	}

	// Restarted, each query goes on from its checkpoint: two new
	// snapshots are read whole, not from the latest again nor from
	// from_snapshot.
	startTable(e, 3, 2) // ids 30-39, 40-49
	for _, c := range []struct{ path, ckpt string }{{fromSecond, "ck-from"}, {latest, "ck-latest"}, {streaming, "ck-streaming"}} {
		extra := []string{"--trigger", "available-now"}
		if got := read(c.path, c.ckpt, extra...); !slices.Equal(got, seqIDs(30, 50)) {
			t.Fatalf("%s restarted printed ids %v, want 30-49, the appends after its checkpoint", filepath.Base(c.path), got)
		}
	}

	// A new query from the first snapshot reads every append.
	first := write("from-first", fmt.Sprintf("from_snapshot: %d\n", snaps[0]))
	if got := read(first, "ck-first"); !slices.Equal(got, seqIDs(0, 50)) {
		t.Fatalf("from_snapshot %d (the first) printed ids %v, want 0-49", snaps[0], got)
	}

	missing := write("missing", "from_snapshot: 12345\n")
	r := e.Run("run", missing, "--checkpoint", filepath.Join(e.Dir, "ck-missing"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "12345") || !strings.Contains(r.Stderr, "floe table snapshots db.events") || r.Stdout != "" {
		t.Fatalf("from_snapshot 12345, which the table lacks: want exit 2 naming it and floe table snapshots db.events, got %s", r)
	}

	// floe scan reads the table as of one snapshot; an incremental read
	// is refused, naming the key and floe run.
	r = e.Run("scan", fromSecond)
	if r.Code != 2 || !strings.Contains(r.Stderr, "from_snapshot") || !strings.Contains(r.Stderr, "floe run") {
		t.Fatalf("scan of a from_snapshot read: want exit 2 naming from_snapshot and floe run, got %s", r)
	}

	// Beam's refusals: one start at most, a poll interval only when
	// streaming.
	for _, c := range []struct{ keys, want string }{
		{fmt.Sprintf("starting_strategy: latest\nfrom_snapshot: %d\n", snaps[1]), "from_snapshot"},
		{fmt.Sprintf("from_timestamp: 1\nfrom_snapshot: %d\n", snaps[1]), "from_timestamp"},
		{"poll_interval_seconds: 5\n", "streaming"},
		{"starting_strategy: newest\n", "earliest or latest"},
	} {
		r := e.Run("run", write("refused", c.keys), "--checkpoint", filepath.Join(e.Dir, "ck-refused"))
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Fatalf("%q: want exit 2 naming %q, got %s", c.keys, c.want, r)
		}
	}
}

// TestIcebergSourceStartOptions gives the same starts to a pipeline's
// Iceberg source by Flink's option names.
func TestIcebergSourceStartOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	snaps := startTable(e, 0, 3)
	copyTo := func(table string, opts ...string) []int64 {
		t.Helper()
		args := []string{"stream", "--source-table", "db.events", "--table", table, "--checkpoint", filepath.Join(e.Dir, "ck-"+table)}
		for _, o := range opts {
			args = append(args, "-o", o)
		}
		e.OK(args...)
		var ids []int64
		for id := range e.IDs(table) {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	if got := copyTo("db.from_id", fmt.Sprintf("start-snapshot-id=%d", snaps[1])); !slices.Equal(got, seqIDs(10, 30)) {
		t.Fatalf("start-snapshot-id %d copied ids %v, want 10-29", snaps[1], got)
	}
	if got := copyTo("db.latest", "starting-strategy=incremental_from_latest_snapshot"); !slices.Equal(got, seqIDs(20, 30)) {
		t.Fatalf("INCREMENTAL_FROM_LATEST_SNAPSHOT copied ids %v, want 20-29", got)
	}
	for _, c := range []struct {
		opts []string
		want string
	}{
		{[]string{"starting-strategy=INCREMENTAL_FROM_LATEST_SNAPSHOT", fmt.Sprintf("start-snapshot-id=%d", snaps[1])}, "start-snapshot-id"},
		{[]string{"starting-strategy=latest"}, "INCREMENTAL_FROM_LATEST_SNAPSHOT"},
		{[]string{"start-snapshot-id=77"}, "floe table snapshots db.events"},
	} {
		args := []string{"stream", "--source-table", "db.events", "--table", "db.bad", "--checkpoint", filepath.Join(e.Dir, "ck-bad")}
		for _, o := range c.opts {
			args = append(args, "-o", o)
		}
		if r := e.Run(args...); r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Fatalf("-o %v: want exit 2 naming %q, got %s", c.opts, c.want, r)
		}
	}
}
