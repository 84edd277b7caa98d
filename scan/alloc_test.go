package scan_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// TestScanWithPooledAllocator: a scan whose records live in floe's pool
// (as `floe scan` reads) returns the rows a scan on Go's heap returns, for
// tables other engines wrote with equality and position deletes, defaults
// in structs, uuid and absent partition columns; and it releases every
// buffer it takes from the pool, so none stays out of reuse.
func TestScanWithPooledAllocator(t *testing.T) {
	t.Parallel()
	peer := fixture.Shared(t, "fixtures/peer-tables/tables")
	for _, c := range []struct{ name, loc, from, to, filter string }{
		{"equality_deletes", "equality_deletes/warehouse/mydb/mytable_partitioned", "data/persistent/equality_deletes/", "equality_deletes/", ""},
		{"defaults_in_struct", "add_columns_with_defaults_in_struct/default.db/add_columns_with_defaults_in_struct/metadata/00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json", "data/persistent/add_columns_with_defaults_in_struct/", "add_columns_with_defaults_in_struct/", ""},
		{"uuid", "uuid", "data/persistent/uuid/", "uuid/", ""},
		{"hive_partitioned", "hive_partitioned_table", "data/persistent/hive_partitioned_table/", "hive_partitioned_table/", ""},
		// The filter's column is absent from one file: read unfiltered,
		// fixed, then checked row by row.
		{"hive_partitioned_filtered", "hive_partitioned_table", "data/persistent/hive_partitioned_table/", "hive_partitioned_table/", "event_type = 'click'"},
		{"spark_bunnies", "hyperparam-iceberg/spark/bunnies", "s3a://hyperparam-iceberg/spark/bunnies", "hyperparam-iceberg/spark/bunnies", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl, err := catalogs.LoadTableAt(ctx, filepath.Join(peer, c.loc), nil, []catalogs.PathPrefix{{From: c.from, To: filepath.Join(peer, c.to) + "/"}})
			if err != nil {
				t.Fatal(err)
			}
			heap := readJSON(t, tbl, scan.Options{Filter: c.filter})
			if len(heap) == 0 {
				t.Fatal("the table reads empty")
			}
			mem := memory.NewCheckedAllocator(arrowpool.New())
			got := readJSON(t, tbl, scan.Options{Filter: c.filter, Allocator: mem})
			if !bytes.Equal(got, heap) {
				t.Errorf("rows read in the pool differ from Go's heap:\n%s\nwant\n%s", got, heap)
			}
			n, err := scan.Count(ctx, tbl, scan.Options{Filter: c.filter, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(bytes.Count(heap, []byte("\n"))); n != want {
				t.Errorf("count in the pool %d, want %d", n, want)
			}
			if n := mem.CurrentAlloc(); n != 0 {
				t.Errorf("%d bytes of the pool still held after every record was released", n)
			}
		})
	}
}

// readJSON scans tbl and renders its rows as JSON lines, each record
// rendered before it is released.
func readJSON(t *testing.T, tbl *table.Table, o scan.Options) []byte {
	t.Helper()
	_, recs, err := scan.Table(context.Background(), tbl, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		err = array.RecordToJSON(rec, &buf)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
