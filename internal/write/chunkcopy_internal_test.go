package write

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
)

// A data file that cannot be written while chunks are copied into it
// fails the batch as the storage's failure, never as bad input: the input
// file is not set aside for it, and the data file is removed.
func TestChunkCopyWriteFailureIsNotBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := fixture.IDRecord(0, 1000)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "in.parquet")
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(rec.Schema(), true)
	if err != nil {
		t.Fatal(err)
	}
	// Row groups of 32 KiB make the input's small one worth copying.
	tbl, fs := countingTable(fixture.CreateIcebergTable(t, fixture.Catalog(t), table.Identifier{"db", "t"}, sc,
		catalog.WithProperties(iceberg.Properties{table.ParquetRowGroupSizeBytesKey: "32768"})))
	fs.failAfter = 4 // the magic number goes out, the first chunk does not
	_, err = (&Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, []ingest.Part{fixture.ParquetFilePart{Path: path}})
	var bf *ingest.BadFileError
	if err == nil || errors.As(err, &bf) || !strings.Contains(err.Error(), "injected write failure") {
		t.Fatalf("got %v, want the injected write failure, not a bad input file", err)
	}
	if fs.removed.Load() == 0 {
		t.Fatal("the data file was not removed")
	}
}
