package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// A table of 100 files partitioned by day(ts): a filter on one day plans
// that day's file alone, and returns exactly its rows.
func TestScanFilterPrunes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{"ACTIVE", "PAUSED", "DONE"}
	for i := range 10_000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(start.Add(time.Duration(i%100)*24*time.Hour + time.Duration(i)*time.Second).UnixMicro()))
		b.Field(2).(*array.StringBuilder).Append(statuses[i%3])
	}
	rec := b.NewRecordBatch()
	b.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, "a.parquet"), rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.days", "--checkpoint", e.Ckpt, "--partition-fields", "day(ts)")

	oneDay := "ts >= TIMESTAMP '2024-01-05 00:00:00' AND ts < TIMESTAMP '2024-01-06 00:00:00'"
	var plan struct {
		FilesPlanned int    `json:"files_planned"`
		FilesTotal   int    `json:"files_total"`
		BytesPlanned int64  `json:"bytes_planned"`
		BytesTotal   int64  `json:"bytes_total"`
		Pushed       string `json:"pushed_filter"`
		Residual     string `json:"residual_filter"`
	}
	out := e.OK("scan", "db.days", "--filter", oneDay, "--explain", "--json").Stdout
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, out)
	}
	if plan.FilesTotal != 100 || plan.FilesPlanned != 1 || plan.BytesPlanned >= plan.BytesTotal || plan.Pushed == "" || plan.Residual != "" {
		t.Fatalf("plan %+v, want 1 of 100 files, an exact pushed filter", plan)
	}
	// Day 4 (from 0) holds ids i with i%100 == 4: 100 rows.
	if n := strings.TrimSpace(e.OK("scan", "db.days", "--filter", oneDay, "--count").Stdout); n != "100" {
		t.Fatalf("one day holds %s rows, want 100", n)
	}
	// A residual: LIKE with an inner wildcard is checked on rows.
	out = e.OK("scan", "db.days", "--filter", "status LIKE '%US%' AND id < 30", "--explain", "--json").Stdout
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Residual == "" {
		t.Fatalf("LIKE '%%US%%' left no residual: %+v", plan)
	}
	ids := e.scanIDs("db.days", "--filter", "status LIKE '%US%' AND id < 30")
	want := map[int64]bool{}
	for i := int64(0); i < 30; i++ {
		if i%3 == 1 {
			want[i] = true
		}
	}
	sameIDs(t, "PAUSED below 30", ids, want)
	// The filter may read columns that are not kept, and the limit counts
	// rows after the filter.
	sameIDs(t, "DONE below 9, id kept", e.scanIDs("db.days", "--keep", "id", "--filter", "status = 'DONE' AND id < 9"), map[int64]bool{2: true, 5: true, 8: true})
	if out := e.OK("scan", "db.days", "--filter", "status LIKE '%US%'", "--limit", "2", "--output-format", "jsonl").Stdout; strings.Count(out, "\n") != 2 {
		t.Fatalf("--limit 2 with a residual printed %q", out)
	}
	// Errors point at the spot.
	r := e.Run("scan", "db.days", "--filter", "id > AND x = 1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "^") {
		t.Fatalf("a syntax error: want a caret, got %s", r)
	}
	r = e.Run("scan", "db.days", "--filter", "nope = 1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "nope") {
		t.Fatalf("an unknown column: %s", r)
	}
}

// An empty-string partition value: iceberg-go's manifest summaries lose its
// lower bound, and pruning would then skip it; floe checks rows instead.
func TestScanFilterEmptyStringPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	for i := range 30 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append([]string{"", "a", "b"}[i%3])
	}
	rec := b.NewRecordBatch()
	b.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, "a.parquet"), rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.es", "--checkpoint", e.Ckpt, "--partition-fields", "s")
	want := map[int64]bool{}
	for i := int64(0); i < 30; i += 3 {
		want[i] = true
	}
	sameIDs(t, "s = ''", e.scanIDs("db.es", "--filter", "s = ''"), want)
	if n := strings.TrimSpace(e.OK("scan", "db.es", "--filter", "s < 'b'", "--count").Stdout); n != "20" {
		t.Fatalf("s < 'b' counts %s rows, want 20", n)
	}
}

// --sink console prints each batch's rows as JSON lines on stdout and
// writes no table; the checkpoint still records what was read.
func TestConsoleSink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 5)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--sink", "console", "--checkpoint", e.Ckpt, "--keep", "id"}
	r := e.OK(args...)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 5 || lines[0] != `{"id":0}` || lines[4] != `{"id":4}` {
		t.Fatalf("console printed %q", r.Stdout)
	}
	if r := e.OK(args...); strings.TrimSpace(r.Stdout) != "" {
		t.Fatalf("a re-run printed again: %q", r.Stdout)
	}
	e.WriteIDs("b.parquet", 5, 2)
	if r := e.OK(args...); strings.Count(r.Stdout, "\n") != 2 {
		t.Fatalf("the new file printed %q", r.Stdout)
	}
	if tables := e.Run("table", "list", "db"); strings.Contains(tables.Stdout, "db.") {
		t.Fatalf("the console sink made a table: %s", tables.Stdout)
	}
}
