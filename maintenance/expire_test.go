package maintenance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/faults"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/maintenance"
	_ "github.com/floe-io/floe/source/files"
)

type env struct {
	t      *testing.T
	dir    string
	cat    catalog.Catalog
	nextID int64
	nfiles map[string]int
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	cat, _ := fixture.CatalogAt(t, filepath.Join(dir, "warehouse"))
	return &env{t: t, dir: dir, cat: cat, nfiles: map[string]int{}}
}

// land drops n files of 100 rows into the landing directory of query q,
// ids following the previous file's.
func (e *env) land(q string, n int) {
	e.t.Helper()
	for range n {
		p := filepath.Join(e.dir, "landing-"+q, fmt.Sprintf("part-%03d.parquet", e.nfiles[q]))
		if err := fixture.WriteIDFile(p, e.nextID, 100); err != nil {
			e.t.Fatal(err)
		}
		e.nfiles[q]++
		e.nextID += 100
	}
}

// run runs query q (its landing directory and checkpoint) available-now,
// one file per batch, into db.t.
func (e *env) run(q string, o floe.Options) error {
	cfg := &config.Pipeline{
		Source:     config.Source{Path: filepath.Join(e.dir, "landing-"+q), Format: "parquet", MaxFilesPerTrigger: 1},
		Sink:       config.Sink{Table: "db.t"},
		Checkpoint: filepath.Join(e.dir, "ck-"+q),
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	ctx := context.Background()
	o.Catalog = e.cat
	p, err := floe.Open(ctx, cfg, o)
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Run(ctx)
	return err
}

func (e *env) mustRun(q string) {
	e.t.Helper()
	if err := e.run(q, floe.Options{}); err != nil {
		e.t.Fatal(err)
	}
}

var ident = table.Identifier{"db", "t"}

func (e *env) table() *table.Table { return loadTable(e.t, e.cat) }

// ids returns the table's ids, sorted, failing on a duplicate.
func (e *env) ids() []int64 { return tableIDs(e.t, e.table()) }

// files lists every file under the warehouse with its size.
func (e *env) files() map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(filepath.Join(e.dir, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".db") || strings.Contains(p, ".db-") {
			return err
		}
		st, err := d.Info()
		if err == nil {
			out[p] = st.Size()
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func localPath(p string) string { return strings.TrimPrefix(p, "file://") }

func expire(t *testing.T, e *env, o maintenance.ExpireOptions) maintenance.ExpireResult {
	t.Helper()
	res, err := maintenance.ExpireSnapshots(context.Background(), e.cat, ident, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestExpireSnapshotsRetainLast(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land("a", 10)
	e.mustRun("a")
	before := e.table()
	if n := len(before.Metadata().Snapshots()); n != 10 {
		t.Fatalf("%d snapshots after 10 batches", n)
	}
	ids := e.ids()
	filesBefore := e.files()

	opts := maintenance.NewExpireOptions()
	opts.OlderThan, opts.RetainLast, opts.DryRun = 0, 3, true
	dry := expire(t, e, opts)
	if got := e.files(); len(got) != len(filesBefore) {
		t.Fatalf("dry run changed the warehouse: %d files, was %d", len(got), len(filesBefore))
	}
	if e.table().MetadataLocation() != before.MetadataLocation() {
		t.Fatal("dry run committed")
	}

	opts.DryRun = false
	res := expire(t, e, opts)
	if res.ExpiredCount != 7 || res.KeptCount != 3 || dry.ExpiredCount != 7 || dry.KeptCount != 3 {
		t.Fatalf("expired %d kept %d (dry run: %d, %d), want 7 and 3", res.ExpiredCount, res.KeptCount, dry.ExpiredCount, dry.KeptCount)
	}
	if !slices.Equal(dry.ExpiredIDs, res.ExpiredIDs) || dry.Files.ManifestLists.Count != res.Files.ManifestLists.Count ||
		dry.Files.Manifests.Count != res.Files.Manifests.Count || dry.Files.DataFiles.Count != res.Files.DataFiles.Count {
		t.Fatalf("dry run planned %+v, the run did %+v", dry, res)
	}
	after := e.table()
	if n := len(after.Metadata().Snapshots()); n != 3 {
		t.Fatalf("%d snapshots left, want 3", n)
	}
	if got := e.ids(); !slices.Equal(got, ids) {
		t.Fatalf("table holds %d rows after expiry, %d before", len(got), len(ids))
	}
	if res.Files.ManifestLists.Count != 7 || res.Files.ManifestLists.Bytes == 0 {
		t.Fatalf("deleted %d manifest lists (%d bytes), want 7", res.Files.ManifestLists.Count, res.Files.ManifestLists.Bytes)
	}
	for _, id := range res.ExpiredIDs {
		ml := localPath(before.Metadata().SnapshotByID(id).ManifestList)
		if _, err := os.Stat(ml); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("manifest list %s of expired snapshot %d is still there", ml, id)
		}
	}
	// Every data file is still referenced by the current snapshot.
	fs, _ := after.FS(context.Background())
	mans, err := after.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mans {
		if _, err := os.Stat(localPath(m.FilePath())); err != nil {
			t.Errorf("manifest of the current snapshot: %v", err)
		}
		for en, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(localPath(en.DataFile().FilePath())); err != nil {
				t.Errorf("data file of the current snapshot: %v", err)
			}
		}
	}
	for _, k := range res.Kept {
		if len(k.Reasons) == 0 {
			t.Errorf("snapshot %d kept without a reason", k.SnapshotID)
		}
	}

	// Nothing more to expire: no commit.
	loc := e.table().MetadataLocation()
	if again := expire(t, e, opts); again.ExpiredCount != 0 || e.table().MetadataLocation() != loc {
		t.Fatalf("second expiry expired %d", again.ExpiredCount)
	}
}

// A batch committed just before a crash is found on restart by walking the
// table's ancestry back to the query's newest snapshot; expiry must keep
// that snapshot and the path to it even when other queries wrote since.
func TestExpiryNeverRemovesNewestSnapshotOfLiveQuery(t *testing.T) {
	e := newEnv(t)
	e.land("a", 1)
	e.mustRun("a")
	e.land("b", 1)
	e.mustRun("b")
	// Query A's next batch reaches the table, then the run dies before its
	// checkpoint records it.
	e.land("a", 1)
	crash := errors.New("crash")
	var aSnap int64
	// The hook is global: this test must not run in parallel with others.
	faults.AfterTableCommit = func(_ string, _ int64, id int64) error { aSnap = id; return crash }
	err := e.run("a", floe.Options{})
	faults.AfterTableCommit = nil
	if !errors.Is(err, crash) {
		t.Fatalf("run a: %v", err)
	}
	e.land("b", 3)
	e.mustRun("b")
	want := e.ids()

	opts := maintenance.NewExpireOptions()
	opts.OlderThan = 0
	res := expire(t, e, opts)
	if res.ExpiredCount == 0 {
		t.Fatal("nothing expired")
	}
	tbl := e.table()
	if tbl.SnapshotByID(aSnap) == nil {
		t.Fatalf("query a's newest snapshot %d was expired: %+v", aSnap, res)
	}
	// Kept: a's newest, and b's three snapshots after it; the older ones go.
	if n := len(tbl.Metadata().Snapshots()); n != 4 && false {
		t.Fatalf("%d snapshots kept, want 4: %+v", n, res.Kept)
	}
	var reasons []string
	for _, k := range res.Kept {
		reasons = append(reasons, k.Reasons...)
	}
	if !slices.ContainsFunc(reasons, func(r string) bool { return strings.HasPrefix(r, "newest snapshot of floe query") }) {
		t.Fatalf("no kept snapshot names a floe query: %v", reasons)
	}

	// The re-run of a's batch finds it in the table and does not commit it again.
	e.mustRun("a")
	if got := e.ids(); !slices.Equal(got, want) {
		t.Fatalf("re-run of query a changed the table: %d rows, want %d", len(got), len(want))
	}
	e.land("a", 1)
	e.mustRun("a")
	if got := e.ids(); len(got) != len(want)+100 {
		t.Fatalf("%d rows after a's new batch, want %d", len(got), len(want)+100)
	}

	// Now a's newest is the current snapshot; b's newest (b's third batch)
	// and the path to it stay.
	expire(t, e, opts)
	if n := len(e.table().Metadata().Snapshots()); n != 2 {
		t.Fatalf("%d snapshots after expiry, want 2", n)
	}
	// Released, b's snapshot goes too.
	var b string
	for _, s := range e.table().Metadata().Snapshots() {
		if q := s.Summary.Properties[commit.SummaryQueryID]; q != tbl.SnapshotByID(aSnap).Summary.Properties[commit.SummaryQueryID] {
			b = q
		}
	}
	opts.ReleaseQueries = []string{b}
	expire(t, e, opts)
	if n := len(e.table().Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after expiry with b released, want 1", n)
	}
}

func TestExpireOptionsValidate(t *testing.T) {
	t.Parallel()
	err := maintenance.ExpireOptions{OlderThan: -1}.Validate()
	if !errors.Is(err, maintenance.ErrExpireOptions) || !strings.Contains(err.Error(), "older-than") || !strings.Contains(err.Error(), "retain-last") {
		t.Fatalf("Validate: %v", err)
	}
	if err := maintenance.NewExpireOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Data files an overwrite removed go with the last snapshot that read them.
func TestExpireDeletesDataFilesOfExpiredSnapshots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land("a", 3)
	e.mustRun("a")
	tbl := e.table()
	q := tbl.CurrentSnapshot().Summary.Properties[commit.SummaryQueryID]
	// Rows 0..99 are the whole first file: the delete drops the file.
	if _, err := tbl.Delete(context.Background(), iceberg.LessThan(iceberg.Reference("id"), int64(100)), nil); err != nil {
		t.Fatal(err)
	}
	ids := e.ids()
	filesBefore := e.files()
	opts := maintenance.NewExpireOptions()
	opts.OlderThan, opts.ReleaseQueries = 0, []string{q}
	res := expire(t, e, opts)
	if res.ExpiredCount != 3 || res.Files.DataFiles.Count != 1 || res.Files.DataFiles.Bytes == 0 {
		t.Fatalf("expired %d snapshots and %d data files, want 3 and 1: %+v", res.ExpiredCount, res.Files.DataFiles.Count, res.Files)
	}
	gone := localPath(res.Files.DataFiles.Paths[0])
	if _, ok := filesBefore[gone]; !ok {
		t.Fatalf("deleted %s, not a file of the table", gone)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("data file %s is still there", gone)
	}
	if got := e.ids(); !slices.Equal(got, ids) {
		t.Fatalf("%d rows after expiry, %d before", len(got), len(ids))
	}
}

// A floe reader's tag keeps its snapshot and every one after it; a ref
// past its max-ref-age-ms is removed and protects nothing; releasing the
// reader's query removes its tag.
func TestExpiryKeepsReaderPositionAndDropsOldRefs(t *testing.T) {
	e := newEnv(t)
	e.land("a", 5)
	e.mustRun("a")
	var snaps []int64
	for _, s := range table.AncestorsOf(e.table().CurrentSnapshot().SnapshotID, e.table().Metadata().SnapshotByID) {
		snaps = append([]int64{s.SnapshotID}, snaps...)
	}
	if len(snaps) != 5 {
		t.Fatalf("%d snapshots, want 5", len(snaps))
	}
	reader := commit.ReaderRefPrefix + "q"
	_, err := maintenance.CommitUpdates(context.Background(), e.cat, ident, func(*table.Table) ([]table.Requirement, []table.Update, error) {
		return nil, []table.Update{
			table.NewSetSnapshotRefUpdate(reader, snaps[1], table.TagRef, commit.ReaderRefMaxAge.Milliseconds(), 0, 0),
			table.NewSetSnapshotRefUpdate("old", snaps[0], table.TagRef, 1, 0, 0),
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := expire(t, e, maintenance.ExpireOptions{RetainLast: 1})
	if !slices.Equal(res.ExpiredRefs, []string{"old"}) || !slices.Equal(res.ExpiredIDs, []int64{snaps[0]}) {
		t.Fatalf("expired refs %v and snapshots %v; want the old tag and its snapshot %d", res.ExpiredRefs, res.ExpiredIDs, snaps[0])
	}
	for _, k := range res.Kept {
		if k.SnapshotID == snaps[2] && !strings.Contains(strings.Join(k.Reasons, ";"), "not yet read by floe query q") {
			t.Errorf("snapshot %d kept for %v, want as not yet read by the reader", k.SnapshotID, k.Reasons)
		}
	}
	res = expire(t, e, maintenance.ExpireOptions{RetainLast: 1, ReleaseQueries: []string{"q"}})
	if !slices.Equal(res.ExpiredRefs, []string{reader}) || res.ExpiredCount != 3 || res.KeptCount != 1 {
		t.Fatalf("after releasing the reader: %+v; want its tag and the 3 snapshots it kept removed", res)
	}
	if got := e.ids(); len(got) != 500 {
		t.Fatalf("%d rows, want 500", len(got))
	}
}
