package write_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// uuidKey is a random UUID-like string key.
func uuidKey(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

var bloomSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "key", Type: arrow.BinaryTypes.String},
	{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// bloomRecord holds n rows: unique ids from first, random string keys, a
// repetitive string column (dictionary encoded), an int32 and a payload.
func bloomRecord(r *rand.Rand, first int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, bloomSchema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		b.Field(1).(*array.StringBuilder).Append(uuidKey(r))
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("cat-%d", i%5))
		b.Field(3).(*array.Int32Builder).Append(int32(i))
		b.Field(4).(*array.StringBuilder).Append(strings.Repeat("p", i%40))
	}
	return b.NewRecordBatch()
}

// writeBloomTable writes rec into a new table with props and returns the
// table and its files.
func writeBloomTable(t *testing.T, props map[string]string, rec arrow.RecordBatch) (*table.Table, []ingest.DataFile) {
	t.Helper()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "bloom"}, QueryID: "q"}
	tbl, err := c.Create(ctx, rec.Schema(), commit.CreateOptions{Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	w := &write.Writer{Table: tbl, FilePrefix: "bloom"}
	res, err := w.Write(ctx, []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fixture.ReadIDs(ctx, cat, "db.bloom", "id")
	if err != nil {
		t.Fatal(err)
	}
	if diff := fixture.Exact(ids, 0, rec.NumRows()); diff != "" {
		t.Fatalf("iceberg-go reads back: %s", diff)
	}
	return cr.Table, res.Files
}

// eachRowGroup opens every data file and calls fn with each row group's
// metadata, its bloom filter reader and the file's arrow-go reader.
func eachRowGroup(t *testing.T, tbl *table.Table, files []ingest.DataFile, fn func(rdr *file.Reader, rg int, bf *metadata.RowGroupBloomFilterReader)) {
	t.Helper()
	paths := make([]string, len(files))
	for i, df := range files {
		paths[i] = df.File.FilePath()
	}
	fixture.EachParquetFile(t, tbl, paths, func(_ string, rdr *file.Reader) {
		for rg := range rdr.NumRowGroups() {
			bf, err := rdr.GetBloomFilterReader().RowGroup(rg)
			if err != nil {
				t.Fatal(err)
			}
			fn(rdr, rg, bf)
		}
	})
}

// columnValues reads column ci of a row group as hashes of its values,
// hashed as bloom filters hash them.
func columnHashes(t *testing.T, rdr *file.Reader, rg, ci int, h metadata.Hasher) []uint64 {
	t.Helper()
	cr, err := rdr.RowGroup(rg).Column(ci)
	if err != nil {
		t.Fatal(err)
	}
	n := rdr.MetaData().RowGroup(rg).NumRows()
	def := make([]int16, n)
	var out []uint64
	switch cr := cr.(type) {
	case *file.Int64ColumnChunkReader:
		vals := make([]int64, n)
		_, got, err := cr.ReadBatch(n, vals, def, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals[:got] {
			out = append(out, metadata.GetHash(h, v))
		}
	case *file.Int32ColumnChunkReader:
		vals := make([]int32, n)
		_, got, err := cr.ReadBatch(n, vals, def, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals[:got] {
			out = append(out, metadata.GetHash(h, v))
		}
	case *file.ByteArrayColumnChunkReader:
		vals := make([]parquet.ByteArray, n)
		_, got, err := cr.ReadBatch(n, vals, def, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals[:got] {
			out = append(out, metadata.GetHash(h, v))
		}
	default:
		t.Fatalf("column %d is read by %T", ci, cr)
	}
	return out
}

// A file written with write.parquet.bloom-filter-enabled.column.<col>
// has a bloom filter on each of those columns in every row group, holding
// every value of the group, and none on the other columns; either encoder,
// plain and dictionary-encoded columns alike. iceberg-go reads the files.
func TestBloomFiltersOnEnabledColumns(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"parquet-go", "arrow"} {
		t.Run(enc, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 2))
			rec := bloomRecord(r, 0, 40_000)
			defer rec.Release()
			props := map[string]string{
				write.ParquetEncoderKey:                             enc,
				"write.parquet.row-group-size-bytes":                "65536",
				"write.parquet.bloom-filter-enabled.column.id":      "true",
				"write.parquet.bloom-filter-enabled.column.key":     "TRUE",
				"write.parquet.bloom-filter-enabled.column.cat":     "true",
				"write.parquet.bloom-filter-fpp.column.cat":         "0.05",
				"write.parquet.bloom-filter-enabled.column.n":       "false",
				"write.parquet.bloom-filter-enabled.column.payload": "false",
			}
			tbl, files := writeBloomTable(t, props, rec)
			want := map[string]bool{"id": true, "key": true, "cat": true}
			groups, falsePos, probes := 0, 0, 0
			eachRowGroup(t, tbl, files, func(rdr *file.Reader, rg int, bfr *metadata.RowGroupBloomFilterReader) {
				groups++
				md := rdr.MetaData()
				for ci := range md.Schema.NumColumns() {
					name := md.Schema.Column(ci).Name()
					bf, err := bfr.GetColumnBloomFilter(ci)
					if err != nil {
						t.Fatalf("row group %d column %s: %v", rg, name, err)
					}
					if (bf != nil) != want[name] {
						t.Fatalf("row group %d column %s: bloom filter %v, want %v", rg, name, bf != nil, want[name])
					}
					if bf == nil {
						continue
					}
					for i, h := range columnHashes(t, rdr, rg, ci, bf.Hasher()) {
						if !bf.CheckHash(h) {
							t.Fatalf("row group %d column %s: value %d is not in the filter", rg, name, i)
						}
					}
					if name == "key" {
						for range 1000 {
							probes++
							if bf.CheckHash(metadata.GetHash(bf.Hasher(), parquet.ByteArray(uuidKey(r)))) {
								falsePos++
							}
						}
					}
				}
			})
			if groups < 4 {
				t.Fatalf("%d row groups, want several", groups)
			}
			if rate := float64(falsePos) / float64(probes); rate > 0.03 {
				t.Fatalf("absent keys pass the filters %.3f of the time, want about 0.01", rate)
			}
			// iceberg-go prunes row groups by these filters in a scan for
			// a key: it must find each row, and nothing for absent keys.
			keys := rec.Column(1).(*array.String)
			for _, i := range []int{0, 12_345, 39_999, -1} {
				key, want := uuidKey(r), int64(0)
				if i >= 0 {
					key, want = keys.Value(i), 1
				}
				_, recs, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("key"), key))).ToArrowRecords(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var got int64
				for rec, err := range recs {
					if err != nil {
						t.Fatal(err)
					}
					got += rec.NumRows()
					rec.Release()
				}
				if got != want {
					t.Fatalf("iceberg-go's scan for key %q found %d rows, want %d", key, got, want)
				}
			}
		})
	}
}

