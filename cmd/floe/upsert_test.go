package main_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// upsertArgs streams the env's landing directory of CSV changes into db.t
// in mode upsert, keyed by id, deletes by op.
func (e *env) upsertArgs(extra ...string) []string {
	return append([]string{"stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
		"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op"}, extra...)
}

// The CDC scenario: 20 files of random changes over 10,000 keys, one batch
// each; after every batch the table equals the oracle, on a format-version
// 3 table (deletion vectors) and on a format-version 2 one (equality
// deletes).
func TestUpsertCDCMatchesOracle(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"3", "2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(uint64(len(v)*7+int(v[0])), 10_000)
			for range 20 {
				g.File(t, e.Landing, 1500)
				e.OK(e.upsertArgs("--format-version", v)...)
				if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
					t.Fatalf("after batch %d: %s", g.Files-1, d)
				}
			}
			d := e.OK("table", "describe", "db.t", "--json")
			if !strings.Contains(d.Stdout, `"format_version": `+v) && !strings.Contains(d.Stdout, `"format_version":`+v) {
				t.Fatalf("table is not format-version %s: %s", v, d.Stdout)
			}
			kind := map[string]string{"3": "position_deletes", "2": "equality_deletes"}[v]
			if files := e.OK("table", "files", "db.t").Stdout; !strings.Contains(files, kind) {
				t.Fatalf("no %s in the table's files:\n%s", kind, files)
			}
		})
	}
}

// Several changes to one key in a batch: the greatest order-by value
// wins, whatever the input order; without order-by, the last in input
// order (files by modification time, rows in file order).
func TestUpsertOrderBy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	write := func(name, body string, at time.Time) {
		p := filepath.Join(e.Landing, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(-time.Minute)
	write("a.csv", "id,v,op,lsn\n1,late,u,30\n2,first,c,10\n1,early,c,10\n", now)
	write("b.csv", "id,v,op,lsn\n1,middle,u,20\n2,second,u,5\n3,gone,d,40\n3,back,c,35\n", now.Add(time.Second))
	e.OK(e.upsertArgs("--order-by", "lsn")...)
	want := map[int64]string{1: "late", 2: "first"}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), want); d != "" {
		t.Fatalf("with order-by lsn: %s", d)
	}

	e2 := newEnv(t)
	e = e2
	write("a.csv", "id,v,op\n1,one,c\n2,two,c\n1,uno,u\n", now)
	write("b.csv", "id,v,op\n2,deux,u\n3,drei,c\n3,x,d\n", now.Add(time.Second))
	e.OK(e.upsertArgs()...)
	want = map[int64]string{1: "uno", 2: "deux"}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), want); d != "" {
		t.Fatalf("in input order: %s", d)
	}
}

// AWS DMS writes its operation in a column Op as I, U and D; a mapping
// adds other codes.
func TestUpsertDMSOpColumn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Landing, "a.csv"), []byte("Op,id,v\nI,1,a\nI,2,b\nI,3,c\nU,2,bb\nD,3,\nX,4,removed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
		"--mode", "upsert", "--identifier-fields", "id", "--op-column", "Op", "--cdc-op", "X=delete")
	if want := "6 changes to 4 keys (2 deleting), 2 rows written"; !strings.Contains(r.Stderr, want) {
		t.Fatalf("the batch's line does not say %q:\n%s", want, r.Stderr)
	}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), map[int64]string{1: "a", 2: "bb"}); d != "" {
		t.Fatal(d)
	}
	r = e.OK("scan", "db.t", "--format", "csv")
	if strings.Contains(r.Stdout, "Op") {
		t.Fatalf("the op column was written:\n%s", r.Stdout)
	}
}

// Bad changes are bad input: the run fails naming the file, the row and
// the fix, and commits nothing.
func TestUpsertBadChanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, body, want string }{
		{"unknown op", "id,v,op\n1,a,c\n2,b,z\n", `row 2: operation code "z" in column op is not one of`},
		{"null key", "id,v,op\n1,a,c\n,b,c\n", "row 2: key column id is null"},
		{"null op", "id,v,op\n1,a,c\n2,b,\n", "row 2: op column op is null"},
		{"no key column", "key,v,op\n1,a,c\n", "the input has no key column id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if err := os.WriteFile(filepath.Join(e.Landing, "bad.csv"), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			r := e.Run(e.upsertArgs()...)
			if r.Code == 0 || !strings.Contains(r.Stderr, c.want) || !strings.Contains(r.Stderr, "bad.csv") {
				t.Fatalf("want a failure naming bad.csv and %q, got %s", c.want, r)
			}
			if ids := e.TableIDs("db.t"); len(ids) != 0 {
				t.Fatalf("the table holds %d ids after a bad batch", len(ids))
			}
		})
	}
}

