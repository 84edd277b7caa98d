package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// dataFiles lists the live data files of a table's current snapshot as
// iceberg-go's manifest reader sees them, with the size of each manifest.
func dataFiles(t *testing.T, wh, name string) ([]iceberg.DataFile, []int64) {
	t.Helper()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, wh)
	tbl, err := cat.LoadTable(ctx, strings.Split(name, "."))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var files []iceberg.DataFile
	var sizes []int64
	for _, m := range manifests {
		sizes = append(sizes, m.Length())
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			files = append(files, e.DataFile())
		}
	}
	return files, sizes
}

// In complete mode a batch of input without rows (a header-only CSV)
// replaces the table's contents with nothing, as Spark's complete mode
// does, in a snapshot a re-run finds.
func TestCompleteModeEmptyBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	args := []string{"stream", "--source", e.Landing, "--format", "csv", "--table", "db.totals", "--checkpoint", e.Ckpt, "--mode", "complete"}
	land := func(name string, data []byte, at time.Time) {
		t.Helper()
		path := filepath.Join(e.Landing, name)
		if err := fixture.Land(path, data); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(-time.Hour)
	land("a.csv", fixture.IDCSV(0, 100, ',', true), now)
	e.OK(args...)
	if diff := fixture.Exact(e.TableIDs("db.totals"), 0, 100); diff != "" {
		t.Fatal(diff)
	}
	land("b.csv", []byte("id,v\n"), now.Add(time.Minute))
	e.OK(args...)
	if ids := e.TableIDs("db.totals"); len(ids) != 0 {
		t.Fatalf("after an empty complete-mode batch the table holds %d ids, want none", len(ids))
	}
	snaps := e.Snapshots("db.totals")
	last := snaps[len(snaps)-1]
	if last.Summary["floe.batch-id"] != "1" || last.Summary["floe.query-id"] == "" {
		t.Fatalf("the empty batch's snapshot has summary %v, want floe.batch-id 1 and the query id", last.Summary)
	}
	// A run that stopped between the table commit and the commits log
	// finds the batch in the table and commits nothing more.
	if err := os.Remove(filepath.Join(e.Ckpt, "commits", "1")); err != nil {
		t.Fatal(err)
	}
	e.OK(args...)
	if n := len(e.Snapshots("db.totals")); n != len(snaps) {
		t.Fatalf("the re-run made %d snapshots, want %d", n, len(snaps))
	}
	land("c.csv", fixture.IDCSV(100, 50, ',', true), now.Add(2*time.Minute))
	e.OK(args...)
	if diff := fixture.Exact(e.TableIDs("db.totals"), 100, 50); diff != "" {
		t.Fatal(diff)
	}
}

// floe writes rows in arrival order, so its data files carry sort order id
// 0 (unsorted) even on a table with a sort order, as iceberg-go's manifest
// reader sees them.
func TestFilesOfSortedTableAreMarkedUnsorted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := fixture.CreateTable(t, cat, table.Identifier{"db", "sorted"}, fixture.IDSchema, catalog.WithSortOrder(order))
	if tbl.SortOrder().OrderID() != 1 {
		t.Fatalf("table sort order id %d, want 1", tbl.SortOrder().OrderID())
	}
	e.WriteIDs("a.parquet", 0, 1000)
	e.WriteIDs("b.parquet", 1000, 1000)
	e.OK(e.StreamArgs("db.sorted")...)
	if diff := fixture.Exact(e.TableIDs("db.sorted"), 0, 2000); diff != "" {
		t.Fatal(diff)
	}
	files, _ := dataFiles(t, e.Warehouse, "db.sorted")
	if len(files) == 0 {
		t.Fatal("no data files")
	}
	for _, f := range files {
		if id := f.SortOrderID(); id != nil && *id != 0 {
			t.Errorf("data file %s has sort order id %d, but floe did not sort it", f.FilePath(), *id)
		}
	}
}

// Table properties floe cannot write with are configuration errors found
// before the table is created: exit 2, and no table left behind.
func TestBadTablePropertiesCreateNoTable(t *testing.T) {
	t.Parallel()
	for _, prop := range []string{"write.format.default=orc", "write.parquet.compression-codec=lzo", "write.metadata.metrics.default=truncate(0)"} {
		t.Run(prop, func(t *testing.T) {
			e := newEnv(t)
			e.WriteIDs("a.parquet", 0, 10)
			r := e.Stream("db.t", "-p", "table-default."+prop)
			key, _, _ := strings.Cut(prop, "=")
			if r.Code != 2 || !strings.Contains(r.Stderr, key) {
				t.Fatalf("want exit 2 naming %s: %s", key, r)
			}
			if _, err := os.Stat(filepath.Join(e.Warehouse, "catalog.db")); err == nil {
				cat, _ := fixture.CatalogAt(t, e.Warehouse)
				if _, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"}); !errors.Is(err, catalog.ErrNoSuchTable) {
					t.Fatalf("table db.t exists after the refused run (err %v)", err)
				}
			}
		})
	}
}

// Files land within a few percent of a small write.target-file-size-bytes,
// with either encoder: records are split where the file reaches its target.
func TestSmallTargetFileSize(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"parquet-go", "arrow"} {
		for _, target := range []int64{1 << 20, 2 << 20} {
			t.Run(fmt.Sprintf("%s/%dMiB", enc, target>>20), func(t *testing.T) {
				e := newEnv(t)
				// 150,000 rows of 120 random characters: ~19 MB encoded, read
				// by one writer (under 32 MB of input).
				writePartitioned(t, e.Landing, 3, 50_000, 1, 120, 11)
				e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.sized", "--checkpoint", e.Ckpt,
					"--target-file-size-bytes", fmt.Sprint(target), "-p", "table-default.floe.write.parquet-encoder="+enc)
				if diff := fixture.Exact(e.TableIDs("db.sized"), 0, 150_000); diff != "" {
					t.Fatal(diff)
				}
				var sizes []string
				small := 0
				for _, f := range e.files("db.sized") {
					r := float64(f.Size) / float64(target)
					sizes = append(sizes, fmt.Sprintf("%.3f", r))
					if r > 1.05 {
						t.Errorf("file %s is %.3fx the target", filepath.Base(f.Path), r)
					}
					if r < 0.95 {
						small++
					}
				}
				t.Logf("sizes / target: %s", strings.Join(sizes, " "))
				if small > 1 {
					t.Errorf("%d files under 0.95x the target, want only the last", small)
				}
			})
		}
	}
}
