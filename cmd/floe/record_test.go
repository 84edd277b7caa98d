package main_test

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// exactly fails the test unless table holds each id of [0, n) once, read
// with iceberg-go's scan, not floe's.
func (e *env) exactly(table string, n int64) {
	e.T.Helper()
	if d := fixture.Exact(e.TableIDs(table), 0, n); d != "" {
		e.T.Fatalf("%s: %s", table, d)
	}
}

// refused fails the test unless r is a refusal: exit code 2 and a message
// holding each of want.
func refused(t *testing.T, r fixture.Result, want ...string) {
	t.Helper()
	if r.Code != 2 {
		t.Fatalf("want exit code 2, got %s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Fatalf("the refusal does not name %q:\n%s", w, r.Stderr)
		}
	}
}

// land drops file i of a numbered series: 100 ids from 100*i.
func (e *env) land(i int) {
	e.T.Helper()
	e.WriteIDs(fmt.Sprintf("f%03d.parquet", i), int64(100*i), 100)
}

// streamFiles lands files first..first+n-1, streaming after each: one
// batch and one snapshot per file.
func (e *env) streamFiles(first, n int) {
	e.T.Helper()
	for i := first; i < first+n; i++ {
		e.land(i)
		e.OK(e.StreamArgs("db.t")...)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}

func restoreDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(to); err != nil {
		t.Fatal(err)
	}
	copyDir(t, from, to)
}

// A checkpoint restored from a backup is behind the table: the run refuses
// instead of taking new files for batches the table holds already, and
// checkpoint rebuild brings it to the table's state; nothing is lost.
func TestRestoredCheckpointIsRefusedThenRebuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	e.land(1)
	e.OK(e.StreamArgs("db.t")...)
	backup := filepath.Join(e.Dir, "ck.bak")
	copyDir(t, e.Ckpt, backup)
	e.land(2)
	e.OK(e.StreamArgs("db.t")...)
	e.land(3)
	e.OK(e.StreamArgs("db.t")...)
	restoreDir(t, backup, e.Ckpt)
	e.land(4)
	refused(t, e.Stream("db.t"), "is behind table db.t", "holds batch 2", "floe checkpoint rebuild")
	refused(t, e.Run(append([]string{"checkpoint", "verify"}, e.StreamArgs("db.t")[1:]...)...), "is behind table db.t")
	e.exactly("db.t", 400)

	r := e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
	if !strings.Contains(r.Stdout, "batch 2") {
		t.Fatalf("rebuild: %s", r)
	}
	e.OK(append([]string{"checkpoint", "verify"}, e.StreamArgs("db.t")[1:]...)...)
	e.OK(e.StreamArgs("db.t")...)
	e.land(5)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 600)
}

// Deleting any part of a checkpoint (a source-log entry, the source log,
// the metadata, an offsets entry) is refused with the repair; rebuild then
// resumes exactly, as it does after the whole checkpoint is lost.
func TestDamagedCheckpointIsRefusedThenRebuilt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		damage func(ck string) error
		want   string
	}{
		{"source log entry", func(ck string) error { return os.Remove(filepath.Join(ck, "sources", "0", "2")) }, "ends at log batch 1"},
		{"middle source log entry", func(ck string) error { return os.Remove(filepath.Join(ck, "sources", "0", "1")) }, "lacks log batch 1"},
		{"source log", func(ck string) error { return os.RemoveAll(filepath.Join(ck, "sources")) }, "is empty or gone"},
		{"metadata", func(ck string) error { return os.Remove(filepath.Join(ck, "metadata")) }, "lost its metadata file"},
		{"offsets entry", func(ck string) error { return os.Remove(filepath.Join(ck, "offsets", "2")) }, "offsets entries were deleted"},
		{"whole checkpoint", os.RemoveAll, "this query's checkpoint was lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.streamFiles(0, 3)
			if err := c.damage(e.Ckpt); err != nil {
				t.Fatal(err)
			}
			e.land(3)
			refused(t, e.Stream("db.t"), c.want, "floe checkpoint rebuild")
			e.exactly("db.t", 300)
			e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
			e.OK(e.StreamArgs("db.t")...)
			e.exactly("db.t", 400)
		})
	}
}

