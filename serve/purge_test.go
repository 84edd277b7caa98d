package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
)

// tableFiles lists the local files a table's metadata names: its metadata
// files, manifest lists, manifests, data and delete files, statistics.
func tableFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	ctx := context.Background()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{tbl.MetadataLocation()}
	for e := range tbl.Metadata().PreviousFiles() {
		out = append(out, e.MetadataFile)
	}
	for sf := range tbl.Metadata().Statistics() {
		out = append(out, sf.StatisticsPath)
	}
	for _, s := range tbl.Metadata().Snapshots() {
		out = append(out, s.ManifestList)
		mans, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			out = append(out, m.FilePath())
			for e, err := range m.Entries(fsys, false) {
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, e.DataFile().FilePath())
			}
		}
	}
	for i, f := range out {
		out[i] = strings.TrimPrefix(f, "file://")
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Purging a table deletes the files its metadata names inside its own
// location, and nothing else: not another table's data files or metadata
// that its metadata was made to name (here through add_files and a
// statistics entry, then registered under a new name), not a file outside
// the warehouse it names, not an unnamed file in its own folder; nor any
// file of a table registered over another's files. The other table still
// reads whole through iceberg-go's scan.
func TestPurgeDeletesOnlyReferencedFiles(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.createTable("db", "a")
	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "evil", "schema": eventSchema})
	for i := int64(0); i < 2; i++ {
		if err := fixture.AppendIDs(ctx, w.direct, "db.a", i*100, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := fixture.AppendIDs(ctx, w.direct, "db.evil", 1000, 10); err != nil {
		t.Fatal(err)
	}
	a, err := w.direct.LoadTable(ctx, table.Identifier{"db", "a"})
	if err != nil {
		t.Fatal(err)
	}
	aFiles := tableFiles(t, a)
	aData := fixture.LiveDataFiles(t, a)

	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.parquet")
	b, err := os.ReadFile(strings.TrimPrefix(aData[1], "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stats := filepath.Join(outside, "stats.puffin")
	if err := os.WriteFile(stats, []byte("not the server's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// db.evil's metadata names db.a's first data file, the file outside
	// the warehouse, and db.a's metadata file as statistics.
	evil, err := w.direct.LoadTable(ctx, table.Identifier{"db", "evil"})
	if err != nil {
		t.Fatal(err)
	}
	tx := evil.NewTransaction()
	if err := tx.AddFiles(ctx, []string{aData[0], "file://" + victim}, nil, false); err != nil {
		t.Fatal(err)
	}
	if evil, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// One statistics file per snapshot: db.a's metadata file for the
	// first, the file outside for the second.
	for i, p := range []string{a.MetadataLocation(), stats} {
		snap := evil.Metadata().Snapshots()[i].SnapshotID
		w.must(200, "POST", "/v1/namespaces/db/tables/evil", map[string]any{"requirements": []any{}, "updates": []any{map[string]any{
			"action": "set-statistics", "snapshot-id": snap,
			"statistics": map[string]any{"snapshot-id": snap, "statistics-path": p, "file-size-in-bytes": 16, "file-footer-size-in-bytes": 8, "blob-metadata": []any{}},
		}}})
	}
	evil, err = w.direct.LoadTable(ctx, table.Identifier{"db", "evil"})
	if err != nil {
		t.Fatal(err)
	}
	evilFiles := tableFiles(t, evil)
	if n := len(slices.Collect(evil.Metadata().Statistics())); n != 2 {
		t.Fatalf("db.evil has %d statistics files, want 2", n)
	}
	stray := filepath.Join(strings.TrimPrefix(evil.Location(), "file://"), "data", "stray.txt")
	if err := os.WriteFile(stray, []byte("no metadata names me"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The metadata, made elsewhere, comes in by registration.
	w.must(204, "DELETE", "/v1/namespaces/db/tables/evil", nil)
	w.must(200, "POST", "/v1/namespaces/db/register", map[string]any{"name": "copy", "metadata-location": evil.MetadataLocation()})
	w.must(204, "DELETE", "/v1/namespaces/db/tables/copy?purgeRequested=true", nil)

	for _, f := range append(aFiles, victim, stats, stray) {
		if !exists(f) {
			t.Errorf("purging db.copy deleted %s, which is not its own", f)
		}
	}
	own := 0
	for _, f := range evilFiles {
		if strings.HasPrefix(f, strings.TrimPrefix(evil.Location(), "file://")+"/") {
			own++
			if exists(f) {
				t.Errorf("purging db.copy left its file %s", f)
			}
		}
	}
	if own < 6 {
		t.Fatalf("db.copy named %d files of its own; the scenario did not run: %v", own, evilFiles)
	}
	if got, err := fixture.ReadIDs(ctx, w.direct, "db.a", "id"); err != nil || fixture.Exact(got, 0, 200) != "" {
		t.Fatalf("db.a after the purge: %v %s", err, fixture.Exact(got, 0, 200))
	}

	// A table registered over db.a's files before the server refused that
	// (here straight into the catalog): purging it deletes none of them.
	if _, err := catalogs.RegisterIn(ctx, w.direct, w.catalog, table.Identifier{"db", "twin"}, a.MetadataLocation()); err != nil {
		t.Fatal(err)
	}
	w.must(204, "DELETE", "/v1/namespaces/db/tables/twin?purgeRequested=true", nil)
	for _, f := range aFiles {
		if !exists(f) {
			t.Errorf("purging db.twin deleted %s, a file db.a uses", f)
		}
	}
	if got, err := fixture.ReadIDs(ctx, w.direct, "db.a", "id"); err != nil || fixture.Exact(got, 0, 200) != "" {
		t.Fatalf("db.a after purging its twin: %v %s", err, fixture.Exact(got, 0, 200))
	}

	// db.a's own purge deletes every file it names.
	w.must(204, "DELETE", "/v1/namespaces/db/tables/a?purgeRequested=true", nil)
	for _, f := range aFiles {
		if exists(f) {
			t.Errorf("purging db.a left %s", f)
		}
	}
}

// purgeRequested is a boolean in any case, as Java's REST servers parse it
// and as Python clients send it (PyIceberg's requests sends "True"): it
// purges, and "False" drops alone. A value that is no boolean is refused,
// with the table left, rather than read as false: a purge asked for and not
// done would be a silent success.
func TestPurgeRequestedAnyCase(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.createTable("db", "a")
	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "b", "schema": eventSchema})
	files := map[string][]string{}
	for _, name := range []string{"a", "b"} {
		if err := fixture.AppendIDs(ctx, w.direct, "db."+name, 0, 10); err != nil {
			t.Fatal(err)
		}
		tbl, err := w.direct.LoadTable(ctx, table.Identifier{"db", name})
		if err != nil {
			t.Fatal(err)
		}
		files[name] = tableFiles(t, tbl)
	}
	for _, v := range []string{"yes", "1", "truee"} {
		w.must(400, "DELETE", "/v1/namespaces/db/tables/a?purgeRequested="+v, nil)
	}
	w.must(204, "HEAD", "/v1/namespaces/db/tables/a", nil)
	w.must(204, "DELETE", "/v1/namespaces/db/tables/a?purgeRequested=True", nil)
	for _, f := range files["a"] {
		if exists(f) {
			t.Errorf("purgeRequested=True left %s", f)
		}
	}
	w.must(204, "DELETE", "/v1/namespaces/db/tables/b?purgeRequested=FALSE", nil)
	for _, f := range files["b"] {
		if !exists(f) {
			t.Errorf("purgeRequested=FALSE deleted %s", f)
		}
	}
}
