package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
	// floe's own files (parquet-go: data pages v2, delta encodings)
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