// Rebuild of a checkpoint that verify passes says it already matches and
// leaves it as it is, instead of setting a sound checkpoint aside.
func TestRebuildLeavesMatchingCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	flags := e.StreamArgs("db.t")[1:]
	e.OK(append([]string{"checkpoint", "verify"}, flags...)...)
	before := fixture.Tree(t, e.Ckpt)
	r := e.OK(append([]string{"checkpoint", "rebuild"}, flags...)...)
	want := fmt.Sprintf("checkpoint %s already matches table db.t at batch 1; nothing to rebuild\n", e.Ckpt)
	if r.Stdout != want {
		t.Fatalf("want %q, got %s", want, r)
	}
	if after := fixture.Tree(t, e.Ckpt); !maps.Equal(before, after) {
		t.Fatalf("rebuild changed a matching checkpoint:\nbefore %v\nafter  %v", before, after)
	}
	if aside, _ := filepath.Glob(e.Ckpt + ".damaged-*"); len(aside) > 0 {
		t.Fatalf("rebuild set a matching checkpoint aside: %v", aside)
	}
	e.land(2)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 300)
}

// Rebuild refuses when the landing directory no longer tells which files
// were read, and changes nothing.
func TestRebuildRefusesWhenLandingChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 3)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.Landing, "f001.parquet")); err != nil {
		t.Fatal(err)
	}
	refused(t, e.Run(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...), "2 files", "table records 3", "cannot be rebuilt exactly")
	if _, err := os.Stat(e.Ckpt); err == nil {
		entries, _ := os.ReadDir(e.Ckpt)
		if len(entries) > 1 {
			t.Fatalf("a refused rebuild left a checkpoint: %v", entries)
		}
	}
	e.exactly("db.t", 300)
}

// A stream reading an Iceberg table whose checkpoint is lost resumes from
// the sink table's record of its snapshot offset, with the one-line notice
// a Kafka stream gets, as the same query: every source row lands once,
// read back by iceberg-go's scan, and the source table keeps one position
// tag, the query's. floe checkpoint rebuild does the same explicitly.
func TestIcebergSourceLostCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ck := e.Ckpt + "-b"
	read := func() fixture.Result {
		e.T.Helper()
		return e.OK("stream", "--source-table", "db.a", "--table", "db.b", "--checkpoint", ck, "-o", "streaming-max-files-per-micro-batch=1")
	}
	for i := range 3 {
		e.land(i)
		e.OK(e.StreamArgs("db.a")...)
	}
	read()
	query := e.Snapshots("db.b")[0].Summary["floe.query-id"]
	if err := os.RemoveAll(ck); err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 5; i++ {
		e.land(i)
		e.OK(e.StreamArgs("db.a")...)
	}
	r := read()
	if m := checkpointNotice.FindAllStringSubmatch(r.Stderr, -1); len(m) != 1 || m[0][1] != query || m[0][2] != "2" {
		t.Fatalf("want one notice naming query %s and batch 2, got %q in:\n%s", query, m, r.Stderr)
	}
	e.exactly("db.b", 500)
	ctx := t.Context()
	cat := e.catalog(ctx)
	if c, ok := cat.(io.Closer); ok {
		defer c.Close()
	}
	src := e.loadTable(ctx, cat, "db.a")
	var tags []string
	for name, ref := range src.Metadata().Refs() {
		if strings.HasPrefix(name, "floe-reader-") {
			tags = append(tags, fmt.Sprintf("%s@%d", name, ref.SnapshotID))
		}
	}
	if want := fmt.Sprintf("floe-reader-%s@%d", query, src.CurrentSnapshot().SnapshotID); !slices.Equal(tags, []string{want}) {
		t.Fatalf("the source table's reader tags are %v, want only %s", tags, want)
	}

	if err := os.RemoveAll(ck); err != nil {
		t.Fatal(err)
	}
	e.land(5)
	e.OK(e.StreamArgs("db.a")...)
	e.OK("checkpoint", "rebuild", "--source-table", "db.a", "--table", "db.b", "--checkpoint", ck)
	if r := read(); strings.Contains(r.Stderr, "was missing") {
		t.Fatalf("a rebuilt checkpoint is not missing:\n%s", r.Stderr)
	}
	e.exactly("db.b", 600)
}

