package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// uuidChanges writes files of random changes (inserts, updates, deletes,
// a key changed again in the same file) to a pool of UUID-like string
// keys as CSV id,v,op, and keeps the oracle: each key's last value.
type uuidChanges struct {
	rng    *rand.Rand
	pool   []string
	oracle map[string]string
	files  int
	mtime  time.Time
}

func newUUIDChanges(seed uint64, keys int) *uuidChanges {
	g := &uuidChanges{rng: rand.New(rand.NewPCG(seed, 2)), oracle: map[string]string{}, mtime: time.Now().Add(-time.Hour)}
	for range keys {
		r := g.rng
		g.pool = append(g.pool, fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff))
	}
	return g
}

func (g *uuidChanges) file(t *testing.T, dir string, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,v,op\n")
	for row := range n {
		id := g.pool[g.rng.IntN(len(g.pool))]
		v := fmt.Sprintf("f%d-r%d", g.files, row)
		op := "u"
		if _, present := g.oracle[id]; !present {
			op = "c"
		}
		if g.rng.IntN(10) >= 8 {
			op, v = "d", ""
			delete(g.oracle, id)
		} else {
			g.oracle[id] = v
		}
		fmt.Fprintf(&b, "%s,%s,%s\n", id, v, op)
	}
	path := filepath.Join(dir, fmt.Sprintf("changes-%03d.csv", g.files))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	g.mtime = g.mtime.Add(time.Second)
	if err := os.Chtimes(path, g.mtime, g.mtime); err != nil {
		t.Fatal(err)
	}
	g.files++
}

// diff says how the table's rows differ from the oracle, "" when they
// agree, reading them through iceberg-go's scan (deletes applied).
func (g *uuidChanges) diff(t *testing.T, tbl *table.Table) string {
	t.Helper()
	got := map[string][]string{}
	_, recs, err := tbl.Scan(table.WithSelectedFields("id", "v")).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.String)
		vs := rec.Column(rec.Schema().FieldIndices("v")[0]).(*array.String)
		for i := range ids.Len() {
			got[ids.Value(i)] = append(got[ids.Value(i)], vs.Value(i))
		}
		rec.Release()
	}
	var missing, extra, wrong int
	for id, v := range g.oracle {
		if vs := got[id]; len(vs) != 1 || vs[0] != v {
			if len(vs) == 0 {
				missing++
			} else {
				wrong++
			}
		}
	}
	for id := range got {
		if _, ok := g.oracle[id]; !ok {
			extra++
		}
	}
	if missing+extra+wrong == 0 {
		return ""
	}
	return fmt.Sprintf("%d keys missing, %d deleted keys present, %d keys with several rows or a stale value (of %d keys)", missing, extra, wrong, len(g.oracle))
}

// bloomColumns counts the row groups of tbl's live data files and, by
// column name, those with a bloom filter.
func bloomColumns(t *testing.T, tbl *table.Table) (int, map[string]int) {
	t.Helper()
	groups, with := 0, map[string]int{}
	fixture.EachParquetFile(t, tbl, fixture.LiveDataFiles(t, tbl), func(_ string, rdr *file.Reader) {
		md := rdr.MetaData()
		for rg := range md.NumRowGroups() {
			groups++
			for ci := range md.Schema.NumColumns() {
				if cc, err := md.RowGroup(rg).ColumnChunk(ci); err == nil && cc.BloomFilterOffset() > 0 {
					with[md.Schema.Column(ci).Name()]++
				}
			}
		}
	})
	return groups, with
}

// A table created in mode upsert gets a bloom filter on its key, which
// the batches' key lookups read: random string keys over many small row
// groups, after every batch the table equals the oracle, and every row
// group of every data file has a filter on the key column alone.
func TestUpsertBloomFilterOnKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	g := newUUIDChanges(11, 3000)
	for batch := range 8 {
		g.file(t, e.Landing, 1200)
		// Without maintenance: a format-version 3 compaction writes through
		// iceberg-go's executor (it keeps row lineage), which writes neither
		// these row groups nor bloom filters.
		e.OK(e.upsertArgs("-p", "table-default.write.parquet.row-group-size-bytes=8192", "--maintenance=false")...)
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
		if err != nil {
			t.Fatal(err)
		}
		if d := g.diff(t, tbl); d != "" {
			t.Fatalf("after batch %d: %s", batch, d)
		}
		if batch == 0 {
			if p := tbl.Properties()["write.parquet.bloom-filter-enabled.column.id"]; p != "true" {
				t.Fatalf("the table floe created has write.parquet.bloom-filter-enabled.column.id=%q, want true", p)
			}
		}
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	groups, with := bloomColumns(t, tbl)
	if groups < 16 || with["id"] != groups || len(with) != 1 {
		t.Fatalf("%d row groups, filters by column %v; want many row groups, each with a filter on id alone", groups, with)
	}
}

