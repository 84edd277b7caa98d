package main_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/write"
)

// landCSV writes a CSV of columns id and v to the landing directory through
// a hidden temporary file, one row per value, ids from first.
func landCSV(t *testing.T, dir, name string, first int64, values ...func(w *bufio.Writer)) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "id,v")
	for i, v := range values {
		fmt.Fprintf(w, "%d,", first+int64(i))
		v(w)
		fmt.Fprintln(w)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func text(s string) func(*bufio.Writer) { return func(w *bufio.Writer) { w.WriteString(s) } }

// randomText is n random letters and digits, which compress little, seeded.
func randomText(n int, seed uint64) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

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

// footerBytes is the length of a local Parquet file's footer.
func footerBytes(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(strings.TrimPrefix(path, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	tail := make([]byte, 8)
	if _, err := f.ReadAt(tail, st.Size()-8); err != nil {
		t.Fatal(err)
	}
	if string(tail[4:]) != "PAR1" {
		t.Fatalf("%s does not end in PAR1", path)
	}
	return int64(binary.LittleEndian.Uint32(tail))
}

// A 64 MiB string lands with both encoders and reads back whole; the data
// file's footer and the manifests stay small, since no bound of such a
// value is kept whole (Iceberg's truncate(16) default in the manifests).
func TestWriteValueOf64MiB(t *testing.T) {
	t.Parallel()
	huge := randomText(64<<20, 1)
	want := sha256.Sum256([]byte(huge))
	for _, enc := range []string{"parquet-go", "arrow"} {
		t.Run(enc, func(t *testing.T) {
			e := newEnv(t)
			landCSV(t, e.Landing, "big.csv", 1, text(huge), text("small"), text(strings.Repeat("y", 5000)))
			e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.big", "--checkpoint", e.Ckpt,
				"-p", "table-default.floe.write.parquet-encoder="+enc)
			if diff := fixture.Exact(e.TableIDs("db.big"), 1, 3); diff != "" {
				t.Fatal(diff)
			}
			out := e.OK("scan", "db.big", "--output-format", "csv").Stdout
			got := ""
			for _, l := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(l, "1,"); ok {
					got = v
				}
			}
			if sha256.Sum256([]byte(got)) != want {
				t.Fatalf("the value of id 1 read back is %d bytes, not the %d written", len(got), len(huge))
			}
			files, manifests := dataFiles(t, e.Warehouse, "db.big")
			for _, f := range files {
				if n := footerBytes(t, f.FilePath()); n > 64<<10 {
					t.Errorf("data file %s has a footer of %d bytes", f.FilePath(), n)
				}
				for id, b := range f.LowerBoundValues() {
					if len(b) > 16 {
						t.Errorf("lower bound of field %d is %d bytes, over truncate(16)", id, len(b))
					}
				}
				for id, b := range f.UpperBoundValues() {
					if len(b) > 16 {
						t.Errorf("upper bound of field %d is %d bytes, over truncate(16)", id, len(b))
					}
				}
			}
			for _, n := range manifests {
				if n > 64<<10 {
					t.Errorf("a manifest of %d bytes", n)
				}
			}
		})
	}
}

// A value over write.MaxValueBytes is bad input: the batch fails naming the
// file, the column and the limit, and on-bad-file: quarantine sets the file
// aside while the rest of the batch lands.
func TestValueOverLimitIsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	landCSV(t, e.Landing, "huge.csv", 1, text("a"), func(w *bufio.Writer) {
		chunk := strings.Repeat("z", 1<<20)
		for range write.MaxValueBytes >> 20 {
			w.WriteString(chunk)
		}
		w.WriteString("z")
	})
	landCSV(t, e.Landing, "fine.csv", 10, text("b"), text("c"))
	args := []string{"stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt}
	r := e.Run(args...)
	if r.Code != 1 {
		t.Fatalf("want exit 1 for bad input: %s", r)
	}
	for _, want := range []string{"huge.csv", `column "v" row 2`, fmt.Sprint(write.MaxValueBytes + 1), fmt.Sprint(write.MaxValueBytes), "on-bad-file: quarantine"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("error does not name %q: %s", want, r.Stderr)
		}
	}
	if ids := e.TableIDs("db.t"); len(ids) != 0 {
		t.Fatalf("a failed batch left %d ids in the table", len(ids))
	}
	e.OK(append(args, "--on-bad-file", "quarantine")...)
	if diff := fixture.Exact(e.TableIDs("db.t"), 10, 2); diff != "" {
		t.Fatal(diff)
	}
	if _, err := os.Stat(filepath.Join(e.Ckpt, "quarantine", "huge.csv")); err != nil {
		t.Fatalf("huge.csv not quarantined: %v", err)
	}
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
				// 100,000 rows of 120 random characters: ~13 MB encoded, read
				// by one writer (under 16 MB of input), so that only its last
				// file is short of the target.
				writePartitioned(t, e.Landing, 2, 50_000, 1, 120, 11)
				e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.sized", "--checkpoint", e.Ckpt,
					"--target-file-size-bytes", fmt.Sprint(target), "-p", "table-default.floe.write.parquet-encoder="+enc)
				if diff := fixture.Exact(e.TableIDs("db.sized"), 0, 100_000); diff != "" {
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
