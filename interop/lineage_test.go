package interop_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Spark reads the row lineage that floe's upserts keep on a format-version
// 3 table: after each of ten batches of updates, deletes and inserts, every
// updated row has the _row_id it was inserted with and the batch's
// _last_updated_sequence_number, every other row its own; a compaction
// changes neither, and a batch after it finds the ids in the compacted
// files.
func TestSparkUpsertRowLineage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := needSpark(t)
	cat := e.sparkCatalog(s)
	g := fixture.NewCDCGen(53, 400)
	o := fixture.NewLineageOracle()
	read := func() map[int64][]fixture.Lineage {
		t.Helper()
		out := map[int64][]fixture.Lineage{}
		for _, r := range cat.rows(t, "SELECT id, _row_id, _last_updated_sequence_number FROM "+sparkTable("db.t")) {
			var v [3]int64
			for i, c := range []string{"id", "_row_id", "_last_updated_sequence_number"} {
				n, ok := r[c].(json.Number)
				var err error
				if ok {
					v[i], err = n.Int64()
				}
				if !ok || err != nil {
					t.Fatalf("Spark reads %s of db.t as %v", c, r)
				}
			}
			out[v[0]] = append(out[v[0]], fixture.Lineage{RowID: v[1], Seq: v[2]})
		}
		return out
	}
	batch := func() {
		t.Helper()
		before := maps.Clone(g.Oracle)
		g.File(t, e.Landing, 200)
		e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
			"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op", "--format-version", "3", "--maintenance=false")
		if d := o.Batch(before, g.Oracle, read()); d != "" {
			t.Fatalf("Spark reads, after batch %d: %s", g.Files-1, d)
		}
	}
	for range 11 {
		batch()
	}
	e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
	if d := o.Same(g.Oracle, read()); d != "" {
		t.Fatalf("Spark reads, after the compaction: %s", d)
	}
	batch()
	if o.Updated < 500 {
		t.Fatalf("only %d updates checked", o.Updated)
	}
}
