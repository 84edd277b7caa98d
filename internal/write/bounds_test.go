package write_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// idRecord is fixture.IDRecord with v of row long set to a value of n bytes.
func idRecord(first, rows int64, long int, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, fixture.IDSchema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(first + i)
		v := "v"
		if int(i) == long {
			v = strings.Repeat("w", n)
		}
		b.Field(1).(*array.StringBuilder).Append(v)
	}
	return b.NewRecordBatch()
}

// A value too long for column bounds arriving after a file started with
// bounds rolls the file: the column's bounds stay in the first file, the
// next is written without them, and every row lands once.
func TestLongValueRollsFileWithBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "long"}, QueryID: "q"}
	tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs := []arrow.RecordBatch{idRecord(0, 1000, -1, 0), idRecord(1000, 1000, 500, 10_000), idRecord(2000, 1000, -1, 0)}
	w := &write.Writer{Table: tbl, FilePrefix: "long"}
	res, err := w.Write(ctx, []ingest.Part{fixture.Part{PartName: "long", Records: recs}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 {
		t.Fatalf("%d files, want 2: the first with bounds on v, then one without", len(res.Files))
	}
	var rows []int64
	for _, f := range res.Files {
		rows = append(rows, f.Rows)
		_, bounded := f.File.UpperBoundValues()[2]
		if want := f.Rows == 1000; bounded != want {
			t.Errorf("file of %d rows has bounds on v: %v, want %v", f.Rows, bounded, want)
		}
	}
	if rows[0]+rows[1] != 3000 {
		t.Fatalf("files of %v rows, want 3000 in all", rows)
	}
	commitIDs(t, c, res.Files, 3000)
}

// commitIDs commits files to c's table and checks that it holds ids 0 to
// n-1, each once.
func commitIDs(t *testing.T, c *commit.Committer, files []ingest.DataFile, n int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: files}); err != nil {
		t.Fatal(err)
	}
	ids, err := fixture.ReadIDs(ctx, c.Catalog, strings.Join(c.Ident, "."), "id")
	if err != nil {
		t.Fatal(err)
	}
	if diff := fixture.Exact(ids, 0, n); diff != "" {
		t.Fatal(diff)
	}
}