// A catalog that lost its database is not a new catalog: the run refuses
// to create the table again, names the metadata file to register, and
// after floe table register the stream goes on exactly.
func TestLostCatalogIsRefusedThenRegistered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 3)
	removeCatalog(t, e.Warehouse)
	e.land(3)
	r := e.Stream("db.t")
	refused(t, r, "db.t is not in the catalog", "floe table register db.t")
	meta := r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):]
	meta = strings.Fields(meta)[0]
	if len(e.TableIDs("db.t")) != 0 {
		t.Fatal("the refused run created the table")
	}
	e.OK("table", "register", "db.t", meta)
	refused(t, e.Run("table", "register", "db.t", meta), "already exists")
	e.exactly("db.t", 300)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 400)
}

// A checkpoint lost with its table's entry in the catalog: nothing but the
// table's location says it existed, so the run refuses to create it again
// and names floe table register; once it is registered, the run is refused
// as a new query over the table's input, naming floe checkpoint rebuild,
// and the table still holds every row once.
func TestLostCheckpointAndCatalogAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	removeCatalog(t, e.Warehouse)
	e.land(2)
	r := e.Stream("db.t")
	refused(t, r, "db.t is not in the catalog", "floe table register db.t ")
	meta := strings.Fields(r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):])[0]
	e.OK("table", "register", "db.t", meta)
	refused(t, e.Stream("db.t"), "this query's checkpoint was lost", "floe checkpoint rebuild")
	e.exactly("db.t", 200)
	// The refused runs planned nothing that stays: the rebuild takes the
	// table's query, and the stream goes on exactly.
	e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 300)
}

// A table dropped and created again by another query is another table: it
// holds nothing of the first query, whose checkpoint records batches as
// committed to that name. Its runs and floe checkpoint verify refuse the
// checkpoint, rather than take those batches as done and go on without
// their rows; the new table's own query goes on exactly.
func TestTableCreatedAgainUnderCheckpointIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	e.OK("table", "drop", "db.t", "--purge")
	other := filepath.Join(e.Dir, "other-checkpoint")
	otherArgs := append(e.StreamArgs("db.t")[:0:0], e.StreamArgs("db.t")...)
	for i, a := range otherArgs {
		if a == e.Ckpt {
			otherArgs[i] = other
		}
	}
	e.OK(otherArgs...)
	e.exactly("db.t", 200)

	e.land(2)
	want := []string{"table db.t holds no batch of query", "records batch 1 committed to it", "dropped and created again", "start a new checkpoint"}
	refused(t, e.Stream("db.t"), want...)
	refused(t, e.Run(append([]string{"checkpoint", "verify"}, e.StreamArgs("db.t")[1:]...)...), want...)
	e.exactly("db.t", 200)
	e.OK(otherArgs...)
	e.exactly("db.t", 300)
}