// Upsert without a key, or with a key the table cannot compare, is a
// configuration error (exit 2) before anything is written.
func TestUpsertNeedsAKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Landing, "a.csv"), []byte("id,v\n1,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Run("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt, "--mode", "upsert")
	if r.Code != 2 || !strings.Contains(r.Stderr, "mode upsert needs a key") || !strings.Contains(r.Stderr, "--identifier-fields") {
		t.Fatalf("want exit 2 asking for a key, got %s", r)
	}
	// An existing table's identifier fields are the key when none is given.
	e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.k", "--checkpoint", e.Ckpt+"-k", "--identifier-fields", "id", "--check-nullability=false")
	if err := os.WriteFile(filepath.Join(e.Landing, "b.csv"), []byte("id,v\n1,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.k", "--checkpoint", e.Ckpt+"-k2", "--mode", "upsert", "--allow-new-query")
	if d := fixture.DiffOracle(e.TableKeyed("db.k", "id", "v"), map[int64]string{1: "b"}); d != "" {
		t.Fatal(d)
	}
}

// A float or double key is a configuration error (exit 2) naming the
// column and why, whether the table is to be created from the input or
// exists already; on-bad-file: quarantine does not set the input aside.
// Nothing is written.
func TestUpsertFloatKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := fixture.Land(filepath.Join(e.Landing, "a.csv"), []byte("id,v,op\n1.5,a,c\n2.5,b,c\n")); err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.old", "--checkpoint", e.Ckpt+"-old")
	for _, c := range []struct {
		table string
		extra []string
	}{
		{"db.old", []string{"--allow-new-query"}},
		{"db.new", nil},
		{"db.new", []string{"--on-bad-file", "quarantine"}},
	} {
		args := append([]string{"stream", "--source", e.Landing, "--format", "csv", "--table", c.table, "--checkpoint", e.Ckpt + "-" + c.table,
			"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op"}, c.extra...)
		r := e.Run(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "key column id is double") || !strings.Contains(r.Stderr, "Iceberg forbids float and double identifier fields") {
			t.Errorf("upsert into %s %v: want exit 2 naming key column id and why, got %s", c.table, c.extra, r)
		}
	}
	if ids := e.TableIDs("db.new"); len(ids) != 0 {
		t.Errorf("db.new holds %d rows", len(ids))
	}
	if n := len(e.Snapshots("db.old")); n != 1 {
		t.Errorf("db.old has %d snapshots, want its first alone", n)
	}
	if _, err := os.Stat(filepath.Join(e.Landing, "a.csv")); err != nil {
		t.Errorf("the input was moved: %v", err)
	}
}

// The run's summary counts the snapshots the batches added: a batch that
// only deletes keys the table does not hold adds one on format 2 (its
// equality deletes) and none on format 3 (no row to delete).
func TestUpsertSummaryCountsSnapshots(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version string
		added   int
	}{{"2", 1}, {"3", 0}} {
		t.Run("v"+c.version, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if err := fixture.Land(filepath.Join(e.Landing, "a.csv"), []byte("id,v,op\n1,a,c\n2,b,c\n")); err != nil {
				t.Fatal(err)
			}
			e.OK(e.upsertArgs("--format-version", c.version)...)
			before := len(e.Snapshots("db.t"))
			if err := fixture.Land(filepath.Join(e.Landing, "b.csv"), []byte("id,v,op\n7,,d\n8,,d\n")); err != nil {
				t.Fatal(err)
			}
			r := e.OK(e.upsertArgs("--format-version", c.version)...)
			if got := len(e.Snapshots("db.t")) - before; got != c.added {
				t.Fatalf("the batch added %d snapshots, want %d", got, c.added)
			}
			want := fmt.Sprintf("%d snapshots committed", c.added)
			if c.added == 1 {
				want = "1 snapshot committed"
			}
			if !strings.Contains(r.Stderr+r.Stdout, want) {
				t.Fatalf("the summary does not say %q: %s", want, r)
			}
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), map[int64]string{1: "a", 2: "b"}); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// Exactly once under kill -9: the CDC scenario, streamed by runs killed
// at random at least 20 times, ends equal to the oracle; a run that dies
// between the table commit and the commits log is re-run without a
// second commit.
func TestUpsertKilledExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"3", "2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(uint64(40+len(v)+int(v[0])), 10_000)
			rng := rand.New(rand.NewPCG(uint64(v[0]), 2))
			args := e.upsertArgs("--format-version", v, "--max-files-per-trigger", "1")
			kills := 0
			for tries := 0; kills < 20; tries++ {
				if tries > 200 {
					t.Fatalf("only %d of %d runs were killed while running", kills, tries)
				}
				g.File(t, e.Landing, 1000)
				g.File(t, e.Landing, 1000)
				var stderr syncBuffer
				cmd := e.startFloe(&stderr, args...)
				time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				switch code := cmd.ProcessState.ExitCode(); code {
				case -1:
					kills++
				case 0:
				default:
					t.Fatalf("run %d exited %d:\n%s", tries, code, stderr.String())
				}
			}
			e.OK(args...)
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
				t.Fatalf("after %d kills: %s", kills, d)
			}

			g.File(t, e.Landing, 1000)
			if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=1"}, args...); r.Code != 137 {
				t.Fatalf("want the run to die after its table commit, got %s", r)
			}
			snaps := e.Snapshots("db.t")
			crashed := snaps[len(snaps)-1].Summary["floe.batch-id"]
			e.OK(args...)
			n := 0
			for _, s := range e.Snapshots("db.t") {
				if s.Summary["floe.batch-id"] == crashed {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("batch %s is in %d snapshots after its re-run, want 1", crashed, n)
			}
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
				t.Fatalf("after the re-run: %s", d)
			}
		})
	}
}

