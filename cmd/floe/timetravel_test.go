package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
)

// scanIDs returns the ids a scan with extra flags prints, failing on
// duplicates.
func (e *env) scanIDs(table string, extra ...string) map[int64]bool {
	e.T.Helper()
	out := e.OK(append([]string{"scan", table, "--output-format", "csv"}, extra...)...).Stdout
	seen := map[int64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		var id int64
		if _, err := fmt.Sscan(strings.SplitN(l, ",", 2)[0], &id); err != nil {
			e.T.Fatalf("scan csv line %q: %v", l, err)
		}
		if seen[id] {
			e.T.Fatalf("id %d twice", id)
		}
		seen[id] = true
	}
	return seen
}

func idRange(from, to int64) map[int64]bool {
	m := map[int64]bool{}
	for i := from; i < to; i++ {
		m[i] = true
	}
	return m
}

// Time travel returns exactly the rows of the snapshot asked for, by id,
// by time (epoch ms or RFC 3339), by tag and by branch.
func TestScanTimeTravel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range int64(3) {
		e.WriteIDs(fmt.Sprintf("f%d.parquet", i), i*100, 100)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.tt", "--checkpoint", e.Ckpt, "--max-files-per-trigger", "1")
	snaps := e.Snapshots("db.tt")
	if len(snaps) != 3 {
		t.Fatalf("%d snapshots, want 3", len(snaps))
	}
	for i, s := range snaps {
		want := idRange(0, int64(i+1)*100)
		sameIDs(t, fmt.Sprintf("snapshot %d", i), e.scanIDs("db.tt", "--snapshot-id", fmt.Sprint(s.SnapshotID)), want)
		sameIDs(t, fmt.Sprintf("as of snapshot %d", i), e.scanIDs("db.tt", "--as-of-timestamp", fmt.Sprint(s.TimestampMs)), want)
		rfc := time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339Nano)
		if n := strings.TrimSpace(e.OK("scan", "db.tt", "--count", "--as-of-timestamp", rfc).Stdout); n != fmt.Sprint((i+1)*100) {
			t.Fatalf("count as of %s = %s, want %d", rfc, n, (i+1)*100)
		}
	}
	r := e.Run("scan", "db.tt", "--as-of-timestamp", fmt.Sprint(snaps[0].TimestampMs-1000))
	if r.Code != 2 || !strings.Contains(r.Stderr, "had no snapshot at") {
		t.Fatalf("as of before the first snapshot: %s", r)
	}
	r = e.Run("scan", "db.tt", "--snapshot-id", "42")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no snapshot 42") {
		t.Fatalf("an unknown snapshot id: %s", r)
	}

	// A tag on the first snapshot, made as another engine would.
	ctx := context.Background()
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: e.Warehouse})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cat.CommitTable(ctx, table.Identifier{"db", "tt"}, nil,
		[]table.Update{table.NewSetSnapshotRefUpdate("first", snaps[0].SnapshotID, table.TagRef, -1, -1, -1)}); err != nil {
		t.Fatal(err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		c.Close()
	}
	sameIDs(t, "tag first", e.scanIDs("db.tt", "--tag", "first"), idRange(0, 100))
	sameIDs(t, "branch main", e.scanIDs("db.tt", "--branch", "main"), idRange(0, 300))
	r = e.Run("scan", "db.tt", "--branch", "first")
	if r.Code != 2 || !strings.Contains(r.Stderr, "is a tag, not a branch") {
		t.Fatalf("a tag as a branch: %s", r)
	}
	r = e.Run("scan", "db.tt", "--tag", "nope")
	if r.Code != 2 || !strings.Contains(r.Stderr, "it has: first") {
		t.Fatalf("an unknown tag: %s", r)
	}
}

func TestScanKeepDrop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.kd", "--checkpoint", e.Ckpt)
	for _, flags := range [][]string{{"--keep", "id"}, {"--drop", "v"}} {
		out := e.OK(append([]string{"scan", "db.kd", "--output-format", "csv"}, flags...)...).Stdout
		if lines := strings.Split(strings.TrimSpace(out), "\n"); lines[0] != "id" || len(lines) != 11 {
			t.Fatalf("%v printed %q", flags, out)
		}
	}
	if r := e.Run("scan", "db.kd", "--keep", "id", "--drop", "v"); r.Code != 2 {
		t.Fatalf("--keep with --drop: %s", r)
	}
}

// scan --format parquet writes the rows to a file any Parquet reader opens.
func TestScanToParquet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 50)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.out", "--checkpoint", e.Ckpt)
	path := filepath.Join(e.Dir, "out.parquet")
	e.OK("scan", "db.out", "--output-format", "parquet", "--output", path, "--keep", "id")
	tbl, err := fixture.ReadParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 50 || tbl.NumCols() != 1 || tbl.Schema().Field(0).Name != "id" {
		t.Fatalf("wrote %d rows of %v", tbl.NumRows(), tbl.Schema())
	}
	if r := e.Run("scan", "db.out", "--output-format", "parquet"); r.Code != 2 || !strings.Contains(r.Stderr, "--output") {
		t.Fatalf("parquet without --output: %s", r)
	}
}