// A table registered again from metadata written before the query's first
// commit holds nothing of the query either: the run refuses, naming the
// metadata file its checkpoint last committed, and after that file is
// registered the stream goes on exactly.
func TestTableBeforeFirstCommitUnderCheckpointIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	first, _ := filepath.Glob(filepath.Join(e.Warehouse, "db.db", "t", "metadata", "00000-*.metadata.json"))
	if len(first) != 1 {
		t.Fatalf("metadata version 0 of db.t: %v", first)
	}
	e.OK("table", "drop", "db.t")
	e.OK("table", "register", "db.t", first[0])
	e.land(2)
	r := e.Stream("db.t")
	refused(t, r, "table db.t holds no batch of query", "went back to metadata older than the query's first commit", "floe table register db.t ")
	if n := e.Count("db.t"); n != 0 {
		t.Fatalf("the refused run wrote %d rows into the old metadata", n)
	}
	meta := strings.Fields(r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):])[0]
	meta = strings.TrimRight(meta, ");")
	e.OK("table", "drop", "db.t")
	e.OK("table", "register", "db.t", meta)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 300)
}

// A table the catalog lost, under a checkpoint that lost its commits log
// too, so that nothing says the table existed but its own location: the
// run refuses to create a new table over the old one's metadata (a later
// registration of the newest file would then pick either's and lose the
// other's rows), leaves the directory as it was, and after floe table
// register the stream goes on exactly.
func TestTableCreatedOverLostTableIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	for _, f := range []string{"commits/0", "commits/1"} {
		if err := os.Remove(filepath.Join(e.Ckpt, f)); err != nil {
			t.Fatal(err)
		}
	}
	removeCatalog(t, e.Warehouse)
	metaDir := filepath.Join(e.Warehouse, "db.db", "t", "metadata")
	before, _ := filepath.Glob(filepath.Join(metaDir, "*.metadata.json"))
	e.land(2)
	r := e.Stream("db.t")
	refused(t, r, "db.t is not in the catalog", "holds a table with commits", "floe table register db.t ")
	if after, _ := filepath.Glob(filepath.Join(metaDir, "*.metadata.json")); !slices.Equal(before, after) {
		t.Fatalf("the refused run left metadata files behind: %v, before %v", after, before)
	}
	if r := e.Run("table", "list", "db"); strings.Contains(r.Stdout, "db.t") {
		t.Fatalf("the refused run left db.t in the catalog: %s", r)
	}
	meta := strings.Fields(r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):])[0]
	e.OK("table", "register", "db.t", meta)
	refused(t, e.Stream("db.t"), "is behind table db.t", "floe checkpoint rebuild")
	e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 300)
}

// A checkpoint that lost the offsets and commits entries of its one
// committed batch, beside a table its catalog lost: the refused run plans
// batch 0 again, now with a file that arrived since, and forgets that plan
// when the table turns out to be lost (nothing of it reached a table).
// After the table is registered, the checkpoint is behind the table, which
// the run refuses, and the rebuilt checkpoint ingests the new file once.
// (The check of a log batch written again after its commit is
// source/files' TestLogBatchWrittenAgainIsRefused.)
func TestSourceLogWrittenAgainIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := e.StreamArgs("db.t")
	e.land(0)
	e.OK(args...)
	for _, f := range []string{"commits/0", "offsets/0"} {
		if err := os.Remove(filepath.Join(e.Ckpt, f)); err != nil {
			t.Fatal(err)
		}
	}
	removeCatalog(t, e.Warehouse)
	e.land(1)
	r := e.Run(args...)
	refused(t, r, "floe table register db.t ")
	meta := strings.Fields(r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):])[0]
	e.OK("table", "register", "db.t", meta)
	refused(t, e.Run(args...), "is behind table db.t", "floe checkpoint rebuild")
	e.OK(append([]string{"checkpoint", "rebuild"}, args[1:]...)...)
	e.OK(args...)
	e.exactly("db.t", 200)
}

