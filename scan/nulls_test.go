package scan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// csvTable is a table floe streams CSV files into, in-process, as `floe
// stream --format csv --trigger available-now` does.
type csvTable struct {
	t                        *testing.T
	sink                     config.Sink
	landing, ckpt, warehouse string
}

func newCSVTable(t *testing.T, sink config.Sink) *csvTable {
	t.Helper()
	dir := t.TempDir()
	return &csvTable{t: t, sink: sink, landing: filepath.Join(dir, "landing"), ckpt: filepath.Join(dir, "ckpt"), warehouse: filepath.Join(dir, "warehouse")}
}

// stream lands one CSV file and runs the pipeline until it is in the table.
func (c *csvTable) stream(name, csv string) {
	c.t.Helper()
	if err := fixture.Land(filepath.Join(c.landing, name), []byte(csv)); err != nil {
		c.t.Fatal(err)
	}
	cfg := &config.Pipeline{
		Catalog:    config.Catalog{Warehouse: c.warehouse},
		Source:     config.Source{Path: c.landing, Format: "csv"},
		Sink:       c.sink,
		Checkpoint: c.ckpt,
	}
	cfg.SetDefaults()
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx); err != nil {
		c.t.Fatal(err)
	}
}

// load loads the table after checking, with iceberg-go's reader, that it
// holds the n ids from first once each.
func (c *csvTable) load(first, n int64) *table.Table {
	c.t.Helper()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(c.t, c.warehouse)
	ids, err := fixture.ReadIDs(ctx, cat, c.sink.Table, "id")
	if err != nil {
		c.t.Fatal(err)
	}
	if d := fixture.Exact(ids, first, n); d != "" {
		c.t.Fatal(d)
	}
	ident, err := floe.ParseIdent(c.sink.Table)
	if err != nil {
		c.t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		c.t.Fatal(err)
	}
	return tbl
}

// A column added without a default reads as NULL from files written before
// it, also when it is the only column read.
func TestScanOnlyColumnsOlderFilesLack(t *testing.T) {
	t.Parallel()
	c := newCSVTable(t, config.Sink{Table: "db.t", SchemaEvolution: "add-columns"})
	c.stream("a.csv", "id\n1\n2\n")
	c.stream("b.csv", "id,x\n3,foo\n")
	tbl := c.load(1, 3)
	out, err := jsonLines(tbl, scan.Options{Columns: []string{"x"}})
	got := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(got)
	if want := []string{`{"x":"foo"}`, `{"x":null}`, `{"x":null}`}; err != nil || !slices.Equal(got, want) {
		t.Errorf("keep x read %q (%v), want %q", got, err, want)
	}
	n, err := scan.Count(context.Background(), tbl, scan.Options{Columns: []string{"x"}, Filter: "x IS NULL"})
	if err != nil || n != 2 {
		t.Errorf("x IS NULL counts %d (%v), want 2", n, err)
	}
}

// A row group that holds as many nulls as values (here one of each, as
// floe writes them) keeps its value under a filter: iceberg-go 0.7.0
// took such groups for nulls only.
func TestFilterKeepsHalfNullRowGroup(t *testing.T) {
	t.Parallel()
	c := newCSVTable(t, config.Sink{Table: "db.t"})
	c.stream("a.csv", "id,x\n1,\n2,a\n")
	tbl := c.load(1, 2)
	for _, f := range []string{"x IS NOT NULL", "x = 'a'", "x >= 'a'", "x IN ('a', 'b')", "x LIKE 'a%'"} {
		out, err := jsonLines(tbl, scan.Options{Filter: f})
		if got := strings.TrimSpace(out); err != nil || got != `{"id":2,"x":"a"}` {
			t.Errorf("filter %q read %q (%v), want row 2", f, got, err)
		}
	}
}

// A data file whose manifest records a value count that leaves out the
// nulls (as some writers do) is not pruned: iceberg-go reads such metrics
// as "nulls only" and skipped the file for IS NOT NULL.
func TestFilterIgnoresContradictoryManifestMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, filepath.Join(t.TempDir(), "warehouse"))
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "value", Type: iceberg.PrimitiveTypes.String},
	)
	tbl := fixture.CreateIcebergTable(t, cat, table.Identifier{"db", "t"}, sc)
	asc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})},
		{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2"})},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"", "x", "y"}, []bool{false, true, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	uri := tbl.Location() + "/data/by-hand.parquet"
	path := strings.TrimPrefix(uri, "file://")
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, uri, iceberg.ParquetFile, nil, nil, nil, 3, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	df := db.ValueCounts(map[int]int64{1: 3, 2: 1}).NullValueCounts(map[int]int64{1: 0, 2: 1}).
		LowerBoundValues(map[int][]byte{2: []byte("x")}).UpperBoundValues(map[int][]byte{2: []byte("y")}).Build()
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, []iceberg.DataFile{df}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ids, err := fixture.ReadIDs(ctx, cat, "db.t", "id")
	if err != nil {
		t.Fatal(err)
	}
	if d := fixture.Exact(ids, 1, 3); d != "" {
		t.Fatal(d)
	}
	if tbl, err = cat.LoadTable(ctx, table.Identifier{"db", "t"}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"value IS NOT NULL": "2\n3", "value = 'y'": "3", "value IS NULL": "1"} {
		got, err := scanIDsOf(ctx, tbl, scan.Options{Filter: f, Columns: []string{"id"}})
		slices.Sort(got)
		if err != nil || fmt.Sprint(got) != "["+strings.ReplaceAll(want, "\n", " ")+"]" {
			t.Errorf("filter %q: ids %v (%v), want %q", f, got, err, want)
		}
	}
	plan, err := scan.Explain(ctx, tbl, scan.Options{Filter: "value IS NOT NULL"})
	if err != nil || plan.FilesPlanned != 1 {
		t.Errorf("explain plans %d files (%v), want the 1 file", plan.FilesPlanned, err)
	}
}
