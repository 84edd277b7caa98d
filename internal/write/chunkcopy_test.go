package write_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// chunkInputs writes rec as Parquet files of arrow-go (snappy), split at
// cuts, and returns them as parts.
func chunkInputs(t *testing.T, rec arrow.RecordBatch, cuts ...int64) []ingest.Part {
	t.Helper()
	dir := t.TempDir()
	var parts []ingest.Part
	from := int64(0)
	for i, to := range append(cuts, rec.NumRows()) {
		path := filepath.Join(dir, "in-"+string(rune('a'+i))+".parquet")
		slice := rec.NewSlice(from, to)
		err := fixture.WriteParquet(path, slice)
		slice.Release()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fixture.ParquetFilePart{Path: path})
		from = to
	}
	return parts
}

// smallGroups is write.parquet.row-group-size-bytes at 32 KiB, so that
// the small row groups of the tests' inputs (1 KiB and more) are large
// enough to copy.
const smallGroups = "32768"

// writeTable creates table db.t of schema with props (row groups of
// smallGroups unless they say otherwise),
// writes parts into it and commits them; it returns the table and the
// files written.
func writeTable(t *testing.T, schema *arrow.Schema, props map[string]string, parts []ingest.Part) (*table.Table, []ingest.DataFile) {
	t.Helper()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	if _, ok := props[table.ParquetRowGroupSizeBytesKey]; !ok {
		props[table.ParquetRowGroupSizeBytesKey] = smallGroups
	}
	tbl, err := c.Create(ctx, schema, commit.CreateOptions{Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&write.Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, parts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files}); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, c.Ident); err != nil {
		t.Fatal(err)
	}
	return tbl, res.Files
}

// codecs are the compression codecs of the files' column chunks.
func codecs(t *testing.T, tbl *table.Table, files []ingest.DataFile) map[compress.Compression]bool {
	t.Helper()
	seen := map[compress.Compression]bool{}
	eachChunk(t, tbl, files, func(cc *metadata.ColumnChunkMetaData) { seen[cc.Compression()] = true })
	return seen
}

// eachChunk calls do with every column chunk of the files.
func eachChunk(t *testing.T, tbl *table.Table, files []ingest.DataFile, do func(*metadata.ColumnChunkMetaData)) {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	fixture.EachParquetFile(t, tbl, paths, func(_ string, rdr *file.Reader) {
		md := rdr.MetaData()
		for g := range md.NumRowGroups() {
			for c := range md.Schema.NumColumns() {
				cc, err := md.RowGroup(g).ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				do(cc)
			}
		}
	})
}

// tableJSON is the table's rows read back by iceberg-go, as JSON.
func tableJSON(t *testing.T, tbl *table.Table) string {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 100_000)
	defer tr.Release()
	var out strings.Builder
	for tr.Next() {
		b, err := tr.RecordBatch().MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	return out.String()
}

