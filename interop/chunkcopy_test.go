package interop_test

import (
	"fmt"
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
// floe, icebird and DuckDB; the copy keeps the inputs' snappy pages.
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
	stream("db.copied")
	stream("db.encoded", "-p", "table-default.floe.write.copy-parquet-chunks=false")
	copied, encoded := e.checkTable("db.copied"), e.checkTable("db.encoded")
	if copied.Rows != 2100 || copied.Checksum != encoded.Checksum {
		t.Fatalf("copied: %d rows, checksum %s; encoded: %d rows, checksum %s; want 2100 rows alike", copied.Rows, copied.Checksum, encoded.Rows, encoded.Checksum)
	}
	for table, want := range map[string]compress.Compression{"db.copied": compress.Codecs.Snappy, "db.encoded": compress.Codecs.Zstd} {
		for _, line := range strings.Split(strings.TrimSpace(e.OK("table", "files", table).Stdout), "\n") {
			path := strings.TrimPrefix(strings.Fields(line)[0], "file://")
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
