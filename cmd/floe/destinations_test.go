package main_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

var regions = []string{"apac", "emea", "latam", "na", "oceania"}

var regionSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "meta", Type: arrow.StructOf(arrow.Field{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
}, nil)

// writeRegions writes rows with ids [first, first+n): region cycles through
// regions (row i gets regions[i%5]), meta.kind is "k<id%2>"; region(id)
// overrides the region when it returns ok.
func writeRegions(t *testing.T, path string, first, n int64, region func(id int64) (string, bool, bool)) {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, regionSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	rs := b.Field(1).(*array.StringBuilder)
	meta := b.Field(2).(*array.StructBuilder)
	kinds := meta.FieldBuilder(0).(*array.StringBuilder)
	for id := first; id < first+n; id++ {
		ids.Append(id)
		r, null, override := "", false, false
		if region != nil {
			r, null, override = region(id)
		}
		switch {
		case override && null:
			rs.AppendNull()
		case override:
			rs.Append(r)
		default:
			rs.Append(regions[id%int64(len(regions))])
		}
		meta.Append(true)
		kinds.Append("k" + string(rune('0'+id%2)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

func wantRegionIDs(first, n int64, region string) map[int64]bool {
	out := map[int64]bool{}
	for id := first; id < first+n; id++ {
		if regions[id%int64(len(regions))] == region {
			out[id] = true
		}
	}
	return out
}

func sameIDs(t *testing.T, table string, got, want map[int64]bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s holds %d distinct ids, want %d", table, len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Fatalf("%s lacks id %d", table, id)
		}
	}
}

// One batch with rows for 5 regions fills 5 tables, each with exactly its
// rows in one snapshot.
func TestDynamicDestinations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 1000, nil)
	r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.events_{region}", "--checkpoint", e.Ckpt, "--progress", "json")
	var prog struct {
		Sink struct {
			Tables []struct {
				Table string `json:"table"`
				Rows  int64  `json:"numOutputRows"`
			} `json:"tables"`
		} `json:"sink"`
	}
	line := strings.TrimSpace(r.Stderr)
	if err := json.Unmarshal([]byte(line[strings.LastIndex(line, "\n")+1:]), &prog); err != nil {
		t.Fatalf("progress: %v\n%s", err, r.Stderr)
	}
	if len(prog.Sink.Tables) != 5 {
		t.Fatalf("progress names %d tables, want 5: %s", len(prog.Sink.Tables), r.Stderr)
	}
	for _, reg := range regions {
		name := "db.events_" + reg
		sameIDs(t, name, e.IDs(name), wantRegionIDs(0, 1000, reg))
		if s := e.Snapshots(name); len(s) != 1 {
			t.Fatalf("%s has %d snapshots, want 1", name, len(s))
		}
	}
	// A re-run commits nothing anywhere.
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.events_{region}", "--checkpoint", e.Ckpt)
	for _, reg := range regions {
		if s := e.Snapshots("db.events_" + reg); len(s) != 1 {
			t.Fatalf("re-run added snapshots to db.events_%s: %d", reg, len(s))
		}
	}
}

// A crash after the 2nd of 5 table commits: the restart commits the other
// three and skips the two, so every table holds its rows exactly once.
func TestDynamicDestinationsCrashBetweenTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 1000, nil)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.events_{region}", "--checkpoint", e.Ckpt}
	r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=2"}, args...)
	if r.Code != 137 {
		t.Fatalf("the crash hook did not fire: %s", r)
	}
	tables := strings.Fields(e.OK("table", "list", "db").Stdout)
	committed := 0
	for _, reg := range regions {
		if slices.Contains(tables, "db.events_"+reg) && e.Count("db.events_"+reg) > 0 {
			committed++
		}
	}
	if committed != 2 {
		t.Fatalf("after the crash %d tables hold rows, want 2 (tables: %v)", committed, tables)
	}
	e.OK(args...)
	for _, reg := range regions {
		name := "db.events_" + reg
		sameIDs(t, name, e.IDs(name), wantRegionIDs(0, 1000, reg))
		if s := e.Snapshots(name); len(s) != 1 {
			t.Fatalf("%s has %d snapshots after the restart, want 1", name, len(s))
		}
	}
	var show struct {
		LatestCommit struct {
			BatchID   int64            `json:"batchId"`
			Snapshots map[string]int64 `json:"snapshots"`
		} `json:"latestCommit"`
	}
	out := e.OK("checkpoint", "show", e.Ckpt, "--json").Stdout
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatalf("checkpoint show: %v\n%s", err, out)
	}
	if c := show.LatestCommit; c.BatchID != 0 || len(c.Snapshots) != 5 {
		t.Fatalf("checkpoint records %+v, want batch 0 naming 5 tables", c)
	}
}

// A nested placeholder routes by a struct field.
func TestDynamicDestinationNested(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, nil)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.kind_{meta.kind}", "--checkpoint", e.Ckpt)
	if a, b := e.Count("db.kind_k0"), e.Count("db.kind_k1"); a != 50 || b != 50 {
		t.Fatalf("kind tables hold %d and %d rows, want 50 each", a, b)
	}
}