// Parquet inputs whose columns the table stores alike are copied chunk by
// chunk (their snappy pages stay snappy), into data files with the
// statistics encoding them would give and the same rows read back.
func TestChunkCopyMatchesEncoding(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(5000)
	defer rec.Release()
	parts := chunkInputs(t, rec, 1200, 3100)
	copied, cfiles := writeTable(t, rec.Schema(), nil, parts)
	encoded, efiles := writeTable(t, rec.Schema(), map[string]string{write.CopyChunksKey: "false"}, parts)

	if got := codecs(t, copied, cfiles); !maps.Equal(got, map[compress.Compression]bool{compress.Codecs.Snappy: true}) {
		t.Fatalf("copied files' codecs %v, want the inputs' snappy alone", got)
	}
	if got := codecs(t, encoded, efiles); !maps.Equal(got, map[compress.Compression]bool{compress.Codecs.Zstd: true}) {
		t.Fatalf("encoded files' codecs %v, want zstd alone", got)
	}
	if len(cfiles) != 1 || len(efiles) != 1 {
		t.Fatalf("%d copied and %d encoded files, want one each", len(cfiles), len(efiles))
	}
	cp, en := cfiles[0].File, efiles[0].File
	if cp.Count() != 5000 || en.Count() != 5000 || cfiles[0].Rows != 5000 {
		t.Fatalf("record counts %d (copied, %d by the writer) and %d, want 5000", cp.Count(), cfiles[0].Rows, en.Count())
	}
	for name, m := range map[string][2]map[int]int64{
		"value counts": {cp.ValueCounts(), en.ValueCounts()},
		"null counts":  {cp.NullValueCounts(), en.NullValueCounts()},
	} {
		if !maps.Equal(m[0], m[1]) || len(m[0]) != rec.Schema().NumFields() {
			t.Errorf("%s differ:\ncopied  %v\nencoded %v", name, m[0], m[1])
		}
	}
	for name, m := range map[string][2]map[int][]byte{
		"lower bounds": {cp.LowerBoundValues(), en.LowerBoundValues()},
		"upper bounds": {cp.UpperBoundValues(), en.UpperBoundValues()},
	} {
		if !maps.EqualFunc(m[0], m[1], sameBound) || len(m[0]) != rec.Schema().NumFields() {
			t.Errorf("%s differ or miss columns:\ncopied  %v\nencoded %v", name, m[0], m[1])
		}
	}
	if got, want := tableJSON(t, copied), tableJSON(t, encoded); got != want || len(got) < 10_000 {
		t.Fatalf("rows read back differ between the copy and encoding (%d vs %d bytes of JSON)", len(got), len(want))
	}
}

// Inputs the table does not store alike are encoded: a column the table
// widened, a column the input lacks; and so are row groups too small to
// keep (at the default row group size, 128 MiB, under 4 MiB).
func TestChunkCopyOnlyWhenColumnsAlike(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(800)
	defer rec.Release()
	parts := chunkInputs(t, rec)
	for name, c := range map[string]struct {
		schema *arrow.Schema
		props  map[string]string
	}{
		"int widened to long": {withField(rec.Schema(), 1, arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil},
		"a column more":       {arrow.NewSchema(append(rec.Schema().Fields(), arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true}), nil), nil},
		"small row groups":    {rec.Schema(), map[string]string{table.ParquetRowGroupSizeBytesKey: "134217728"}},
	} {
		tbl, files := writeTable(t, c.schema, c.props, parts)
		if got := codecs(t, tbl, files); got[compress.Codecs.Snappy] {
			t.Errorf("%s: the input was copied (codecs %v); it must be encoded", name, got)
		}
		var n int64
		for _, f := range files {
			n += f.File.Count()
		}
		if n != 800 {
			t.Errorf("%s: %d rows written, want 800", name, n)
		}
	}
}

func withField(s *arrow.Schema, i int, f arrow.Field) *arrow.Schema {
	fields := s.Fields()
	fields[i] = f
	return arrow.NewSchema(fields, nil)
}

// A chunk whose pages do not add up, or whose compressed bytes do not
// decompress to their size, is bad input naming the file, and nothing of
// the batch is left behind.
func TestChunkCopyRefusesCorruptChunk(t *testing.T) {
	t.Parallel()
	for name, corrupt := range map[string]func(b []byte, at int64){
		// The first page header's sizes: a page that claims more bytes
		// than the chunk holds.
		"header": func(b []byte, at int64) { copy(b[at+1:], []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}) },
		// The first byte of the page's snappy stream, its length.
		"compressed bytes": firstPageBody(t),
	} {
		t.Run(name, func(t *testing.T) {
			refuseCorrupt(t, corrupt)
		})
	}
}

