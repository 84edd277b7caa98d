package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/variant"

	"github.com/floe-io/floe/internal/fixture"
)

// The types of format-version 3 (timestamp_ns, variant) end to end: from
// Parquet input, through the binary, read back by iceberg-go's scan. A
// first batch that fails leaves no table behind (issue: a table made with
// the wrong type refused every later run of the same input).

// landRecord writes rec as a Parquet file of the landing directory.
func (e *env) landRecord(name string, rec arrow.RecordBatch) {
	e.T.Helper()
	defer rec.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, name), rec); err != nil {
		e.T.Fatal(err)
	}
}

// wantValues fails unless iceberg-go reads column col of table as want, a
// value for each id from 0.
func (e *env) wantValues(table, col string, want []string) {
	e.T.Helper()
	got := e.TableKeyed(table, "id", col)
	if len(got) != len(want) {
		e.T.Fatalf("%s holds %d ids, want %d: %v", table, len(got), len(want), got)
	}
	for id, w := range want {
		if g := got[int64(id)]; len(g) != 1 || g[0] != w {
			e.T.Errorf("%s id %d: %s is %q, want %q", table, id, col, g, w)
		}
	}
}

// refusedNoTable fails unless a run failed (exit 1) naming what, and left
// table uncreated.
func (e *env) refusedNoTable(r fixture.Result, table string, what ...string) {
	e.T.Helper()
	if r.Code != 1 {
		e.T.Fatalf("want exit 1: %s", r)
	}
	for _, w := range what {
		if !strings.Contains(r.Stderr, w) {
			e.T.Fatalf("the error does not say %q: %s", w, r.Stderr)
		}
	}
	if d := e.Run("table", "describe", table); d.Code == 0 {
		e.T.Fatalf("the failed first batch left table %s behind:\n%s", table, d.Stdout)
	}
}

func variantRecord(t *testing.T, first int64, shredded bool, docs ...string) arrow.RecordBatch {
	t.Helper()
	rec, err := fixture.VariantRecord(first, shredded, docs...)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// tsStrings are the values as a column of unit prints them.
func tsStrings(unit arrow.TimeUnit, values ...int64) []string {
	rec := fixture.TimestampRecord(0, unit, values...)
	defer rec.Release()
	out := make([]string, len(values))
	for i := range out {
		out[i] = rec.Column(1).ValueStr(i)
	}
	return out
}

// Nanosecond timestamps make a timestamp_ns column, kept to the
// nanosecond, in a format-version 3 table. A format-version 2 table cannot
// hold them: that run fails before it creates the table, so the next run,
// told format-version 3, makes the right one. Microseconds appended later
// are converted exactly.
func TestV3TimestampNs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := []int64{1700000000123456789, 1700000000000000001, -1}
	e.landRecord("a.parquet", fixture.TimestampRecord(0, arrow.Nanosecond, ns...))
	e.refusedNoTable(e.Stream("db.t"), "db.t", `column "ts" is timestamp_ns`, "format-version 3")

	e.OK(e.StreamArgs("db.t", "--format-version", "3")...)
	e.landRecord("b.parquet", fixture.TimestampRecord(3, arrow.Microsecond, 1700000000123456))
	e.OK(e.StreamArgs("db.t")...)
	if f := e.fields("db.t"); f["ts"].Type != "timestamp_ns" {
		t.Fatalf("ts is %s, want timestamp_ns", f["ts"].Type)
	}
	e.wantValues("db.t", "ts", tsStrings(arrow.Nanosecond, append(ns, 1700000000123456000)...))
}

// Nanosecond input into a table's microsecond column: values that are
// whole microseconds convert exactly; one with digits below the
// microsecond fails its file, naming the column and the ways on, and
// nothing of it lands (Spark loses precision only when told to).
func TestV3NanosIntoMicros(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.landRecord("a.parquet", fixture.TimestampRecord(0, arrow.Microsecond, 1700000000123456))
	e.OK(e.StreamArgs("db.t")...)
	e.landRecord("b.parquet", fixture.TimestampRecord(1, arrow.Nanosecond, 1700000000000001000))
	e.OK(e.StreamArgs("db.t")...)
	e.landRecord("c.parquet", fixture.TimestampRecord(2, arrow.Nanosecond, 1700000000000000001))
	r := e.Stream("db.t")
	if r.Code != 1 || !strings.Contains(r.Stderr, `column "ts" holds nanosecond timestamps`) || !strings.Contains(r.Stderr, "timestamp_ns column of a format-version 3 table") {
		t.Fatalf("want the lossy file refused, naming the column and the fix: %s", r)
	}
	e.wantValues("db.t", "ts", tsStrings(arrow.Microsecond, 1700000000123456, 1700000000000001))
}

