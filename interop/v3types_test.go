package interop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Spark 4.0 with Iceberg 1.10 reads format-version 3's types as floe
// writes them: variant columns, from Parquet variants shredded or not and
// from JSON values, give the documents written; a column that schema
// evolution added with a default gives its initial-default for rows of
// files written before and the write-default floe wrote for inputs without
// it. Iceberg 1.10's Spark runtime refuses to load a table with a
// timestamp_ns column, so those are read by iceberg-go (cmd/floe).
func TestSparkV3Types(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := needSpark(t)

	// Keys sorted, as a variant object keeps them.
	shredded := []string{`{"a":1,"b":"x"}`, `{"a":"not a long","c":[1,2]}`, `[1,{"c":null}]`, ``, `null`}
	rec, err := fixture.VariantRecord(0, true, shredded...)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.WriteParquet(filepath.Join(e.Landing, "a.parquet"), rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.var", "--checkpoint", e.Ckpt, "--format-version", "3")
	json := []string{`{"id":5,"v":{"x":{"y":true}}}`, `{"id":6,"v":"text"}`, `{"id":7,"v":42}`}
	e.OK(e.jsonStream(t, "db.var", "j", []string{"--check-nullability=false"}, json...)...)

	want := append(shredded, `{"x":{"y":true}}`, `"text"`, `42`)
	got := e.sparkCatalog(s).rows(t, "SELECT id, to_json(v) AS v FROM "+sparkTable("db.var")+" ORDER BY id")
	if len(got) != len(want) {
		t.Fatalf("Spark reads %d rows of db.var, want %d: %v", len(got), len(want), got)
	}
	for i, r := range got {
		w := any(want[i])
		if want[i] == "" {
			w = nil
		}
		if fmt.Sprint(r["id"]) != fmt.Sprint(i) || r["v"] != w {
			t.Errorf("Spark reads row %d of db.var as %v, want v %v", i, r, w)
		}
	}

	defaults := []string{"--schema-evolution", "add-columns", "--column-default", "region=eu", "--column-default", "score=5"}
	e.OK(e.jsonStream(t, "db.def", "d0", append(defaults, "--format-version", "3"), `{"id":0,"name":"a"}`)...)
	e.OK(e.jsonStream(t, "db.def", "d1", defaults, `{"id":1,"name":"b","region":"us","score":7}`)...)
	e.OK(e.jsonStream(t, "db.def", "d2", defaults, `{"id":2,"name":"c"}`)...)
	e.OK(e.jsonStream(t, "db.def", "d3", defaults, `{"id":3,"name":"d","region":null}`)...)
	rows := e.sparkCatalog(s).rows(t, "SELECT id, region, score FROM "+sparkTable("db.def")+" ORDER BY id")
	wantRows := []string{"0 eu 5", "1 us 7", "2 eu 5", "3 <nil> 5"}
	if len(rows) != len(wantRows) {
		t.Fatalf("Spark reads %v of db.def, want %v", rows, wantRows)
	}
	for i, r := range rows {
		if g := fmt.Sprint(r["id"], " ", r["region"], " ", r["score"]); g != wantRows[i] {
			t.Errorf("Spark reads row %d of db.def as %s, want %s", i, g, wantRows[i])
		}
	}
}

// jsonStream lands lines as a JSON-lines file in a directory of its own
// (dir, under the env's) and returns the arguments of a stream of it into
// table, with a checkpoint of its own.
func (e *env) jsonStream(t *testing.T, table, dir string, extra []string, lines ...string) []string {
	t.Helper()
	src := filepath.Join(e.Dir, dir)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "in.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return append([]string{"stream", "--source", src, "--format", "json", "--table", table, "--checkpoint", e.Ckpt + "-" + dir}, extra...)
}
