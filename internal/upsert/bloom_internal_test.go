package upsert

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

func uuidKey(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

// keyedTable writes a table of batches×rows rows, one data file a batch:
// id, random int64 keys (ikey), random UUID-like string keys (skey) and a
// payload. It returns the table and the keys written.
func keyedTable(tb testing.TB, props map[string]string, batches, rows int, seed uint64) (*table.Table, []int64, []string) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, seed))
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ikey", Type: arrow.PrimitiveTypes.Int64},
		{Name: "skey", Type: arrow.BinaryTypes.String},
		{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	c := &commit.Committer{Catalog: fixture.Catalog(tb), Ident: table.Identifier{"db", "keyed"}, QueryID: "q"}
	tbl, err := c.Create(ctx, sc, commit.CreateOptions{Properties: props, FormatVersion: 3})
	if err != nil {
		tb.Fatal(err)
	}
	var ints []int64
	var strs []string
	for batch := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range rows {
			k, s := r.Int64(), uuidKey(r)
			ints, strs = append(ints, k), append(strs, s)
			b.Field(0).(*array.Int64Builder).Append(int64(batch*rows + i))
			b.Field(1).(*array.Int64Builder).Append(k)
			b.Field(2).(*array.StringBuilder).Append(s)
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("payload of row %d", i))
		}
		rec := b.NewRecordBatch()
		b.Release()
		w := &write.Writer{Table: tbl, FilePrefix: fmt.Sprint(batch)}
		res, err := w.Write(ctx, []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}})
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
		cr, err := c.Commit(ctx, commit.Request{BatchID: int64(batch), Files: res.Files})
		if err != nil {
			tb.Fatal(err)
		}
		tbl = cr.Table
	}
	return tbl, ints, strs
}

// changesOf are a batch changing keys, of column name.
func changesOf(tb testing.TB, name string, keys arrow.Array, intKey bool) *Changes {
	tb.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: name, Type: keys.DataType()}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{keys}, int64(keys.Len()))
	defer rec.Release()
	c, err := Collect(context.Background(), []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}}, nil, Spec{Keys: []string{name}, IntKey: intKey})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// pick are n of keys at random and n fresh ones.
func pick[K any](r *rand.Rand, keys []K, n int, fresh func() K) []K {
	var out []K
	for range n {
		out = append(out, keys[r.IntN(len(keys))], fresh())
	}
	return out
}

// eachKeyRowGroup calls fn with every row group of tbl's data files and
// whether its key column holds a key of c.
func eachKeyRowGroup(t *testing.T, tbl *table.Table, c *Changes, col string, fn func(rdr *file.Reader, rg, ci int, holds bool)) {
	t.Helper()
	ctx := context.Background()
	fixture.EachParquetFile(t, tbl, fixture.LiveDataFiles(t, tbl), func(_ string, rdr *file.Reader) {
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		ci := rdr.MetaData().Schema.ColumnIndexByName(col)
		for rg := range rdr.NumRowGroups() {
			chunked, err := fr.RowGroup(rg).Column(ci).Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			holds := false
			for _, a := range chunked.Chunks() {
				for i := range a.Len() {
					switch a := a.(type) {
					case *array.Int64:
						holds = holds || c.HasInt(a.Value(i))
					case *array.String:
						holds = holds || c.HasBytes([]byte(a.Value(i)))
					}
				}
			}
			chunked.Release()
			fn(rdr, rg, ci, holds)
		}
	})
}

// The bloom filter lookup skips row groups of random keys, which min/max
// statistics cannot, and never one holding a key of the batch; locate
// finds every row of the batch's keys. Without filters nothing is skipped.
func TestBloomSkipsRowGroupsWithoutKeys(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"parquet-go", "arrow"} {
		for _, bloom := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/bloom=%v", enc, bloom), func(t *testing.T) {
				t.Parallel()
				props := map[string]string{
					write.ParquetEncoderKey:              enc,
					"write.parquet.row-group-size-bytes": "32768",
				}
				if bloom {
					props["write.parquet.bloom-filter-enabled.column.ikey"] = "true"
					props["write.parquet.bloom-filter-enabled.column.skey"] = "true"
				}
				tbl, ints, strs := keyedTable(t, props, 3, 20_000, 7)
				r := rand.New(rand.NewPCG(8, 9))
				ib := array.NewInt64Builder(memory.DefaultAllocator)
				ib.AppendValues(pick(r, ints, 6, r.Int64), nil)
				sb := array.NewStringBuilder(memory.DefaultAllocator)
				sb.AppendValues(pick(r, strs, 6, func() string { return uuidKey(r) }), nil)
				for _, kc := range []struct {
					col  string
					keys arrow.Array
					int  bool
				}{{"ikey", ib.NewArray(), true}, {"skey", sb.NewArray(), false}} {
					c := changesOf(t, kc.col, kc.keys, kc.int)
					var ix *intIndex
					if kc.int {
						ix = newIntIndex(c)
					}
					groups, empty, skipped := 0, 0, 0
					eachKeyRowGroup(t, tbl, c, kc.col, func(rdr *file.Reader, rg, ci int, holds bool) {
						groups++
						if !holds {
							empty++
						}
						if !bloomMayHold(rdr, rg, []int{ci}, c, ix) {
							skipped++
							if holds {
								t.Fatalf("%s: row group %d holds a key of the batch, and was skipped", kc.col, rg)
							}
						}
					})
					t.Logf("%s: %d row groups, %d without keys, %d skipped", kc.col, groups, empty, skipped)
					if groups < 20 {
						t.Fatalf("%s: %d row groups, want many", kc.col, groups)
					}
					if !bloom && skipped > 0 || bloom && skipped < empty/2 {
						t.Fatalf("%s: %d of %d row groups without keys skipped", kc.col, skipped, empty)
					}
					checkLocate(t, tbl, c, kc.col, 6)
					c.Release()
					kc.keys.Release()
				}
				ib.Release()
				sb.Release()
			})
		}
	}
}

