package main_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// tableRefs is what a table's metadata names, as plain paths.
type tableRefs struct {
	location string
	// all holds every file any metadata of the table names; live, the ones
	// a reader of some snapshot opens, which must exist.
	all, live map[string]bool
}

// plainPath turns a file:// URI into the path the OS lists.
func plainPath(p string) string { return strings.TrimPrefix(p, "file://") }

// refs reads the table's metadata itself: the current metadata file and
// its log, every snapshot's manifest list, manifests and the files they
// name, and statistics files.
func (e *env) refs(name string) tableRefs {
	e.T.Helper()
	ctx := context.Background()
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: e.Warehouse})
	if err != nil {
		e.T.Fatal(err)
	}
	ident, err := floe.ParseIdent(name)
	if err != nil {
		e.T.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		e.T.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	meta := tbl.Metadata()
	r := tableRefs{location: plainPath(tbl.Location()), all: map[string]bool{}, live: map[string]bool{}}
	add := func(p string, live bool) {
		r.all[plainPath(p)] = true
		if live {
			r.live[plainPath(p)] = true
		}
	}
	add(tbl.MetadataLocation(), true)
	for l := range meta.PreviousFiles() {
		add(l.MetadataFile, false)
	}
	for s := range meta.Statistics() {
		add(s.StatisticsPath, true)
	}
	for s := range meta.PartitionStatistics() {
		add(s.StatisticsPath, true)
	}
	for _, s := range meta.Snapshots() {
		add(s.ManifestList, true)
		manifests, err := s.Manifests(fsys)
		if err != nil {
			e.T.Fatalf("manifests of snapshot %d: %v", s.SnapshotID, err)
		}
		for _, m := range manifests {
			add(m.FilePath(), true)
			entries, err := m.FetchEntries(fsys, false)
			if err != nil {
				e.T.Fatalf("entries of %s: %v", m.FilePath(), err)
			}
			for _, en := range entries {
				// A deleted entry's file may be gone with an expired snapshot.
				add(en.DataFile().FilePath(), en.Status() != iceberg.EntryStatusDELETED)
			}
		}
	}
	return r
}

// filesUnder lists the files under dir with their sizes.
func filesUnder(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fileKind names what an Iceberg file is from its name, as iceberg-go and
// floe name them.
func fileKind(p string) string {
	base := filepath.Base(p)
	switch {
	case strings.HasSuffix(base, ".parquet"):
		return "data"
	case strings.HasPrefix(base, "snap-") && strings.HasSuffix(base, ".avro"):
		return "manifest-list"
	case strings.HasSuffix(base, ".avro"):
		return "manifest"
	case strings.HasSuffix(base, ".metadata.json"):
		return "metadata"
	}
	return "other"
}

func kinds(paths []string) map[string]int {
	out := map[string]int{}
	for _, p := range paths {
		out[fileKind(p)]++
	}
	return out
}

// unreferenced lists the files under the table's location its metadata
// does not name, sorted.
func unreferenced(files map[string]int64, r tableRefs) []string {
	var out []string
	for p := range files {
		if !r.all[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// backdate sets every file's times to two hours ago, but for the spared.
func backdate(t *testing.T, files map[string]int64, spared ...string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	for p := range files {
		if slices.Contains(spared, p) {
			continue
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// liveFilesExist fails the test for any file the table reads that is gone.
func liveFilesExist(t *testing.T, r tableRefs) {
	t.Helper()
	for p := range r.live {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("referenced file is gone: %v", err)
		}
	}
}

func plainPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = plainPath(p)
	}
	slices.Sort(out)
	return out
}

// A commit killed after iceberg-go wrote its manifests and manifest list
// but before the catalog took the new metadata leaves the batch's data
// files and those manifests behind. remove-orphan-files removes exactly
// them; a young unreferenced file and every referenced file survive.
func TestRemoveOrphansOfAKilledCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt,
		"--trigger", "available-now", "--max-files-per-trigger", "1"}
	for i := range int64(3) {
		e.WriteIDs(fmt.Sprintf("part-%03d.parquet", i), i*100, 100)
	}
	e.OK(args...)
	loc := e.refs("db.t").location
	before := filesUnder(t, loc)

	e.WriteIDs("part-003.parquet", 300, 100)
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1"}, args...); r.Code != 137 {
		t.Fatalf("the crash hook did not fire: %s", r)
	}
	var killed []string
	for p := range filesUnder(t, loc) {
		if _, ok := before[p]; !ok {
			killed = append(killed, p)
		}
	}
	slices.Sort(killed)
	if k := kinds(killed); k["data"] == 0 || k["manifest"]+k["manifest-list"] == 0 || k["metadata"] != 0 {
		t.Fatalf("the killed commit left %v (%v), want data files and manifests and no metadata file", k, killed)
	}

	e.OK(args...)
	sameIDs(t, "after the restart", e.IDs("db.t"), idRange(0, 400))
	files := filesUnder(t, loc)
	refs := e.refs("db.t")
	if got := unreferenced(files, refs); !slices.Equal(got, killed) {
		t.Fatalf("unreferenced files after the restart:\n%v\nwant the killed commit's:\n%v", got, killed)
	}
	liveFilesExist(t, refs)

	young := filepath.Join(loc, "data", "00000-9-young.parquet")
	if err := os.WriteFile(young, []byte("a commit in flight"), 0o644); err != nil {
		t.Fatal(err)
	}
	backdate(t, files)
	var bytes int64
	for _, p := range killed {
		bytes += files[p]
	}

	dry := decode[orphanJSON](t, e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "1h", "--dry-run", "--json"))
	if !dry.DryRun || dry.Count != len(killed) || dry.Deleted != 0 || dry.Bytes != bytes || !slices.Equal(plainPaths(dry.Paths), killed) {
		t.Fatalf("dry run: %+v\nwant the killed commit's %d files (%d bytes):\n%v", dry, len(killed), bytes, killed)
	}
	if after := filesUnder(t, loc); len(after) != len(files)+1 {
		t.Fatalf("the dry run changed the files: %d, want %d", len(after), len(files)+1)
	}
	res := decode[orphanJSON](t, e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "1h", "--json"))
	if res.DryRun || res.Count != len(killed) || res.Deleted != len(killed) || !slices.Equal(plainPaths(res.Paths), killed) {
		t.Fatalf("removal: %+v\nwant the killed commit's:\n%v", res, killed)
	}

	after := filesUnder(t, loc)
	want := maps.Clone(files)
	for _, p := range killed {
		delete(want, p)
	}
	want[young] = int64(len("a commit in flight"))
	if !maps.Equal(after, want) {
		t.Fatalf("files after the removal:\n%v\nwant:\n%v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(want)))
	}
	liveFilesExist(t, e.refs("db.t"))
	if n := e.Count("db.t"); n != 400 {
		t.Fatalf("%d rows after the removal, want 400", n)
	}
	sameIDs(t, "after the removal", e.IDs("db.t"), idRange(0, 400))
	t.Logf("the killed commit left %d orphans %v; removed %d, the young file and %d referenced files kept",
		len(killed), kinds(killed), res.Deleted, len(refs.all))
}