// A compaction that commits while an upsert batch is on its way to the
// catalog rewrites the very files the batch deletes rows from: the
// batch's commit must see it, find the rows again in the rewritten files
// and commit, never resurrecting a replaced row nor losing a delete; on
// v3 its updates keep their rows' ids, which the compaction kept.
func TestUpsertBesideCompaction(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"3", "2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(uint64(70+int(v[0])), 2000)
			args := e.upsertArgs("--format-version", v, "--maintenance=false")
			// On v3 the rows keep their lineage, the racing batch's too.
			lineage := fixture.NewLineageOracle()
			var state map[int64]string // the oracle before the batch
			checkLineage := func() {
				if v != "3" {
					return
				}
				if d := lineage.Batch(state, g.Oracle, e.TableLineage("db.t", "id")); d != "" {
					t.Fatalf("after batch %d: %s", g.Files-1, d)
				}
			}
			for range 6 {
				state = maps.Clone(g.Oracle)
				g.File(t, e.Landing, 800)
				e.OK(args...)
				checkLineage()
			}
			state = maps.Clone(g.Oracle)
			g.File(t, e.Landing, 800)
			run := e.startPaused(args...)
			before := e.OK("table", "files", "db.t").Stdout
			e.OK("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2")
			after := e.OK("table", "files", "db.t").Stdout
			if before == after {
				t.Fatalf("the compaction rewrote nothing:\n%s", after)
			}
			if err := run.resume(t); err != nil {
				t.Fatalf("upsert run: %v\n%s", err, run.out.String())
			}
			// The batch committed after the compaction it raced: its
			// snapshot's parent is the rewrite's.
			snaps := e.Snapshots("db.t")
			last, prev := snaps[len(snaps)-1], snaps[len(snaps)-2]
			if last.Summary["floe.batch-id"] != "6" || prev.Operation != "replace" || last.ParentID == nil || *last.ParentID != prev.SnapshotID {
				t.Fatalf("want batch 6 committed on top of the rewrite; newest snapshots: %+v, %+v", prev, last)
			}
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
				t.Fatalf("after the upsert committed beside a compaction: %s\n%s", d, run.out.String())
			}
			checkLineage()
		})
	}
}

// A table partitioned on its key: planning the lookup prunes by
// partition, and the result still equals the oracle, on both versions.
// On format-version 2, a partition column outside the key is refused: an
// equality delete reaches one partition only.
func TestUpsertPartitioned(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"3", "2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(uint64(90+int(v[0])), 3000)
			for range 5 {
				g.File(t, e.Landing, 900)
				e.OK(e.upsertArgs("--format-version", v, "--partition-fields", "bucket(id, 4)")...)
				if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
					t.Fatalf("after batch %d: %s", g.Files-1, d)
				}
			}
		})
	}
	t.Run("v2 partitioned off the key", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		g := fixture.NewCDCGen(7, 100)
		g.File(t, e.Landing, 50)
		r := e.Run(e.upsertArgs("--format-version", "2", "--partition-fields", "v")...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "partitioned by v, which is not a key column") {
			t.Fatalf("want exit 2 naming the partition column, got %s", r)
		}
		if ids := e.TableIDs("db.t"); len(ids) != 0 {
			t.Fatalf("the refused batch left %d rows", len(ids))
		}
		// An existing table partitioned off the key is refused the same way.
		e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.p", "--checkpoint", e.Ckpt+"-p",
			"--format-version", "2", "--partition-fields", "v")
		r = e.Run(e.upsertArgs("--table", "db.p", "--checkpoint", e.Ckpt+"-p2", "--allow-new-query")...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "partitioned by v, which is not a key column") {
			t.Fatalf("want exit 2 naming the partition column, got %s", r)
		}
	})
}

