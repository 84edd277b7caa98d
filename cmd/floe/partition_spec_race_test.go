package main_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// wantRows fails the test unless table name holds ids 0..n-1, each once,
// as iceberg-go's own scan reads them (rowsOf reports any id twice).
func wantRows(t *testing.T, e *env, name string, n int) {
	t.Helper()
	rows := rowsOf(t, e, name)
	missing := 0
	for i := range int64(n) {
		if _, ok := rows[i]; !ok {
			missing++
		}
	}
	if missing > 0 || len(rows) != n {
		t.Errorf("table %s holds %d distinct ids with %d of 0..%d missing, want each of the %d once", name, len(rows), missing, n-1, n)
	}
}

// wantKnownSpecs fails the test unless every live data file of table name
// names a partition spec the table has; it returns the spec ids of the
// files, one per file.
func wantKnownSpecs(t *testing.T, e *env, name string) []int32 {
	t.Helper()
	ctx := context.Background()
	tbl := e.loadTable(ctx, e.catalog(ctx), name)
	files, _ := dataFiles(t, e.Warehouse, name)
	var ids []int32
	for _, f := range files {
		if tbl.Metadata().PartitionSpecByID(int(f.SpecID())) == nil {
			t.Errorf("data file %s names partition spec %d, which table %s does not have", f.FilePath(), f.SpecID(), name)
		}
		ids = append(ids, f.SpecID())
	}
	return ids
}

// A stream asked for day(ts) is paused with a batch's files written in
// that spec; floe table set-partition-spec makes the table's spec
// month(ts); the stream resumes.
func TestSpecChangeDuringBatchCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeCountries(t, e, "a.parquet", 0, 60, 3)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
	writeCountries(t, e, "b.parquet", 60, 60, 3)
	p := e.startPaused(e.StreamArgs("db.t", "--partition-fields", "day(ts)")...)
	e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "month(ts)")
	err := p.resume(t)
	t.Logf("resumed stream: exit %d\n%s", exitCode(err), p.out.String())
	t.Logf("specs of files: %v", wantKnownSpecs(t, e, "db.t"))
	wantRows(t, e, "db.t", 120)
	writeCountries(t, e, "c.parquet", 120, 60, 3)
	r := e.Stream("db.t", "--partition-fields", "day(ts)")
	t.Logf("restart with day(ts): %s", r)
	r = e.Stream("db.t", "--partition-fields", "month(ts)")
	t.Logf("restart with month(ts): %s", r)
	t.Logf("specs of files: %v", wantKnownSpecs(t, e, "db.t"))
	wantRows(t, e, "db.t", 180)
	_ = fmt.Sprint
	_ = slices.Equal[[]int]
	_ = strings.Contains
	_ = fixture.WaitFor
}
