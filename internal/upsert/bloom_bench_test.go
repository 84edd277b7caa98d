package upsert

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"
)

// BenchmarkLocate looks up a batch's string keys in a table of 2M rows of
// random UUID-like keys (20 files, 1 MiB row groups: 60), written without
// a bloom filter on the key and with one at fpp 0.01 (Iceberg's default)
// and 0.001. A tenth of the batch's keys update rows of the table, the
// rest are new.
//
//	go test ./internal/upsert -run '^$' -bench BenchmarkLocate -benchtime 20x
func BenchmarkLocate(b *testing.B) {
	ctx := context.Background()
	blooms := []string{"none", "0.01", "0.001"}
	tables := map[string]*table.Table{}
	var strs []string
	for _, fpp := range blooms {
		props := map[string]string{"write.parquet.row-group-size-bytes": "1048576"}
		if fpp != "none" {
			props["write.parquet.bloom-filter-enabled.column.skey"] = "true"
			props["write.parquet.bloom-filter-fpp.column.skey"] = fpp
		}
		tables[fpp], _, strs = keyedTable(b, props, 20, 100_000, 5)
	}
	groups := 0
	eachFile(b, tables["0.01"], func(rdr *file.Reader) { groups += rdr.NumRowGroups() })
	b.Logf("%d row groups", groups)
	for _, n := range []int{100, 1000, 10_000} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range n {
			if i%10 == 0 {
				sb.Append(strs[r.IntN(len(strs))])
			} else {
				sb.Append(uuidKey(r))
			}
		}
		keys := sb.NewArray()
		sb.Release()
		for _, fpp := range blooms[1:] {
			c := changesOf(b, "skey", keys, false)
			ci, skipped := -1, 0
			eachFile(b, tables[fpp], func(rdr *file.Reader) {
				ci = rdr.MetaData().Schema.ColumnIndexByName("skey")
				for rg := range rdr.NumRowGroups() {
					if !bloomMayHold(rdr, rg, []int{ci}, c, nil) {
						skipped++
					}
				}
			})
			c.Release()
			b.Logf("%d keys, fpp %s: %d of %d row groups skipped", n, fpp, skipped, groups)
		}
		for _, fpp := range blooms {
			b.Run(fmt.Sprintf("keys=%d/bloom=%s", n, fpp), func(b *testing.B) {
				tbl := tables[fpp]
				ids, err := KeyFieldIDs(tbl.Schema(), []string{"skey"})
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					c := changesOf(b, "skey", keys, false)
					found, err := locate(ctx, tbl, c, ids, nil)
					if err != nil {
						b.Fatal(err)
					}
					rows := 0
					for _, h := range found {
						rows += len(h.positions)
					}
					if rows != n/10 {
						b.Fatalf("found %d rows, want %d", rows, n/10)
					}
					c.Release()
				}
			})
		}
		keys.Release()
	}
}

// eachFile calls fn with an open reader of each of tbl's data files.
func eachFile(tb testing.TB, tbl *table.Table, fn func(*file.Reader)) {
	tb.Helper()
	ctx := context.Background()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, task := range tasks {
		f, err := fs.Open(task.File.FilePath())
		if err != nil {
			tb.Fatal(err)
		}
		rdr, err := file.NewParquetReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		fn(rdr)
		rdr.Close()
		f.Close()
	}
}
