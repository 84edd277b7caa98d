package interop_test

import (
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// The CDC scenario written by floe in mode upsert (20 files of random
// changes over 10,000 keys, one batch each), read back by the independent
// readers: icebird and DuckDB on the format-version 2 table (equality
// deletes), DuckDB with our deletion-vector decoder on the format-version
// 3 one. They must hold the oracle's rows after every batch.
func TestUpsertCDCIndependentReaders(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"3", "2"} {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := fixture.NewCDCGen(uint64(20+int(v[0])), 10_000)
			for i := range 20 {
				// Spark reads the last state, or every fifth with -spark-all.
				e.sparkOff = i != 19 && (!*sparkAll || i%5 != 4)
				g.File(t, e.Landing, 1500)
				e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
					"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op", "--format-version", v)
				want := make(map[int64]row, len(g.Oracle))
				for id, val := range g.Oracle {
					want[id] = row{"v": val}
				}
				e.checkRows("db.t", want)
			}
		})
	}
}