// A row whose template value is null or not a name fails the batch with its
// location, or goes to the dead-letter table; it is never dropped.
func TestDynamicDestinationBadValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, func(id int64) (string, bool, bool) {
		switch id {
		case 7:
			return "", true, true
		case 11:
			return "no.dot", false, true
		}
		return "", false, false
	})
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.events_{region}", "--checkpoint", e.Ckpt}
	r := e.Run(args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "a.parquet") || !strings.Contains(r.Stderr, "row 8") || !strings.Contains(r.Stderr, "region is null") || !strings.Contains(r.Stderr, "dead-letter-table") {
		t.Fatalf("want an error naming the file, row 8 and the null region, got %s", r)
	}
	if tables := e.Run("table", "list", "db"); strings.Contains(tables.Stdout, "events_") {
		t.Fatalf("a failed batch left tables behind: %s", tables.Stdout)
	}
	e.OK(append(args, "--dead-letter-table", "db.dead")...)
	if n := e.Count("db.dead"); n != 2 {
		t.Fatalf("dead-letter table holds %d rows, want 2", n)
	}
	out := e.OK("scan", "db.dead", "--output-format", "jsonl").Stdout
	if !strings.Contains(out, `"_floe_error":"column region is null"`) || !strings.Contains(out, `no.dot`) || !strings.Contains(out, `"_floe_source_row":12`) {
		t.Fatalf("dead letters lack their reason or location:\n%s", out)
	}
	var total int64 = 2
	for _, reg := range regions {
		total += e.Count("db.events_" + reg)
	}
	if total != 100 {
		t.Fatalf("%d rows across the tables and the dead letters, want 100", total)
	}
}

// A nested source column partitions by its struct field.
func TestPartitionByNestedField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, nil)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.nested", "--checkpoint", e.Ckpt,
		"--partition-fields", "meta.kind", "--partition-fields", "bucket(region, 2)")
	got := map[string]int64{}
	for _, f := range e.files("db.nested") {
		got[f.Partition["meta_kind"].(string)] += f.Rows
	}
	if got["k0"] != 50 || got["k1"] != 50 || len(got) != 2 {
		t.Fatalf("rows by meta.kind partition: %v, want 50 in k0 and k1", got)
	}
}

// A template may name a column the table does not keep.
func TestTemplateColumnDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, nil)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.ev_{region}", "--checkpoint", e.Ckpt, "--drop", "region")
	for _, reg := range regions {
		name := "db.ev_" + reg
		if cols := strings.Join(e.describe(name).columns(), ","); strings.Contains(cols, "region") {
			t.Fatalf("%s keeps the dropped column: %s", name, cols)
		}
		sameIDs(t, name, e.IDs(name), wantRegionIDs(0, 100, reg))
	}
}

// A batch re-run after a crash between two tables' commits cannot be
// forgotten when its input went bad meanwhile: some tables hold it. The run
// fails and keeps the batch; once the file is back, it completes, exactly
// once everywhere.
func TestTemplateRerunKeepsBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 500, nil)
	writeRegions(t, filepath.Join(e.Landing, "b.parquet"), 500, 500, nil)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.events_{region}", "--checkpoint", e.Ckpt}
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_AFTER_TABLE_COMMITS=1"}, args...); r.Code != 137 {
		t.Fatalf("the crash hook did not fire: %s", r)
	}
	moved := filepath.Join(e.Dir, "b.parquet")
	if err := os.Rename(filepath.Join(e.Landing, "b.parquet"), moved); err != nil {
		t.Fatal(err)
	}
	r := e.Run(args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "b.parquet") || !strings.Contains(r.Stderr, "may already be in some of the tables") {
		t.Fatalf("want the re-run to fail and keep the batch, got %s", r)
	}
	if err := os.Rename(moved, filepath.Join(e.Landing, "b.parquet")); err != nil {
		t.Fatal(err)
	}
	e.OK(args...)
	for _, reg := range regions {
		name := "db.events_" + reg
		sameIDs(t, name, e.IDs(name), wantRegionIDs(0, 1000, reg))
	}
}

// Crash safety through a table template into partitioned tables: SIGKILL at
// random moments, restart, repeat; every table holds each of its rows
// exactly once.
func TestCrashSafetyTemplates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 30, 400
	for i := range int64(files) {
		writeRegions(t, filepath.Join(e.Landing, fmt.Sprintf("f-%03d.parquet", i)), i*rows, rows, nil)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.crash_{region}",
		"--partition-fields", "bucket(id, 4)", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "3"}
	kills, finished, next := 0, 0, int64(files)
	for kills < max(1, *crashKills/2) {
		if e.runOrKill(time.Duration(rng.IntN(600))*time.Millisecond, args...) {
			kills++
			continue
		}
		finished++
		for range 6 {
			writeRegions(t, filepath.Join(e.Landing, fmt.Sprintf("g-%03d.parquet", next)), next*rows, rows, nil)
			next++
		}
	}
	e.OK(args...)
	total := next * rows
	for _, reg := range regions {
		name := "db.crash_" + reg
		sameIDs(t, name, e.IDs(name), wantRegionIDs(0, total, reg))
	}
	t.Logf("%d kills, %d runs that finished, %d rows in 5 tables exactly once", kills, finished, total)
}