// A run killed before it created its table leaves a checkpoint with a
// planned batch; once that checkpoint loses its metadata too, nothing
// names the query, and nothing was committed anywhere: rebuild makes an
// empty checkpoint and the next run reads the whole input.
func TestCheckpointWithoutMetadataOrTableIsRebuiltEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := e.StreamArgs("db.t")
	e.land(0)
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1"}, args...); r.Code != 137 {
		t.Fatalf("want the crash hook's exit 137, got %s", r)
	}
	removeCatalog(t, e.Warehouse)
	if err := os.RemoveAll(filepath.Join(e.Warehouse, "db.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.Ckpt, "metadata")); err != nil {
		t.Fatal(err)
	}
	refused(t, e.Run(args...), "lost its metadata file", "floe checkpoint rebuild")
	r := e.OK(append([]string{"checkpoint", "rebuild"}, args[1:]...)...)
	if !strings.Contains(r.Stdout, "starts a new query") {
		t.Fatalf("rebuild says: %s", r.Stdout)
	}
	e.land(1)
	e.OK(args...)
	e.exactly("db.t", 200)
}

func removeCatalog(t *testing.T, wh string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(wh, "catalog.db*"))
	if len(files) == 0 {
		t.Fatalf("no catalog.db in %s", wh)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
}

// Deleting the catalog database under a running stream: the next commit
// goes into the deleted file, which floe notices and stops on instead of
// calling the batch committed; registering the newest metadata brings
// every row back exactly once.
func TestCatalogDeletedWhileStreaming(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land(0)
	var stderr syncBuffer
	cmd := e.startFloe(&stderr, e.StreamArgs("db.t", "--trigger", "processing-time=200ms")...)
	defer cmd.Process.Kill()
	fixture.WaitFor(t, 20*time.Second, "the first file", func() bool { return len(e.TableIDs("db.t")) == 100 })
	removeCatalog(t, e.Warehouse)
	e.land(1)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the stream went on after its catalog database was deleted:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), "was deleted or replaced") {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	metas, _ := filepath.Glob(filepath.Join(e.Warehouse, "db.db", "t", "metadata", "*.metadata.json"))
	sort.Strings(metas)
	e.OK("table", "register", "db.t", metas[len(metas)-1])
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 200)
}

// The README's "table is the record" block works as written, after the
// tour's first run: each command exits as its comment says (exit 2 where
// it says so, else 0), and the table keeps the quickstart's 60 rows.
func TestReadmeTableIsTheRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	text := e.readme()
	at := strings.Index(text, "### The table is the record")
	if at < 0 {
		t.Fatal("README.md has no \"The table is the record\" section")
	}
	_, block, _ := strings.Cut(text[at:], "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	vars := []string{"FLOE_WAREHOUSE=" + filepath.Join(e.Dir, "tour", "warehouse")}
	if r := e.RunEnv(floeBin, vars, "run", "examples/quickstart.yaml", "--checkpoint", "tour/checkpoint"); r.Code != 0 {
		t.Fatal(r)
	}
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, comment, _ := strings.Cut(line, "  #")
		cmd = strings.TrimSpace(cmd)
		switch {
		case strings.HasPrefix(cmd, "rm "):
			for _, p := range shellWords(t, cmd)[1:] {
				if !strings.HasPrefix(p, "-") {
					if err := os.RemoveAll(filepath.Join(e.Dir, p)); err != nil {
						t.Fatal(err)
					}
				}
			}
		case strings.HasPrefix(cmd, "./floe "):
			r := e.RunEnv(floeBin, vars, shellWords(t, strings.TrimPrefix(cmd, "./floe "))...)
			want := 0
			if strings.Contains(comment, "exit 2") {
				want = 2
			}
			if r.Code != want {
				t.Fatalf("README: %s: want exit %d, got %s", cmd, want, r)
			}
			ran++
		default:
			t.Fatalf("README: a line the test does not know how to run: %q", line)
		}
	}
	if ran < 6 {
		t.Fatalf("the block ran %d floe commands", ran)
	}
	cat, _ := fixture.CatalogAt(t, filepath.Join(e.Dir, "tour", "warehouse"))
	ids, err := fixture.ReadIDs(t.Context(), cat, "db.quickstart", "order_id")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("id %d appears %d times", id, n)
		}
		total += n
	}
	if total != 60 {
		t.Fatalf("db.quickstart holds %d rows, want the quickstart's 60", total)
	}
}