// corruptChunk rewrites the Parquet file at path with corrupt applied to
// its bytes; at is where the chunk of column col in row group 0 starts.
func corruptChunk(t *testing.T, path string, col int, corrupt func(b []byte, at int64)) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(col)
	if err != nil {
		t.Fatal(err)
	}
	at := cc.DataPageOffset()
	if d := cc.DictionaryPageOffset(); d > 0 && d < at {
		at = d
	}
	pf.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corrupt(b, at)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstPageBody corrupts the first byte of the chunk's first page body:
// for snappy, the stream's length.
func firstPageBody(t *testing.T) func(b []byte, at int64) {
	return func(b []byte, at int64) {
		r := new(thrift.CompactProtocol).NewReaderFromBytes(b[at:])
		var h format.PageHeader
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			t.Fatal(err)
		}
		b[at+int64(r.BytesRead())] ^= 0x7f
	}
}

func refuseCorrupt(t *testing.T, corrupt func(b []byte, at int64)) {
	ctx := context.Background()
	rec := allFlatTypes(2000)
	defer rec.Release()
	parts := chunkInputs(t, rec)
	path := parts[0].Name()
	corruptChunk(t, path, 2, corrupt)
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	tbl, err := c.Create(ctx, rec.Schema(), commit.CreateOptions{Properties: map[string]string{table.ParquetRowGroupSizeBytesKey: smallGroups}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&write.Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, parts)
	var bf *ingest.BadFileError
	if !errors.As(err, &bf) || bf.Path != path || !strings.Contains(err.Error(), "corrupt column chunk") {
		t.Fatalf("got %v, want a bad file error naming %s and its corrupt column chunk", err, path)
	}
	left, err := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "*.parquet"))
	if err != nil || len(left) > 0 {
		t.Fatalf("data files left behind: %v (%v)", left, err)
	}
}

// With reordering allowed, an input holding the table's columns in
// another order is copied with its chunks in the table's order; required
// columns copy as required.
func TestChunkCopyReordersColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rec := fixture.Record(t, in, `[{"name": "a", "id": 1}, {"name": null, "id": 2}, {"name": "c", "id": 3}]`)
	defer rec.Release()
	parts := chunkInputs(t, rec)
	tableSchema := arrow.NewSchema([]arrow.Field{in.Field(1), in.Field(0)}, nil)
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	// Three rows make a row group of some 100 bytes: worth copying with
	// row groups of 1 KiB.
	tbl, err := c.Create(ctx, tableSchema, commit.CreateOptions{Properties: map[string]string{table.ParquetRowGroupSizeBytesKey: "1024"}})
	if err != nil {
		t.Fatal(err)
	}
	w := &write.Writer{Table: tbl, FilePrefix: "t"}
	w.Conform.AllowReorder = true
	res, err := w.Write(ctx, parts)
	if err != nil {
		t.Fatal(err)
	}
	if got := codecs(t, tbl, res.Files); !got[compress.Codecs.Snappy] || len(got) != 1 {
		t.Fatalf("codecs %v, want the input's snappy: the chunks were not copied", got)
	}
	if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files}); err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, c.Ident); err != nil {
		t.Fatal(err)
	}
	if got, want := tableJSON(t, tbl), `[{"id":1,"name":"a"}
,{"id":2,"name":null}
,{"id":3,"name":"c"}
]`; got != want {
		t.Fatalf("rows read back:\n%s\nwant\n%s", got, want)
	}
}

// partRows is a record of ids [first, first+n), one row a minute from
// minute first, in category cat.
func partRows(t *testing.T, first, n int64, cat string) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := first; i < first+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base + i*60_000_000))
		b.Field(2).(*array.StringBuilder).Append(cat)
	}
	return b.NewRecordBatch()
}