// checkLocate checks that locate finds a row for each of the n keys of c
// the table holds, each at a position holding that key, with the key's
// slot in c.
func checkLocate(t *testing.T, tbl *table.Table, c *Changes, col string, n int) {
	t.Helper()
	ctx := context.Background()
	ids, err := KeyFieldIDs(tbl.Schema(), []string{col})
	if err != nil {
		t.Fatal(err)
	}
	found, err := locate(ctx, tbl, c, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := tbl.FS(ctx)
	rows := 0
	for _, h := range found {
		f, err := fs.Open(h.task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		at, err := fixture.ReadParquet(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		a, err := concat(at.Column(at.Schema().FieldIndices(col)[0]).Data())
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range h.positions {
			rows++
			var slot int32
			var ok bool
			switch a := a.(type) {
			case *array.Int64:
				if slot, ok = c.ints[a.Value(int(p))]; !ok {
					t.Fatalf("position %d holds %d, not a key of the batch", p, a.Value(int(p)))
				}
			case *array.String:
				if slot, ok = c.strs[a.Value(int(p))]; !ok {
					t.Fatalf("position %d holds %q, not a key of the batch", p, a.Value(int(p)))
				}
			}
			if h.slots[j] != slot {
				t.Fatalf("position %d has slot %d, but its key's is %d", p, h.slots[j], slot)
			}
		}
		a.Release()
		at.Release()
	}
	if rows != n {
		t.Fatalf("%s: locate found %d rows, want %d", col, rows, n)
	}
}

// The filter is read when the keys in a row group's range are few next to
// the inverse of its false-positive rate, not when they are many: at 10
// bits a row (1%) the chance that 1,000 keys all miss is 4e-5.
func TestBloomPays(t *testing.T) {
	t.Parallel()
	tbl, _, _ := keyedTable(t, map[string]string{"write.parquet.bloom-filter-enabled.column.skey": "true"}, 1, 50_000, 1)
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := tbl.FS(context.Background())
	f, err := fs.Open(tasks[0].File.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	cc, err := md.RowGroup(0).ColumnChunk(md.Schema.ColumnIndexByName("skey"))
	if err != nil {
		t.Fatal(err)
	}
	rows := md.RowGroup(0).NumRows()
	var pays []int
	for _, k := range []int{1, 10, 100, 300, 1000, 10_000} {
		if bloomPays(k, cc, rows) {
			pays = append(pays, k)
		}
	}
	if !slices.Equal(pays, []int{1, 10, 100, 300}) {
		t.Fatalf("the filter of %d rows (%d bytes, the column %d) is read for %v keys, want 1 to 300", rows, cc.BloomFilterLength(), cc.TotalCompressedSize(), pays)
	}
}

// An int key column is INT32 in Parquet: its keys are hashed as 4 bytes,
// and keys beyond the int32 range are never looked up in it.
func TestBloomInt32Keys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
	c0 := &commit.Committer{Catalog: fixture.Catalog(t), Ident: table.Identifier{"db", "i32"}, QueryID: "q"}
	tbl, err := c0.Create(ctx, sc, commit.CreateOptions{FormatVersion: 3, Properties: map[string]string{
		"write.parquet.bloom-filter-enabled.column.k": "true", "write.parquet.row-group-size-bytes": "16384",
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 5))
	b := array.NewInt32Builder(memory.DefaultAllocator)
	var written []int64
	for range 50_000 {
		k := r.Int32()
		b.Append(k)
		written = append(written, int64(k))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(col.Len()))
	col.Release()
	res, err := (&write.Writer{Table: tbl, FilePrefix: "i32"}).Write(ctx, []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c0.Commit(ctx, commit.Request{Files: res.Files})
	if err != nil {
		t.Fatal(err)
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues(pick(r, written, 4, func() int64 { return int64(r.Int32()) }), nil)
	ib.AppendValues([]int64{1 << 40, -1 << 40}, nil)
	keys := ib.NewArray()
	ib.Release()
	defer keys.Release()
	c := changesOf(t, "k", keys, true)
	defer c.Release()
	ix := newIntIndex(c)
	groups, empty, skipped := 0, 0, 0
	tasks, err := cr.Table.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := cr.Table.FS(ctx)
	f, err := fs.Open(tasks[0].File.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	for rg := range rdr.NumRowGroups() {
		groups++
		chunked, err := fr.RowGroup(rg).Column(0).Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holds := false
		for _, a := range chunked.Chunks() {
			for _, v := range a.(*array.Int32).Int32Values() {
				holds = holds || c.HasInt(int64(v))
			}
		}
		chunked.Release()
		if !holds {
			empty++
		}
		if !bloomMayHold(rdr, rg, []int{0}, c, ix) {
			skipped++
			if holds {
				t.Fatalf("row group %d holds a key of the batch, and was skipped", rg)
			}
		}
	}
	if groups < 10 || skipped < empty/2 {
		t.Fatalf("%d of %d row groups without keys skipped (of %d)", skipped, empty, groups)
	}
}
