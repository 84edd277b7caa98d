package floe_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/scan"
)

// Files written elsewhere are committed once per query and batch: the
// second commit of the same batch finds the first and adds nothing.
func TestCommitterCommitsABatchOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	ident := table.Identifier{"db", "t"}
	tbl := fixture.CreateTable(t, cat, ident, fixture.IDSchema)
	rec := fixture.IDRecord(0, 100)
	defer rec.Release()
	res, err := (&write.Writer{Table: tbl, FilePrefix: "ext"}).Write(ctx, []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	// A file written elsewhere, described as the library's API takes it.
	files := make([]floe.DataFile, len(res.Files))
	for i, f := range res.Files {
		files[i] = floe.DataFile{Table: f.Table, Path: f.Path, SizeBytes: f.SizeBytes, Rows: f.Rows, File: f.File}
	}
	c := floe.Committer{Catalog: cat, Table: ident, QueryID: "3c9a8c52-5d6e-4b8e-9a51-5f0e3c1d2b7a", Source: "elsewhere"}
	first, existing, err := c.Commit(ctx, 0, files)
	if err != nil || existing {
		t.Fatalf("first commit: snapshot %d, existing %v, %v", first, existing, err)
	}
	again, existing, err := c.Commit(ctx, 0, files)
	if err != nil || !existing || again != first {
		t.Fatalf("second commit: snapshot %d (first %d), existing %v, %v", again, first, existing, err)
	}
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	n, err := scan.Count(ctx, tbl, scan.Options{})
	if err != nil || n != 100 {
		t.Fatalf("table holds %d rows (%v), want 100", n, err)
	}
	if s := tbl.CurrentSnapshot(); s.Summary.Properties[floe.SummaryBatchID] != "0" || s.Summary.Properties[floe.SummaryQueryID] != c.QueryID {
		t.Fatalf("snapshot summary %v", s.Summary.Properties)
	}
}
