package write_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// allFlatTypes is a record of every type on the parquet-go path, with nulls.
func allFlatTypes(n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "t", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro()
	for r := 0; r < n; r++ {
		for c := range schema.NumFields() {
			if (r+c)%7 == 0 {
				b.Field(c).AppendNull()
				continue
			}
			switch fb := b.Field(c).(type) {
			case *array.BooleanBuilder:
				fb.Append(r%3 == 0)
			case *array.Int32Builder:
				fb.Append(int32(r - n/2))
			case *array.Int64Builder:
				fb.Append(int64(r) * 1_000_003)
			case *array.Float32Builder:
				fb.Append(float32(r) / 3)
			case *array.Float64Builder:
				fb.Append(float64(r) * 1.5)
			case *array.StringBuilder:
				if c == 5 {
					fb.Append(fmt.Sprintf("payload-%06d", r))
				} else {
					fb.Append(fmt.Sprintf("cat-%d", r%5))
				}
			case *array.BinaryBuilder:
				fb.Append([]byte{byte(r), byte(r >> 8)})
			case *array.Date32Builder:
				fb.Append(arrow.Date32(20000 + r%400))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(base + int64(r)*1_000_000))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(int64(r%86400) * 1_000_000))
			}
		}
	}
	return b.NewRecordBatch()
}

func sameBound(a, b []byte) bool {
	switch {
	case len(a) == 4 && len(b) == 4 && (a[3]|b[3])&0x80 != 0 && string(a[:3]) == "\x00\x00\x00":
		return math.Float32frombits(binary.LittleEndian.Uint32(a)) == math.Float32frombits(binary.LittleEndian.Uint32(b))
	case len(a) == 8 && len(b) == 8 && (a[7]|b[7])&0x80 != 0 && string(a[:7]) == "\x00\x00\x00\x00\x00\x00\x00":
		return math.Float64frombits(binary.LittleEndian.Uint64(a)) == math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return string(a) == string(b)
}

// The parquet-go encoder and arrow-go produce data files with the same
// statistics (what scans prune on) and the same rows read back.
func TestEncodersAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := allFlatTypes(5000)
	defer rec.Release()
	var files [2]iceberg.DataFile
	var tables [2]*table.Table
	for i, enc := range []string{"parquet-go", "arrow"} {
		cat := fixture.Catalog(t)
		c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "enc"}, QueryID: "q", Source: enc}
		tbl, err := c.Create(ctx, rec.Schema(), commit.CreateOptions{Properties: map[string]string{write.ParquetEncoderKey: enc}})
		if err != nil {
			t.Fatal(err)
		}
		w := &write.Writer{Table: tbl, FilePrefix: enc}
		res, err := w.Write(ctx, []ingest.Part{fixture.Part{PartName: enc, Records: []arrow.RecordBatch{rec}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 1 {
			t.Fatalf("%s wrote %d files", enc, len(res.Files))
		}
		if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files}); err != nil {
			t.Fatal(err)
		}
		files[i] = res.Files[0].File
		if tables[i], err = cat.LoadTable(ctx, c.Ident); err != nil {
			t.Fatal(err)
		}
	}
	pg, ar := files[0], files[1]
	if pg.Count() != ar.Count() || pg.Count() != 5000 {
		t.Fatalf("record counts %d and %d, want 5000", pg.Count(), ar.Count())
	}
	for name, m := range map[string][2]map[int]int64{
		"value counts": {pg.ValueCounts(), ar.ValueCounts()},
		"null counts":  {pg.NullValueCounts(), ar.NullValueCounts()},
	} {
		if !maps.Equal(m[0], m[1]) {
			t.Errorf("%s differ:\nparquet-go %v\narrow-go   %v", name, m[0], m[1])
		}
	}
	for name, m := range map[string][2]map[int][]byte{
		"lower bounds": {pg.LowerBoundValues(), ar.LowerBoundValues()},
		"upper bounds": {pg.UpperBoundValues(), ar.UpperBoundValues()},
	} {
		// Parquet lets a writer store a zero minimum as -0.0 (arrow-go does);
		// compare floats by value so that 0.0 and -0.0 agree.
		if !maps.EqualFunc(m[0], m[1], sameBound) {
			t.Errorf("%s differ:\nparquet-go %v\narrow-go   %v", name, m[0], m[1])
		}
	}
	var got [2]string
	for i, tbl := range tables {
		at, err := tbl.Scan().ToArrowTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(at, 10000)
		for tr.Next() {
			b, _ := tr.RecordBatch().MarshalJSON()
			got[i] += string(b)
		}
		tr.Release()
		at.Release()
	}
	if got[0] != got[1] || len(got[0]) < 1000 {
		t.Fatalf("rows read back differ between encoders (%d vs %d bytes of JSON)", len(got[0]), len(got[1]))
	}
}