// Parquet variant columns, shredded or not, make a variant column of a
// format-version 3 table in the unshredded layout every reader takes; a
// format-version 2 table cannot hold one, and that run creates no table.
func TestV3VariantParquet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shredded := []string{`{"a":1,"b":"x"}`, `{"a":"not a long"}`, `[1,2,{"c":null}]`, ``, `null`}
	plain := []string{`{"a":2}`, `"text"`, `3.25`}
	e.landRecord("a.parquet", variantRecord(t, 0, true, shredded...))
	e.refusedNoTable(e.Stream("db.v"), "db.v", `column "v" is variant`, "format-version 3")

	e.OK(e.StreamArgs("db.v", "--format-version", "3")...)
	e.landRecord("b.parquet", variantRecord(t, int64(len(shredded)), false, plain...))
	e.OK(e.StreamArgs("db.v")...)
	if f := e.fields("db.v"); f["v"].Type != "variant" {
		t.Fatalf("v is %s, want variant", f["v"].Type)
	}
	var want []string
	for _, d := range append(shredded, plain...) {
		if d == "" {
			want = append(want, "(null)")
			continue
		}
		v, err := variant.ParseJSON(d, false)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v.String())
	}
	e.wantValues("db.v", "v", want)
}

// JSON values of any kind into a variant column: one declared in
// source.schema makes the table's, and a file read without a schema takes
// the table's variant column as it is, objects in one line and numbers in
// the next, where inference alone would refuse the mix. A JSON null is a
// variant null, an absent key a null row. timestamp_ns in
// source.schema keeps a JSON timestamp's nanoseconds.
func TestV3VariantJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pipeline := filepath.Join(e.Dir, "p.yaml")
	writeFile(t, pipeline, []byte(`source:
  path: ./landing
  format: json
  schema:
    - {name: id, type: long}
    - {name: doc, type: variant}
    - {name: at, type: timestamp_ns}
sink:
  table: db.j
  format-version: 3
trigger: available-now
checkpoint: ./ckpt
`))
	landLines(t, filepath.Join(e.Landing, "a.json"),
		`{"id": 0, "doc": {"a": 1, "b": [true, null, "x"], "c": {"d": 1.5}}, "at": "2024-01-02T03:04:05.123456789"}`,
		`{"id": 1, "doc": [1, 2, 3]}`,
		`{"id": 2, "doc": "text", "at": null}`,
		`{"id": 3, "doc": null}`,
		`{"id": 4}`)
	e.OK("run", pipeline)
	other := filepath.Join(e.Dir, "other")
	landLines(t, filepath.Join(other, "b.json"), `{"id": 5, "doc": {"z": "new"}}`, `{"id": 6, "doc": 42}`)
	e.OK("stream", "--source", other, "--format", "json", "--table", "db.j", "--checkpoint", e.Ckpt+"-other")
	want := []string{`{"a":1,"b":[true,null,"x"],"c":{"d":1.5}}`, `[1,2,3]`, `"text"`, "null", "(null)", `{"z":"new"}`, `42`}
	e.wantValues("db.j", "doc", want)
	if at := e.TableKeyed("db.j", "id", "at")[0]; len(at) != 1 || at[0] != tsStrings(arrow.Nanosecond, 1704164645123456789)[0] {
		t.Errorf("at of id 0 is %q, want its nanoseconds", at)
	}
}

// sink.column-defaults: schema evolution adds a column with its default as
// write-default and initial-default. Rows of files written before read the
// initial-default, an input without the column is written with the
// write-default, and a null that an input holds stays null. Defaults need
// format-version 3: asked of a v2 table they are refused, naming the fix.
func TestV3ColumnDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dirs := make([]string, 4)
	for i := range dirs {
		dirs[i] = filepath.Join(e.Dir, fmt.Sprintf("in%d", i))
	}
	run := func(i int, extra ...string) fixture.Result {
		return e.Run(append([]string{"stream", "--source", dirs[i], "--format", "json", "--table", "db.d",
			"--checkpoint", fmt.Sprintf("%s-%d", e.Ckpt, i), "--schema-evolution", "add-columns",
			"--column-default", "region=eu", "--column-default", "score=5"}, extra...)...)
	}
	landLines(t, filepath.Join(dirs[0], "a.json"), `{"id": 0, "name": "a"}`)
	if r := run(0, "--format-version", "2"); r.Code != 2 || !strings.Contains(r.Stderr, "sink.column-defaults") || !strings.Contains(r.Stderr, "format-version 3") {
		t.Fatalf("want defaults refused for format-version 2 (exit 2): %s", r)
	}
	if r := run(0, "--format-version", "3"); r.Code != 0 {
		t.Fatal(r)
	}
	landLines(t, filepath.Join(dirs[1], "b.json"), `{"id": 1, "name": "b", "region": "us", "score": 7}`)
	landLines(t, filepath.Join(dirs[2], "c.json"), `{"id": 2, "name": "c"}`)
	landLines(t, filepath.Join(dirs[3], "d.json"), `{"id": 3, "name": "d", "region": null}`)
	for i := 1; i < 4; i++ {
		if r := run(i); r.Code != 0 {
			t.Fatal(r)
		}
	}
	e.wantValues("db.d", "region", []string{"eu", "us", "eu", ""})
	e.wantValues("db.d", "score", []string{"5", "7", "5", "5"})

	ctx := context.Background()
	sc := e.loadTable(ctx, e.catalog(ctx), "db.d").Schema()
	for name, want := range map[string]any{"region": "eu", "score": float64(5)} {
		f, ok := sc.FindFieldByName(name)
		if !ok || f.InitialDefault != want || f.WriteDefault != want {
			t.Errorf("column %s: initial-default %v, write-default %v, want %v", name, f.InitialDefault, f.WriteDefault, want)
		}
	}
}