// Kills at random moments, then a restart, then orphan removal of
// everything old: the table stays readable with every row exactly once,
// every file it reads is still there, and no unreferenced file is left.
func TestRemoveOrphansAfterRandomKills(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows, kills = 16, 200, 5
	for i := range int64(files) {
		e.WriteIDs(fmt.Sprintf("f-%03d.parquet", i), i*rows, rows)
	}
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt,
		"--trigger", "available-now", "--max-files-per-trigger", "1"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	total := int64(files * rows)
	for k := 0; k < kills; {
		if e.runOrKill(time.Duration(150+rng.IntN(250))*time.Millisecond, args...) {
			k++
			continue
		}
		// All input is in: the next kill needs work to interrupt.
		for range 4 {
			e.WriteIDs(fmt.Sprintf("g-%06d.parquet", total), total, rows)
			total += rows
		}
	}
	e.OK(args...)
	sameIDs(t, "after the kills", e.IDs("db.t"), idRange(0, total))

	refs := e.refs("db.t")
	all := filesUnder(t, refs.location)
	orphans := unreferenced(all, refs)
	liveFilesExist(t, refs)
	backdate(t, all)
	res := decode[orphanJSON](t, e.OK("maintain", "remove-orphan-files", "db.t", "--older-than", "1h", "--json"))
	if res.Count != len(orphans) || res.Deleted != len(orphans) || !slices.Equal(plainPaths(res.Paths), orphans) {
		t.Fatalf("removal: %+v\nwant the unreferenced files:\n%v", res, orphans)
	}
	after := e.refs("db.t")
	liveFilesExist(t, after)
	kept := filesUnder(t, after.location)
	if left := unreferenced(kept, after); len(left) != 0 {
		t.Fatalf("unreferenced files left: %v", left)
	}
	for _, p := range orphans {
		delete(all, p)
	}
	if !maps.Equal(kept, all) {
		t.Fatalf("files after the removal:\n%v\nwant every referenced one:\n%v", slices.Sorted(maps.Keys(kept)), slices.Sorted(maps.Keys(all)))
	}
	if n := e.Count("db.t"); n != total {
		t.Fatalf("%d rows after the removal, want %d", n, total)
	}
	sameIDs(t, "after the removal", e.IDs("db.t"), idRange(0, total))
	t.Logf("%d kills left %d orphans %v; all removed, %d referenced files kept", kills, len(orphans), kinds(orphans), len(after.all))
}