// Into a partitioned table, an input is copied when its statistics prove
// one partition for each of its row groups (day(ts) within one day; one
// category for identity; one id for bucket), and encoded otherwise; each
// copied file carries its partition, and every row is read back once.
func TestChunkCopyPartitioned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const day = 24 * 60 // rows a day, one a minute
	for _, c := range []struct {
		name   string
		fields string
		inputs []arrow.RecordBatch // each its own file
		copied []bool
		filter iceberg.BooleanExpression // pruned by the partitions: must find want rows
		want   int64
		// partitions are the copied files' partition values, sorted: days
		// since 1970 for day(ts).
		partitions []string
	}{
		{"day", "day(ts)", []arrow.RecordBatch{partRows(t, 0, day, "a"), partRows(t, day, day, "a"), partRows(t, 3*day-10, 20, "a")}, []bool{true, true, false},
			iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("ts"), iceberg.Timestamp(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro())),
				iceberg.LessThan(iceberg.Reference("ts"), iceberg.Timestamp(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC).UnixMicro()))), day,
			[]string{"20454", "20455"}},
		{"identity", "cat", []arrow.RecordBatch{partRows(t, 0, 500, "a"), partRows(t, 500, 500, "b")}, []bool{true, true},
			iceberg.EqualTo(iceberg.Reference("cat"), "b"), 500, []string{"a", "b"}},
		{"bucket", "bucket(id, 4)", []arrow.RecordBatch{partRows(t, 0, 500, "a")}, []bool{false},
			iceberg.EqualTo(iceberg.Reference("id"), int64(7)), 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var parts []ingest.Part
			var total int64
			for i, rec := range c.inputs {
				path := filepath.Join(dir, fmt.Sprintf("in-%d.parquet", i))
				if err := fixture.WriteParquet(path, rec); err != nil {
					t.Fatal(err)
				}
				total += rec.NumRows()
				rec.Release()
				parts = append(parts, fixture.ParquetFilePart{Path: path})
			}
			cat := fixture.Catalog(t)
			cm := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
			tbl, err := cm.Create(ctx, partRows(t, 0, 1, "a").Schema(), commit.CreateOptions{PartitionFields: fixture.PartitionFields(t, c.fields),
				Properties: map[string]string{table.ParquetRowGroupSizeBytesKey: "1024"}})
			if err != nil {
				t.Fatal(err)
			}
			// One goroutine, so that the inputs' files are told apart in order.
			res, err := (&write.Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, parts)
			if err != nil {
				t.Fatal(err)
			}
			var snappy, zstd int
			var partitions []string // of the copied files
			for _, f := range res.Files {
				got := codecs(t, tbl, []ingest.DataFile{f})
				if got[compress.Codecs.Snappy] {
					snappy++
					for _, v := range f.File.Partition() {
						partitions = append(partitions, fmt.Sprint(v))
					}
				} else {
					zstd++
				}
			}
			wantCopied := 0
			for _, cp := range c.copied {
				if cp {
					wantCopied++
				}
			}
			if snappy != wantCopied || (wantCopied < len(c.copied)) != (zstd > 0) {
				t.Fatalf("%d copied and %d encoded files, want %d inputs copied of %d", snappy, zstd, wantCopied, len(c.copied))
			}
			if slices.Sort(partitions); !slices.Equal(partitions, c.partitions) {
				t.Fatalf("the copied files' partitions are %v, want %v", partitions, c.partitions)
			}
			if _, err := cm.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files}); err != nil {
				t.Fatal(err)
			}
			ids, err := fixture.ReadIDs(ctx, cat, "db.t", "id")
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != int(total) {
				t.Fatalf("%d ids read back, want %d", len(ids), total)
			}
			for id, n := range ids {
				if n != 1 {
					t.Fatalf("id %d read %d times", id, n)
				}
			}
			if tbl, err = cat.LoadTable(ctx, cm.Ident); err != nil {
				t.Fatal(err)
			}
			at, err := tbl.Scan(table.WithRowFilter(c.filter)).ToArrowTable(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer at.Release()
			if at.NumRows() != c.want {
				t.Fatalf("the filter %s finds %d rows, want %d: a partition value is wrong", c.filter, at.NumRows(), c.want)
			}
		})
	}
}