// A pending batch (planned, stopped before its commits entry) whose source
// plan was deleted is refused, and rebuild resumes it exactly whether the
// stopped run's table commit happened or not.
func TestPendingBatchWithoutItsPlanIsRebuilt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, crash, refusal string
	}{
		{"committed to the table", "FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=1", "batch 2, which the table holds"},
		{"not committed", "FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1", "batch 2, planned and not committed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.streamFiles(0, 2)
			e.land(2)
			if r := e.RunEnv(floeBin, []string{c.crash}, e.StreamArgs("db.t")...); r.Code != 137 {
				t.Fatalf("want the crash hook's exit 137, got %s", r)
			}
			if err := os.Remove(filepath.Join(e.Ckpt, "sources", "0", "2")); err != nil {
				t.Fatal(err)
			}
			refused(t, e.Stream("db.t"), c.refusal, "floe checkpoint rebuild")
			e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
			e.OK(e.StreamArgs("db.t")...)
			e.exactly("db.t", 300)
		})
	}
}

// A deleted commits entry whose batch the source log has already folded
// into its compact entry cannot be re-run from the log: refused, and
// rebuilt from the table.
func TestDeletedCommitAfterLogCompactionIsRebuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 10) // batch 9's commit folds the log into a segment
	if _, err := os.Stat(filepath.Join(e.Ckpt, "sources", "0", "0-9.seg")); err != nil {
		t.Fatalf("the log was not compacted: %v", err)
	}
	if err := os.Remove(filepath.Join(e.Ckpt, "commits", "9")); err != nil {
		t.Fatal(err)
	}
	// The catalog goes back to the metadata before batch 9, so the table
	// does not hold the batch the checkpoint lost the commit of.
	metas, _ := filepath.Glob(filepath.Join(e.Warehouse, "db.db", "t", "metadata", "*.metadata.json"))
	sort.Strings(metas)
	removeCatalog(t, e.Warehouse)
	e.OK("table", "register", "db.t", metas[len(metas)-2])
	e.land(10)
	r := e.Stream("db.t")
	refused(t, r, "floe checkpoint rebuild")
	e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 1100)
}

// A run refused at start writes nothing into its checkpoint directory, so
// that floe checkpoint rebuild afterwards has nothing to set aside as
// damaged; a lost checkpoint is refused as this query's, naming the repair.
func TestRefusedRunLeavesNoCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.streamFiles(0, 2)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	r := e.Stream("db.t")
	refused(t, r, "this query's checkpoint was lost", "floe checkpoint rebuild", "A lost checkpoint", "up to batch 1")
	if strings.Contains(r.Stderr, "another query") {
		t.Fatalf("the refusal calls the table's query another one:\n%s", r.Stderr)
	}
	if _, err := os.Stat(e.Ckpt); err == nil {
		t.Fatalf("the refused run wrote checkpoint %s", e.Ckpt)
	}
	// A directory made ahead of the run is not the lost checkpoint: the
	// table's query is found at start and the run refused, leaving the
	// directory as it was.
	if err := os.MkdirAll(e.Ckpt, 0o755); err != nil {
		t.Fatal(err)
	}
	refused(t, e.Stream("db.t"), "duplicate rows")
	if _, err := os.Stat(filepath.Join(e.Ckpt, "metadata")); err == nil {
		t.Fatalf("the refused run wrote %s/metadata", e.Ckpt)
	}
	out := e.OK(append([]string{"checkpoint", "rebuild"}, e.StreamArgs("db.t")[1:]...)...)
	if strings.Contains(out.Stdout+out.Stderr, "damaged") {
		t.Fatalf("rebuild set something aside after a refused run:\n%s%s", out.Stdout, out.Stderr)
	}
	e.land(2)
	e.OK(e.StreamArgs("db.t")...)
	e.exactly("db.t", 300)
}