// Debezium change events merged by key: snapshot reads (r), creates,
// updates, deletes whose before image holds only the key, tombstones;
// the events of one key are ordered by their LSN, not their place in the
// files, and the op column is not written.
func TestUpsertDebezium(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	landLines(t, filepath.Join(e.Landing, "a.json"),
		pgEvent("r", 1, "ann", 1, false),
		pgEvent("r", 2, "bob", 2, false),
		pgEvent("r", 3, "cid", 3, false),
		pgEvent("u", 1, "ann-2", 5, false),
		pgEvent("u", 1, "ann-1", 4, false), // older, though later in the file
		pgEvent("d", 2, "", 6, true),
		"null", // the delete's tombstone
		pgEvent("c", 4, "dee", 7, false),
	)
	e.OK(dbzStreamArgs(e, "db.c", "--mode", "upsert", "--identifier-fields", "id")...)
	if got, want := dbzRows(t, e, "db.c", "id", "name"), []string{"1|ann-2", "3|cid", "4|dee"}; !slices.Equal(got, want) {
		t.Fatalf("after the first file: %v, want %v", got, want)
	}
	landLines(t, filepath.Join(e.Landing, "b.json"),
		pgEvent("d", 3, "cid", 8, false),
		"",
		pgEvent("c", 3, "cid-again", 9, false),
		pgEvent("d", 4, "", 10, true),
		pgEvent("d", 9, "", 11, true), // a key never seen: nothing to delete
	)
	e.OK(dbzStreamArgs(e, "db.c", "--mode", "upsert", "--identifier-fields", "id")...)
	if got, want := dbzRows(t, e, "db.c", "id", "name"), []string{"1|ann-2", "3|cid-again"}; !slices.Equal(got, want) {
		t.Fatalf("after the second file: %v, want %v", got, want)
	}
	if r := e.OK("scan", "db.c", "--format", "csv"); strings.Contains(r.Stdout, "__op") || !strings.Contains(r.Stdout, "__source_lsn") {
		t.Fatalf("want __op left out and __source_lsn kept:\n%s", r.Stdout)
	}
}

// A stream reading an upsert table stops at its first batch with deletes
// (an overwrite snapshot), naming the option that skips such snapshots,
// as Spark's streaming read does; with the option it reads the appends.
func TestUpsertTableStreamRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(11, 200)
	g.File(t, e.Landing, 100)
	e.OK(e.upsertArgs()...)
	g.File(t, e.Landing, 100)
	e.OK(e.upsertArgs()...)
	ops := []string{}
	for _, s := range e.Snapshots("db.t") {
		ops = append(ops, s.Operation)
	}
	if !slices.Contains(ops, "overwrite") {
		t.Fatalf("no overwrite snapshot among %v", ops)
	}
	r := e.Run("stream", "--source-table", "db.t", "--table", "db.copy", "--checkpoint", e.Ckpt+"-copy")
	if r.Code == 0 || !strings.Contains(r.Stderr, "streaming-skip-overwrite-snapshots") {
		t.Fatalf("want the read to stop naming streaming-skip-overwrite-snapshots, got %s", r)
	}
	e.OK("stream", "--source-table", "db.t", "--table", "db.copy", "--checkpoint", e.Ckpt+"-copy2",
		"-o", "streaming-skip-overwrite-snapshots=true")
	if n := len(e.TableIDs("db.copy")); n == 0 {
		t.Fatal("the skipping read copied nothing")
	}
}

