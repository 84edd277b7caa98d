package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/floe-io/floe/internal/fixture"
)

// Parquet inputs copied by column chunk (the default for flat inputs the
// table stores alike) and the same inputs encoded again read the same in
// floe, icebird and DuckDB; the copy keeps the inputs' codec.
func TestChunkCopyReadsAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	flat := []string{"b", "i", "l", "f", "d", "dt", "tm", "ts", "tstz", "s", "bin"}
	for i := range 3 {
		rec := allTypesRecord(uint64(i+11), 700)
		var cols []arrow.Array
		var fields []arrow.Field
		for _, name := range flat {
			idx := rec.Schema().FieldIndices(name)[0]
			cols, fields = append(cols, rec.Column(idx)), append(fields, rec.Schema().Field(idx))
		}
		sub := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		err := fixture.WriteParquet(filepath.Join(e.Landing, fmt.Sprintf("flat-%d.parquet", i)), sub)
		sub.Release()
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	stream := func(table string, extra ...string) {
		e.OK(append([]string{"stream", "--source", e.Landing, "--format", "parquet", "--table", table,
			"--checkpoint", filepath.Join(e.Dir, table+".ckpt"), "--trigger", "available-now"}, extra...)...)
	}
	// Row groups of 32 KiB make the inputs' small ones worth copying.
	small := []string{"-p", "table-default.write.parquet.row-group-size-bytes=32768"}
	stream("db.copied", small...)
	// gzip, so that a copy of these files (db.again) shows by its codec.
	stream("db.encoded", "-p", "table-default.floe.write.copy-parquet-chunks=false", "-p", "table-default.write.parquet.compression-codec=gzip")
	copied, encoded := e.checkTable("db.copied"), e.checkTable("db.encoded")
	if copied.Rows != 2100 || copied.Checksum != encoded.Checksum {
		t.Fatalf("copied: %d rows, checksum %s; encoded: %d rows, checksum %s; want 2100 rows alike", copied.Rows, copied.Checksum, encoded.Rows, encoded.Checksum)
	}
	// floe's own files (parquet-go: data pages v2)
	// copied as the inputs of another table read alike too.
	again := filepath.Join(e.Dir, "again")
	if err := os.MkdirAll(again, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, path := range dataFiles(t, e, "db.encoded") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(again, fmt.Sprintf("f-%d.parquet", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.OK(append([]string{"stream", "--source", again, "--format", "parquet", "--table", "db.again",
		"--checkpoint", filepath.Join(e.Dir, "again.ckpt"), "--trigger", "available-now"}, small...)...)
	if st := e.checkTable("db.again"); st.Rows != 2100 || st.Checksum != encoded.Checksum {
		t.Fatalf("floe's files copied again: %d rows, checksum %s; want 2100, %s", st.Rows, st.Checksum, encoded.Checksum)
	}
	for table, want := range map[string]compress.Compression{"db.copied": compress.Codecs.Snappy, "db.encoded": compress.Codecs.Gzip, "db.again": compress.Codecs.Gzip} {
		for _, path := range dataFiles(t, e, table) {
			pf, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
			if err != nil {
				t.Fatal(err)
			}
			if got := cc.Compression(); got != want {
				t.Errorf("%s: data file %s is %s, want %s", table, path, got, want)
			}
			pf.Close()
		}
	}
}

// dataFiles are the local paths of a table's live data files.
func dataFiles(t *testing.T, e *env, table string) []string {
	t.Helper()
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(e.OK("table", "files", table).Stdout), "\n") {
		paths = append(paths, strings.TrimPrefix(strings.Fields(line)[0], "file://"))
	}
	return paths
}

// Files landed one a day, copied into a table partitioned by day(ts),
// read the same in every reader, partition values included.
func TestChunkCopyPartitionedReadsAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for d := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := range 600 {
			id := int64(d*600 + i)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base.AddDate(0, 0, d).Add(time.Duration(i) * time.Minute).UnixMicro()))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("v%d", id%7))
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := fixture.WriteParquet(filepath.Join(e.Landing, fmt.Sprintf("day-%d.parquet", d)), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.daily", "--checkpoint", filepath.Join(e.Dir, "daily.ckpt"),
		"--trigger", "available-now", "--partition-fields", "day(ts)", "-p", "table-default.write.parquet.row-group-size-bytes=32768")
	if st := e.checkTable("db.daily"); st.Rows != 1800 {
		t.Fatalf("%d rows, want 1800", st.Rows)
	}
	paths := dataFiles(t, e, "db.daily")
	if len(paths) != 3 {
		t.Fatalf("%d data files, want one a day", len(paths))
	}
	for _, path := range paths {
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil || cc.Compression() != compress.Codecs.Snappy {
			t.Errorf("%s: %v (%v), want the input's snappy: not copied", path, cc.Compression(), err)
		}
		pf.Close()
	}
	if n := e.Count("db.daily"); n != 1800 {
		t.Fatalf("count %d", n)
	}
	r := e.OK("scan", "db.daily", "--filter", "ts >= TIMESTAMP '2026-03-02 00:00:00' AND ts < TIMESTAMP '2026-03-03 00:00:00'", "--count")
	if strings.TrimSpace(r.Stdout) != "600" {
		t.Fatalf("one day's rows: %s, want 600", r.Stdout)
	}
}
