package main_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// On a format-version 3 table an upsert of a key the table holds updates
// its row, as Spark's MERGE does: the row keeps its _row_id, and its
// _last_updated_sequence_number moves to the batch's commit. Ten batches
// of updates, deletes and inserts, then a compaction, which keeps both,
// then one more batch, which finds the ids in the compacted files; read
// by iceberg-go's scan with its row-lineage columns.
func TestUpsertKeepsRowLineage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(35, 300)
	o := fixture.NewLineageOracle()
	args := e.upsertArgs("--format-version", "3", "--maintenance=false")
	batch := func() {
		t.Helper()
		before := maps.Clone(g.Oracle)
		g.File(t, e.Landing, 150)
		e.OK(args...)
		if d := o.Batch(before, g.Oracle, e.TableLineage("db.t", "id")); d != "" {
			t.Fatalf("after batch %d: %s", g.Files-1, d)
		}
	}
	for range 11 {
		batch()
	}
	var res struct {
		Rewritten int `json:"rewritten_data_files"`
	}
	if err := json.Unmarshal([]byte(e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all", "--json").Stdout), &res); err != nil || res.Rewritten < 11 {
		t.Fatalf("the compaction rewrote %d data files (%v), want every batch's", res.Rewritten, err)
	}
	if d := o.Same(g.Oracle, e.TableLineage("db.t", "id")); d != "" {
		t.Fatalf("after the compaction: %s", d)
	}
	batch()
	// floe's own reader leaves the lineage columns out, as a plain
	// SELECT * does, and reads the rows.
	if scan := e.OK("scan", "db.t", "--format", "csv").Stdout; !strings.HasPrefix(scan, "id,v\n") {
		t.Fatalf("floe scan reads columns other than id and v:\n%.200s", scan)
	}
	if ids := e.IDs("db.t"); len(ids) != len(g.Oracle) {
		t.Fatalf("floe scan reads %d rows, want %d", len(ids), len(g.Oracle))
	}
	if o.Updated < 500 || o.Inserted < 200 {
		t.Fatalf("only %d updates and %d inserts checked", o.Updated, o.Inserted)
	}
}

// A running stream's copy of its table can name files that another
// writer's compaction replaced and an expiry removed since (another
// engine's, which does not protect the stream's snapshot as floe's
// does): the lookup before the write looks again in the table as it is,
// and the rows keep their ids.
func TestUpsertRowLineageAfterFilesExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := fixture.NewCDCGen(36, 300)
	o := fixture.NewLineageOracle()
	var stderr syncBuffer
	writer := e.startFloe(&stderr, e.upsertArgs("--format-version", "3", "--trigger", "50ms", "--maintenance=false")...)
	defer writer.Process.Kill()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stream's stderr:\n%s", stderr.String())
		}
	})
	batch := func(n int) {
		t.Helper()
		before := maps.Clone(g.Oracle)
		g.File(t, e.Landing, 150)
		fixture.WaitFor(t, 30*time.Second, fmt.Sprintf("batch %d", n), func() bool {
			r := e.Run("table", "snapshots", "db.t", "--json")
			var snaps []fixture.Snapshot
			if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &snaps) != nil {
				return false
			}
			return slices.ContainsFunc(snaps, func(s fixture.Snapshot) bool { return s.Summary["floe.batch-id"] == fmt.Sprint(n) })
		})
		if d := o.Batch(before, g.Oracle, e.TableLineage("db.t", "id")); d != "" {
			t.Fatalf("after batch %d: %s", n, d)
		}
	}
	batch(0)
	batch(1)
	var files []struct {
		Path string `json:"file_path"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "files", "db.t", "--json").Stdout), &files); err != nil {
		t.Fatal(err)
	}
	e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
	for _, f := range files {
		if err := os.Remove(strings.TrimPrefix(f.Path, "file://")); err != nil {
			t.Fatal(err)
		}
	}
	batch(2)
	if err := writer.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(writer.Wait()); code != 0 {
		t.Fatalf("stream exited %d", code)
	}
	if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
		t.Fatal(d)
	}
}