// Compaction beside a running upsert stream: both make progress; once the
// stream stops, a final compaction leaves the oracle's rows, no delete
// file, and no more data files than ceil(bytes / target) per partition.
func TestUpsertCompactionBesideStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(5, 3000)
	const files = 24
	g.File(t, e.Landing, 600)
	var stderr syncBuffer
	writer := e.startFloe(&stderr, e.upsertArgs("--trigger", "50ms", "--max-files-per-trigger", "1", "--maintenance=false")...)
	defer writer.Process.Kill()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stream's stderr:\n%s", stderr.String())
		}
	})
	// Batches are counted by their snapshots, not by their ids: a batch
	// whose only file was still being written commits nothing, so ids can
	// run ahead of the files read.
	committed := func() int {
		r := e.Run("table", "snapshots", "db.t", "--json")
		var snaps []fixture.Snapshot
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &snaps) != nil {
			return -1
		}
		ids := map[string]bool{}
		for _, s := range snaps {
			if id, ok := s.Summary["floe.batch-id"]; ok {
				ids[id] = true
			}
		}
		return len(ids)
	}
	fixture.WaitFor(t, 20*time.Second, "the first batch", func() bool { return committed() >= 1 })
	compactions := 0
	for i := 1; i < files; i++ {
		g.File(t, e.Landing, 600)
		time.Sleep(40 * time.Millisecond)
		if i%4 == 0 {
			r := e.Run("maintain", "rewrite-data-files", "db.t", "--delete-ratio-threshold", "0.05", "--min-input-files", "2", "--json")
			switch {
			case r.Code == 0 && !strings.Contains(r.Stdout, `"added_data_files": 0`):
				compactions++
			case r.Code != 0:
				t.Logf("compaction %d: %s", i, r)
			}
		}
	}
	fixture.WaitFor(t, 60*time.Second, "every batch", func() bool { return committed() == files })
	if err := writer.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(writer.Wait()); code != 0 {
		t.Fatalf("stream exited %d", code)
	}
	if compactions == 0 {
		t.Fatal("no compaction made progress beside the stream")
	}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
		t.Fatalf("after the stream: %s", d)
	}

	e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
		t.Fatalf("after the final compaction: %s", d)
	}
	var list []struct {
		Content string `json:"content"`
		Size    int64  `json:"file_size_in_bytes"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "files", "db.t", "--json").Stdout), &list); err != nil {
		t.Fatal(err)
	}
	var bytes int64
	for _, f := range list {
		if f.Content != "data" {
			t.Fatalf("a %s file is left after the final compaction", f.Content)
		}
		bytes += f.Size
	}
	const target, partitions = 512 << 20, 1
	if limit := int((bytes+target-1)/target) + partitions; len(list) > limit {
		t.Fatalf("%d data files of %d bytes, want at most %d", len(list), bytes, limit)
	}
}

// Schema evolution in mode upsert adds the batch's new columns, not its
// op column, and an upsert fills the new column of a replaced row.
func TestUpsertSchemaEvolution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := time.Now().Add(-time.Minute)
	for i, body := range []string{"id,v,op\n1,a,c\n2,b,c\n", "id,v,op,extra\n1,aa,u,x\n3,c,c,y\n"} {
		p := filepath.Join(e.Landing, fmt.Sprintf("f%d.csv", i))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at.Add(time.Duration(i)*time.Second), at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		e.OK(e.upsertArgs("--schema-evolution", "add-columns")...)
	}
	if got, want := dbzRows(t, e, "db.t", "id", "v", "extra"), []string{"1|aa|x", "2|b|null", "3|c|y"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if header, _, _ := strings.Cut(e.OK("scan", "db.t", "--format", "csv").Stdout, "\n"); header != "id,v,extra" {
		t.Fatalf("the table's columns are %s, want id,v,extra", header)
	}
}

// The table is the record in mode upsert too: a lost checkpoint is
// refused, rebuilt from the table, and the stream goes on to the oracle
// without applying a batch twice; a restored older checkpoint is refused.
func TestUpsertCheckpointRebuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(3, 500)
	for range 3 {
		g.File(t, e.Landing, 300)
		e.OK(e.upsertArgs()...)
	}
	backup := filepath.Join(e.Dir, "backup")
	if err := os.CopyFS(backup, os.DirFS(e.Ckpt)); err != nil {
		t.Fatal(err)
	}
	g.File(t, e.Landing, 300)
	e.OK(e.upsertArgs()...)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	if r := e.Run(e.upsertArgs()...); r.Code != 2 || !strings.Contains(r.Stderr, "floe checkpoint rebuild") {
		t.Fatalf("want the lost checkpoint refused, naming the rebuild, got %s", r)
	}
	e.OK(append([]string{"checkpoint", "rebuild"}, e.upsertArgs()[1:]...)...)
	g.File(t, e.Landing, 300)
	e.OK(e.upsertArgs()...)
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
		t.Fatalf("after the rebuild: %s", d)
	}

	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(e.Ckpt, os.DirFS(backup)); err != nil {
		t.Fatal(err)
	}
	if r := e.Run(e.upsertArgs()...); r.Code != 2 || !strings.Contains(r.Stderr, "behind") {
		t.Fatalf("want the restored checkpoint refused as behind the table, got %s", r)
	}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
		t.Fatalf("after the refused run: %s", d)
	}
}