// A row group holds no more rows than its filters hold at their fpp within
// write.parquet.bloom-filter-max-bytes, so no filter is larger and none is
// overfull.
func TestBloomFilterMaxBytesBoundsRowGroups(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"parquet-go", "arrow"} {
		t.Run(enc, func(t *testing.T) {
			t.Parallel()
			rec := bloomRecord(rand.New(rand.NewPCG(3, 4)), 0, 5000)
			defer rec.Release()
			props := map[string]string{
				write.ParquetEncoderKey:                         enc,
				"write.parquet.bloom-filter-enabled.column.key": "true",
				"write.parquet.bloom-filter-max-bytes":          "1024",
			}
			tbl, files := writeBloomTable(t, props, rec)
			groups := 0
			eachRowGroup(t, tbl, files, func(rdr *file.Reader, rg int, bfr *metadata.RowGroupBloomFilterReader) {
				groups++
				// 1024 bytes at 10 bits a value.
				if n := rdr.MetaData().RowGroup(rg).NumRows(); n > 819 {
					t.Fatalf("row group %d holds %d rows, more than a 1 KiB filter holds at fpp 0.01", rg, n)
				}
				bf, err := bfr.GetColumnBloomFilter(1)
				if err != nil || bf == nil {
					t.Fatalf("row group %d: filter %v, %v", rg, bf, err)
				}
				if bf.Size() > 1024 {
					t.Fatalf("row group %d: filter of %d bytes, over the 1024 allowed", rg, bf.Size())
				}
			})
			if groups < 7 {
				t.Fatalf("%d row groups for 5000 rows, want at least 7", groups)
			}
		})
	}
}

// A bloom filter property naming a column the table lacks is refused
// before the table is created, with the name it meant.
func TestBloomFilterUnknownColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "bloom"}, QueryID: "q"}
	_, err := c.Create(ctx, bloomSchema, commit.CreateOptions{Properties: map[string]string{
		"write.parquet.bloom-filter-enabled.column.kee": "true",
	}})
	fixture.WantError(t, err, ingest.ErrConfig, "write.parquet.bloom-filter-enabled.column.kee", `did you mean "key"?`)
	if exists, _ := cat.CheckTableExists(ctx, c.Ident); exists {
		t.Fatal("the table was created")
	}
}

// A column nested in a struct takes a bloom filter by its dotted path.
func TestBloomFilterNestedColumn(t *testing.T) {
	t.Parallel()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: st, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	sb := b.Field(1).(*array.StructBuilder)
	for i := range int64(1000) {
		b.Field(0).(*array.Int64Builder).Append(i)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(i * 7)
		sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprint(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl, files := writeBloomTable(t, map[string]string{"write.parquet.bloom-filter-enabled.column.s.x": "true"}, rec)
	eachRowGroup(t, tbl, files, func(rdr *file.Reader, rg int, bfr *metadata.RowGroupBloomFilterReader) {
		md := rdr.MetaData()
		for ci := range md.Schema.NumColumns() {
			bf, err := bfr.GetColumnBloomFilter(ci)
			if path := md.Schema.Column(ci).Path(); err != nil || (bf != nil) != (path == "s.x") {
				t.Fatalf("column %s: filter %v, %v; want one on s.x alone", path, bf != nil, err)
			}
		}
	})
}