// The sink's own setting of the key's bloom filter wins; a bloom filter
// property naming a column the input lacks is a configuration error
// naming the property and the column meant, before any table is created.
func TestUpsertBloomFilterProperties(t *testing.T) {
	t.Parallel()
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		g := newUUIDChanges(12, 500)
		g.file(t, e.Landing, 400)
		e.OK(e.upsertArgs("-p", "table-default.write.parquet.bloom-filter-enabled.column.id=false")...)
		cat, _ := fixture.CatalogAt(t, e.Warehouse)
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
		if err != nil {
			t.Fatal(err)
		}
		if groups, with := bloomColumns(t, tbl); groups == 0 || len(with) != 0 {
			t.Fatalf("%d row groups, filters by column %v; want none", groups, with)
		}
		if d := g.diff(t, tbl); d != "" {
			t.Fatal(d)
		}
	})
	t.Run("unknown column", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		g := newUUIDChanges(13, 500)
		g.file(t, e.Landing, 400)
		r := e.Run(e.upsertArgs("-p", "table-default.write.parquet.bloom-filter-enabled.column.idd=true")...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "write.parquet.bloom-filter-enabled.column.idd") || !strings.Contains(r.Stderr, `did you mean "id"?`) {
			t.Fatalf("exit %d, want 2 naming the property and the column id:\n%s", r.Code, r.Stderr)
		}
		cat, _ := fixture.CatalogAt(t, e.Warehouse)
		if exists, _ := cat.CheckTableExists(context.Background(), table.Identifier{"db", "t"}); exists {
			t.Fatal("table db.t was created")
		}
	})
}

// Every file of a small upsert table is sized to its rows, on format 2
// (equality deletes) and 3 (deletion vectors): the files of two 3-key
// batches, and those a compaction of the 3 rows left writes (on format 3
// through iceberg-go's writer, which made each bloom filter 1 MiB), stay
// under 64 KiB on disk. The key's filters that remain hold every key and
// let absent keys through about as rarely as their fpp says.
func TestUpsertFilesSizedToRows(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for i, csv := range []string{"id,v,op\n1,a,c\n2,b,c\n3,c,c\n", "id,v,op\n1,a2,u\n2,b2,u\n3,c2,u\n"} {
				if err := fixture.Land(filepath.Join(e.Landing, fmt.Sprintf("%d.csv", i)), []byte(csv)); err != nil {
					t.Fatal(err)
				}
				e.OK(e.upsertArgs("--format-version", v, "--maintenance=false")...)
			}
			want := map[int64]string{1: "a2", 2: "b2", 3: "c2"}
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), want); d != "" {
				t.Fatal(d)
			}
			checkSizedToRows(t, e.Warehouse, "after the upserts", 64<<10)
			e.OK("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2")
			if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), want); d != "" {
				t.Fatalf("after compaction: %s", d)
			}
			filters := checkSizedToRows(t, e.Warehouse, "after compaction", 64<<10)
			cat, _ := fixture.CatalogAt(t, e.Warehouse)
			tbl, err := cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
			if err != nil {
				t.Fatal(err)
			}
			for _, uri := range fixture.LiveDataFiles(t, tbl) {
				if path := strings.TrimPrefix(uri, "file://"); filters[path] == 0 {
					t.Errorf("the compacted file %s has no bloom filter on the key", path)
				}
			}
		})
	}
}

// checkSizedToRows fails on a file under dir larger than limit bytes and
// checks the bloom filters on column id of its Parquet files: each holds
// the keys 1 to 3 and passes at most 3% of 1,000 absent keys. It returns
// how many filters it checked in each file, by path.
func checkSizedToRows(t *testing.T, dir, when string, limit int64) map[string]int {
	t.Helper()
	filters := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > limit {
			t.Errorf("%s: %s is %d bytes, over %d", when, path, info.Size(), limit)
		}
		if !strings.HasSuffix(path, ".parquet") {
			return nil
		}
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			return err
		}
		defer rdr.Close()
		md, bfr := rdr.MetaData(), rdr.GetBloomFilterReader()
		ci := md.Schema.ColumnIndexByName("id")
		for rg := range md.NumRowGroups() {
			rgr, err := bfr.RowGroup(rg)
			if err != nil {
				return err
			}
			bf, err := rgr.GetColumnBloomFilter(ci)
			if err != nil || bf == nil {
				continue
			}
			filters[path]++
			hash := func(k int64) uint64 {
				if md.Schema.Column(ci).PhysicalType() == parquet.Types.Int32 {
					return metadata.GetHash(bf.Hasher(), int32(k))
				}
				return metadata.GetHash(bf.Hasher(), k)
			}
			for k := range int64(3) {
				if !bf.CheckHash(hash(k + 1)) {
					t.Errorf("%s: the bloom filter of %s lacks key %d", when, path, k+1)
				}
			}
			passed := 0
			for k := range int64(1000) {
				if bf.CheckHash(hash(1000 + k)) {
					passed++
				}
			}
			if passed > 30 {
				t.Errorf("%s: the bloom filter of %s (%d bytes) passes %d of 1,000 absent keys", when, path, bf.Size(), passed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return filters
}