// Data files use only the encodings every Iceberg reader decodes: values
// plain or dictionary-encoded, levels RLE. Iceberg's vectorized Parquet
// reader (Spark's default) refuses a page in any other encoding up to
// Iceberg 1.10, such as parquet-go's default for strings,
// DELTA_LENGTH_BYTE_ARRAY, or the RLE booleans of v2 writers; an input in
// those is encoded again, not copied (its snappy would show). "s" is all
// distinct (plain), "cat" repeats (dictionary).
func TestDataFilesUseCommonEncodings(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(5000)
	defer rec.Release()
	records := []ingest.Part{fixture.Part{PartName: "r", Records: []arrow.RecordBatch{rec}}}
	values := asParts(chunkInputs(t, rec, 2500), func(p fixture.ParquetFilePart) valuesOnly { return valuesOnly{p} })
	delta := []ingest.Part{valuesOnly{encodedInput(t, rec,
		parquet.WithEncodingFor("l", parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray),
		parquet.WithEncodingFor("bin", parquet.Encodings.DeltaByteArray))}}
	rleBooleans := []ingest.Part{valuesOnly{encodedInput(t, rec, parquet.WithEncodingFor("b", parquet.Encodings.RLE))}}
	zstdOnly := map[compress.Compression]bool{compress.Codecs.Zstd: true}
	for name, c := range map[string]struct {
		props  map[string]string
		parts  []ingest.Part
		codecs map[compress.Compression]bool
	}{
		"parquet-go":        {nil, records, zstdOnly},
		"arrow-go":          {map[string]string{write.ParquetEncoderKey: "arrow"}, records, zstdOnly},
		"parquet by values": {map[string]string{write.CopyChunksKey: "false"}, values, zstdOnly},
		"parquet copied":    {nil, values, map[compress.Compression]bool{compress.Codecs.Snappy: true}},
		// Copying would keep the input's pages.
		"delta-encoded parquet": {nil, delta, zstdOnly},
		"RLE booleans":          {nil, rleBooleans, zstdOnly},
	} {
		tbl, files := writeTable(t, rec.Schema(), c.props, c.parts)
		if got := codecs(t, tbl, files); !maps.Equal(got, c.codecs) {
			t.Errorf("%s: codecs %v, want %v", name, got, c.codecs)
		}
		pages := map[string]map[string]bool{}
		eachChunk(t, tbl, files, func(cc *metadata.ColumnChunkMetaData) {
			col := cc.PathInSchema().String()
			for _, e := range cc.Encodings() {
				if e != parquet.Encodings.Plain && e != parquet.Encodings.RLEDict && e != parquet.Encodings.PlainDict && e != parquet.Encodings.RLE {
					t.Errorf("%s: column %s is encoded %s", name, col, e)
				}
			}
			if len(cc.EncodingStats()) == 0 {
				t.Errorf("%s: column %s has no page encoding statistics", name, col)
			}
			for _, st := range cc.EncodingStats() {
				kind := st.PageType.String() + " " + st.Encoding.String()
				if pages[col] == nil {
					pages[col] = map[string]bool{}
				}
				pages[col][kind] = true
				switch kind {
				case "DATA_PAGE PLAIN", "DATA_PAGE_V2 PLAIN", "DATA_PAGE RLE_DICTIONARY", "DATA_PAGE_V2 RLE_DICTIONARY",
					"DATA_PAGE PLAIN_DICTIONARY", "DICTIONARY_PAGE PLAIN", "DICTIONARY_PAGE PLAIN_DICTIONARY":
				default:
					t.Errorf("%s: column %s has pages %s", name, col, kind)
				}
			}
		})
		if !pages["s"]["DATA_PAGE_V2 PLAIN"] && !pages["s"]["DATA_PAGE PLAIN"] && !pages["s"]["DICTIONARY_PAGE PLAIN"] ||
			!pages["cat"]["DATA_PAGE_V2 RLE_DICTIONARY"] && !pages["cat"]["DATA_PAGE RLE_DICTIONARY"] {
			t.Errorf("%s: s has pages %v, cat %v; want plain and dictionary", name, pages["s"], pages["cat"])
		}
	}
}

// encodedInput writes rec as a Parquet file of v2 pages, without
// dictionaries, in the encodings opts give, as Spark's and DuckDB's v2
// writers do.
func encodedInput(t *testing.T, rec arrow.RecordBatch, opts ...parquet.WriterProperty) fixture.ParquetFilePart {
	t.Helper()
	path := filepath.Join(t.TempDir(), "encoded.parquet")
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithDictionaryDefault(false),
		parquet.WithStats(true), parquet.WithDataPageVersion(parquet.DataPageV2)}, opts...)...)
	if err := fixture.WriteParquetWith(path, props, rec); err != nil {
		t.Fatal(err)
	}
	return fixture.ParquetFilePart{Path: path}
}
