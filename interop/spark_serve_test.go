package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Spark as a REST client of `floe serve`: it reads what floe wrote (an
// append, an upsert table on v3 with deletion vectors and one on v2 with
// equality deletes, a branch), writes through it, and floe reads Spark's
// rows back; Spark's metadata tables (.snapshots, .files, .manifests,
// .refs, and _row_id lineage on v3) read without errors.
func TestSparkThroughServe(t *testing.T) {
	e := newEnv(t)
	s := needSpark(t)
	for i := range 3 {
		e.WriteIDs(fmt.Sprintf("ids-%d.parquet", i), int64(i*1000), 1000)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.ids", "--checkpoint", filepath.Join(e.Dir, "ck-ids"))
	// Upserts on both format versions.
	for _, v := range []string{"3", "2"} {
		g := fixture.NewCDCGen(uint64(40+int(v[0])), 2000)
		land := filepath.Join(e.Dir, "cdc"+v)
		if err := os.MkdirAll(land, 0o755); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			g.File(t, land, 800)
			e.OK("stream", "--source", land, "--format", "csv", "--table", "db.up"+v, "--checkpoint", filepath.Join(e.Dir, "ck-up"+v),
				"--mode", "upsert", "--identifier-fields", "id", "--op-column", "op", "--format-version", v)
		}
	}
	// A branch: main keeps the first files, the branch has one more.
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.br", "--checkpoint", filepath.Join(e.Dir, "ck-br"))
	e.WriteIDs("more/ids-z.parquet", 50_000, 500)
	e.OK("stream", "--source", filepath.Join(e.Landing, "more"), "--format", "parquet", "--table", "db.br",
		"--checkpoint", filepath.Join(e.Dir, "ck-audit"), "--branch", "audit")

	base, stop := serveFloe(t, e)
	cat := s.restCatalog(t, base, nil)
	for _, table := range []string{"db.ids", "db.up3", "db.up2", "db.br"} {
		e.sparkCompare(cat, sparkTable(table), table, e.describe(table))
		for _, meta := range []string{"snapshots", "files", "manifests", "refs", "history", "partitions"} {
			cat.rows(t, "SELECT * FROM "+sparkTable(table)+"."+meta)
		}
	}
	if got := cat.rows(t, "SELECT count(*) AS n FROM "+sparkTable("db.br")+" VERSION AS OF 'audit'"); len(got) != 1 || jsonInt(t, got[0]["n"]) != 3500 {
		t.Fatalf("Spark reads branch audit of db.br as %v, want 3500 rows", got)
	}
	// Row lineage: a v3 table's rows carry _row_id in Spark.
	lineage := cat.rows(t, "SELECT count(*) AS n, count(DISTINCT _row_id) AS ids FROM "+sparkTable("db.up3"))
	if n := jsonInt(t, lineage[0]["n"]); n == 0 || jsonInt(t, lineage[0]["ids"]) != n {
		t.Fatalf("Spark reads _row_id of db.up3 as %v; want one distinct id per row", lineage)
	}

	// Spark writes through floe serve; floe reads it.
	cat.sql(t, "CREATE TABLE "+sparkTable("db.sparkmade")+" (id bigint, v string) USING iceberg PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version'='3')")
	cat.sql(t, "INSERT INTO "+sparkTable("db.sparkmade")+" SELECT id, concat('v', id) FROM range(5000)")
	cat.sql(t, "DELETE FROM "+sparkTable("db.sparkmade")+" WHERE id % 10 = 0")
	e.sparkCompare(cat, sparkTable("db.sparkmade"), "db.sparkmade", e.describe("db.sparkmade"))
	if code := stop(); code != 0 {
		t.Fatalf("floe serve exited %d", code)
	}
}

// jsonInt reads a count from Spark's rows.
func jsonInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(interface{ Int64() (int64, error) })
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}
