package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// A column added without a default reads as NULL from files written before
// it, also when it is the only column read.
func TestScanOnlyColumnsOlderFilesLack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	land := func(name, csv string) {
		if err := fixture.Land(filepath.Join(e.Landing, name), []byte(csv)); err != nil {
			t.Fatal(err)
		}
	}
	stream := func() {
		e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
			"--trigger", "available-now", "--schema-evolution", "add-columns")
	}
	land("a.csv", "id\n1\n2\n")
	stream()
	land("b.csv", "id,x\n3,foo\n")
	stream()
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 3); d != "" {
		t.Fatal(d)
	}
	r := e.OK("scan", "db.t", "--keep", "x", "--output-format", "jsonl")
	got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	sort.Strings(got)
	if want := []string{`{"x":"foo"}`, `{"x":null}`, `{"x":null}`}; !slices.Equal(got, want) {
		t.Errorf("--keep x printed %q, want %q", got, want)
	}
	r = e.OK("scan", "db.t", "--keep", "x", "--filter", "x IS NULL", "--count")
	if strings.TrimSpace(r.Stdout) != "2" {
		t.Errorf("x IS NULL counts %s, want 2", r.Stdout)
	}
}

// A row group that holds as many nulls as values (here one of each, as
// floe writes them) keeps its value under a filter: iceberg-go 0.7.0
// took such groups for nulls only.
func TestFilterKeepsHalfNullRowGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := fixture.Land(filepath.Join(e.Landing, "a.csv"), []byte("id,x\n1,\n2,a\n")); err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 2); d != "" {
		t.Fatal(d)
	}
	for _, f := range []string{"x IS NOT NULL", "x = 'a'", "x >= 'a'", "x IN ('a', 'b')", "x LIKE 'a%'"} {
		r := e.OK("scan", "db.t", "--filter", f, "--output-format", "csv")
		if got := strings.TrimSpace(r.Stdout); got != "id,x\n2,a" {
			t.Errorf("--filter %q printed %q, want row 2", f, got)
		}
	}
}

// A data file whose manifest records a value count that leaves out the
// nulls (as some writers do) is not pruned: iceberg-go reads such metrics
// as "nulls only" and skipped the file for IS NOT NULL.
func TestFilterIgnoresContradictoryManifestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
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
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 3); d != "" {
		t.Fatal(d)
	}
	for f, want := range map[string]string{"value IS NOT NULL": "2\n3", "value = 'y'": "3", "value IS NULL": "1"} {
		r := e.OK("scan", "db.t", "--filter", f, "--keep", "id", "--output-format", "csv")
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:]
		sort.Strings(lines)
		if got := strings.Join(lines, "\n"); got != want {
			t.Errorf("--filter %q: ids %q, want %q", f, got, want)
		}
	}
	var plan struct {
		Planned int `json:"files_planned"`
	}
	r := e.OK("scan", "db.t", "--filter", "value IS NOT NULL", "--explain", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &plan); err != nil || plan.Planned != 1 {
		t.Errorf("explain plans %d files (%v), want the 1 file: %s", plan.Planned, err, r.Stdout)
	}
}

// The binary's part of a scan's option errors: --limit and
// --as-of-timestamp are checked as flags, and an error package scan finds
// (scan.TestOptionErrors) exits 2 with its message, also with --count.
func TestScanOptionErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK(e.StreamArgs("db.t", "--trigger", "available-now")...)
	first := time.UnixMilli(e.Snapshots("db.t")[0].TimestampMs).UTC().Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--as-of-timestamp", "0", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--as-of-timestamp", "1970-01-01T00:00:00Z", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--keep", "nope"}, []string{`no column "nope"`}},
		{[]string{"--drop", "nope", "--count"}, []string{`drop`, `no column "nope"`}},
		{[]string{"--limit", "-1"}, []string{"--limit -1", "0 for all"}},
		{[]string{"--limit", "-1", "--count"}, []string{"--limit -1"}},
	} {
		r := e.Run(append([]string{"scan", "db.t"}, c.args...)...)
		ok := r.Code == 2
		for _, w := range c.want {
			ok = ok && strings.Contains(r.Stderr, w)
		}
		if !ok {
			t.Errorf("scan %v: want exit 2 naming %q, got %s", c.args, c.want, r)
		}
	}
	if n := e.Count("db.t"); n != 10 {
		t.Errorf("count %d, want 10", n)
	}
	r := e.OK("scan", "db.t", "--as-of-timestamp", strconv.FormatInt(e.Snapshots("db.t")[0].TimestampMs, 10), "--count")
	if strings.TrimSpace(r.Stdout) != "10" {
		t.Errorf("as of the first snapshot: %s", r.Stdout)
	}
}
