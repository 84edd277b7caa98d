package main_test

import (
	"encoding/json"
	"maps"
	"testing"

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
	if o.Updated < 500 || o.Inserted < 200 {
		t.Fatalf("only %d updates and %d inserts checked", o.Updated, o.Inserted)
	}
}
