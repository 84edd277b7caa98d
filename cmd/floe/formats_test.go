package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// CSV and JSON lines sources ingest with the types docs/formats.md
// documents; complete mode replaces the table; the Hadoop-directory catalog
// runs the article scenario.

type fieldInfo struct {
	Type     string // Iceberg type, nested types as list<...>, struct<name: type, ...>
	Required bool
	pos      int
}

// fields reads `floe table describe --json` and returns the table's columns
// by name; extra flags select the catalog.
func (e *env) fields(table string, extra ...string) map[string]fieldInfo {
	e.T.Helper()
	r := e.OK(append([]string{"table", "describe", table, "--json"}, extra...)...)
	var d struct {
		Schema struct {
			Fields []struct {
				Name     string          `json:"name"`
				Type     json.RawMessage `json:"type"`
				Required bool            `json:"required"`
			} `json:"fields"`
		} `json:"schema"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("describe --json: %v\n%s", err, r.Stdout)
	}
	out := map[string]fieldInfo{}
	for i, f := range d.Schema.Fields {
		out[f.Name] = fieldInfo{Type: icebergType(f.Type), Required: f.Required, pos: i}
	}
	return out
}

// icebergType renders a schema JSON type compactly.
func icebergType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var t struct {
		Type    string          `json:"type"`
		Element json.RawMessage `json:"element"`
		Key     json.RawMessage `json:"key"`
		Value   json.RawMessage `json:"value"`
		Fields  []struct {
			Name string          `json:"name"`
			Type json.RawMessage `json:"type"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return string(raw)
	}
	switch t.Type {
	case "list":
		return "list<" + icebergType(t.Element) + ">"
	case "map":
		return "map<" + icebergType(t.Key) + ", " + icebergType(t.Value) + ">"
	case "struct":
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ": " + icebergType(f.Type)
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	}
	return string(raw)
}

// checkSchema compares the table's columns, in order, with want (name and
// type; a trailing " required" marks required columns).
func checkSchema(t *testing.T, got map[string]fieldInfo, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("table has %d columns, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		name, typ, _ := strings.Cut(w, " ")
		typ, required := strings.CutSuffix(typ, " required")
		f, ok := got[name]
		switch {
		case !ok:
			t.Errorf("column %s missing; columns are %v", name, got)
		case f.Type != typ || f.Required != required || f.pos != i:
			t.Errorf("column %s: type %s required=%v at %d; want %s required=%v at %d", name, f.Type, f.Required, f.pos, typ, required, i)
		}
	}
}

// rows scans the table as JSON lines and returns each row re-encoded with
// sorted keys, so rows compare as strings.
func (e *env) rows(table string, extra ...string) []string {
	e.T.Helper()
	r := e.OK(append([]string{"scan", table, "--output-format", "jsonl"}, extra...)...)
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.UseNumber()
	var out []string
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			e.T.Fatalf("scan jsonl: %v\n%s", err, r.Stdout)
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// checkRows compares rows in any order: a scan of several data files need
// not return them in commit order.
func checkRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows differ\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func (e *env) streamFormat(format, table string, extra ...string) fixture.Result {
	e.T.Helper()
	return e.OK(append([]string{"stream", "--source", e.Landing, "--format", format, "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now"}, extra...)...)
}

// CSV with a header: every column's type is inferred from all its values;
// empty values are nulls.
func TestFormatCSVInference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Landing, "infer.csv"), []byte(`id,price,ok,day,at,at_tz,clock,name,code,empty
1,1.5,true,2024-01-02,2024-01-02 03:04:05,2024-01-02T03:04:05Z,12:30:00,alice,007,
2,,false,,2024-01-03T10:00:00.123456,,,"bob, jr",n/a,
,3,TRUE,2024-02-29,,2024-01-02T03:04:05+02:00,08:00:00.25,,42,
`))
	e.streamFormat("csv", "db.csv")
	checkSchema(t, e.fields("db.csv"),
		"id long", "price double", "ok boolean", "day date", "at timestamp", "at_tz timestamptz",
		"clock time", "name string", "code string", "empty string")
	checkRows(t, e.rows("db.csv"),
		`{"at":"2024-01-02T03:04:05","at_tz":"2024-01-02T03:04:05Z","clock":"12:30:00","code":"007","day":"2024-01-02","empty":null,"id":1,"name":"alice","ok":true,"price":1.5}`,
		`{"at":"2024-01-03T10:00:00.123456","at_tz":null,"clock":null,"code":"n/a","day":null,"empty":null,"id":2,"name":"bob, jr","ok":false,"price":null}`,
		`{"at":null,"at_tz":"2024-01-02T01:04:05Z","clock":"08:00:00.25","code":"42","day":"2024-02-29","empty":null,"id":null,"name":null,"ok":true,"price":3}`)
}

// A value that looks like a boolean, date, time or timestamp but does not
// parse as one makes the column a string column; it does not fail the file.
func TestFormatCSVInferenceFallsBackToString(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Landing, "x.csv"), []byte("id,t,d,ts,ok_ts,b,ok_b\n1,10:00:00,2024-02-28,2024-01-01 10:00,2024-01-01 10:00,true,True\n2,25:00:00,2024-02-30,2024-01-01 25:61,2024-01-01T11:30:15.5,tRuE,FALSE\n"))
	e.streamFormat("csv", "db.temporal")
	checkSchema(t, e.fields("db.temporal"), "id long", "t string", "d string", "ts string", "ok_ts timestamp", "b string", "ok_b boolean")
	checkRows(t, e.rows("db.temporal"),
		`{"b":"true","d":"2024-02-28","id":1,"ok_b":true,"ok_ts":"2024-01-01T10:00:00","t":"10:00:00","ts":"2024-01-01 10:00"}`,
		`{"b":"tRuE","d":"2024-02-30","id":2,"ok_b":false,"ok_ts":"2024-01-01T11:30:15.5","t":"25:00:00","ts":"2024-01-01 25:61"}`)
}

// Inference is per file: a later file in which a column is empty throughout
// (no type to infer) or holds only integers still fits the table.
func TestFormatCSVLaterFileTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Landing, "a.csv"), []byte("id,price,at,clock\n1,1.5,2024-01-02 03:04:05,12:00:00\n"))
	e.streamFormat("csv", "db.later")
	writeFile(t, filepath.Join(e.Landing, "b.csv"), []byte("id,price,at,clock\n2,,,\n3,,,\n"))
	writeFile(t, filepath.Join(e.Landing, "c.csv"), []byte("id,price,at,clock\n4,7,,\n"))
	e.streamFormat("csv", "db.later")
	checkSchema(t, e.fields("db.later"), "id long", "price double", "at timestamp", "clock time")
	if n := e.Count("db.later"); n != 4 {
		t.Fatalf("rows = %d, want 4", n)
	}
	got := strings.Join(e.rows("db.later"), "\n")
	for _, w := range []string{
		`{"at":null,"clock":null,"id":2,"price":null}`,
		`{"at":null,"clock":null,"id":4,"price":7}`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("row %s missing from\n%s", w, got)
		}
	}
}

// An explicit schema (source.schema in the pipeline file) fixes every
// column's type, required columns included.
func TestFormatCSVExplicitSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("csv-schema"))
	checkSchema(t, e.fields("db.typed"),
		"id long required", "qty int", "price decimal(10, 2)", "ratio float", "score double", "ok boolean",
		"day date", "t time", "at timestamp", "at_tz timestamptz", "name string")
	checkRows(t, e.rows("db.typed"),
		`{"at":"2024-01-02T03:04:05","at_tz":"2024-01-02T03:04:05Z","day":"2024-01-02","id":1,"name":"alice","ok":true,"price":"19.99","qty":3,"ratio":0.5,"score":1000,"t":"12:30:00"}`,
		`{"at":null,"at_tz":null,"day":null,"id":2,"name":null,"ok":false,"price":"5","qty":null,"ratio":null,"score":null,"t":null}`,
		`{"at":"2024-02-29T23:59:59.123456","at_tz":"2024-02-29T21:59:59Z","day":"2024-02-29","id":3,"name":"bob, jr","ok":true,"price":"0.1","qty":7,"ratio":1.25,"score":-2.5,"t":"23:59:59.5"}`)
}

// `floe scan --format csv` prints a table with a time column.
func TestFormatScanCSVTimeColumn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("csv-schema"))
	r := e.Run("scan", "db.typed", "--output-format", "csv")
	if r.Code != 0 || !strings.Contains(r.Stdout, "12:30:00") || !strings.Contains(r.Stdout, "19.99") || !strings.Contains(r.Stdout, "0.10") {
		t.Fatalf("scan --format csv of a table with time and decimal columns: %s", r)
	}
}

// A different delimiter (source.csv.delimiter); quoted fields may hold it.
func TestFormatCSVDelimiter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("csv-delimiter"))
	checkSchema(t, e.fields("db.semicolon"), "id long", "label string", "amount double")
	checkRows(t, e.rows("db.semicolon"),
		`{"amount":1.5,"id":1,"label":"a,b"}`,
		`{"amount":2,"id":2,"label":"x;y"}`,
		`{"amount":null,"id":3,"label":null}`)
}

// Without a header row the schema names the columns in file order.
func TestFormatCSVHeaderless(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("csv-headerless"))
	checkSchema(t, e.fields("db.headerless"), "id long", "city string", "ok boolean")
	checkRows(t, e.rows("db.headerless"),
		`{"city":"Oslo","id":1,"ok":true}`,
		`{"city":"Rome","id":2,"ok":false}`)
}

// JSON lines: integers, floats (mixed with integers: double), booleans,
// strings, objects (struct), arrays (list), nulls.
func TestFormatJSONInference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Landing, "infer.json"), []byte(`{"id":1,"price":1,"ok":true,"name":"a","tags":["x","y"],"addr":{"zip":123,"city":"Oslo"},"score":2.5,"note":null,"n":[1,2.5]}
{"id":2,"price":2.25,"ok":false,"name":"b","tags":[],"addr":{"city":"Rome"},"score":null}

{"name":null,"id":3,"price":3,"tags":null,"addr":null,"extra":"late"}
`))
	e.streamFormat("json", "db.json")
	checkSchema(t, e.fields("db.json"),
		"id long", "price double", "ok boolean", "name string", "tags list<string>",
		"addr struct<city: string, zip: long>", "score double", "note string", "n list<double>", "extra string")
	checkRows(t, e.rows("db.json"),
		`{"addr":{"city":"Oslo","zip":123},"extra":null,"id":1,"n":[1,2.5],"name":"a","note":null,"ok":true,"price":1,"score":2.5,"tags":["x","y"]}`,
		`{"addr":{"city":"Rome","zip":null},"extra":null,"id":2,"n":null,"name":"b","note":null,"ok":false,"price":2.25,"score":null,"tags":[]}`,
		`{"addr":null,"extra":"late","id":3,"n":null,"name":null,"note":null,"ok":null,"price":3,"score":null,"tags":null}`)

	// A later file whose values are all null, or integers where the table
	// has doubles, still fits.
	writeFile(t, filepath.Join(e.Landing, "later.json"), []byte(`{"id":4,"price":null,"ok":null,"name":null,"score":7}`+"\n"))
	e.streamFormat("json", "db.json")
	rows := e.rows("db.json")
	if len(rows) != 4 || !strings.Contains(strings.Join(rows, "\n"), `"id":4,"n":null,"name":null,"note":null,"ok":null,"price":null,"score":7,`) {
		t.Fatalf("later file not ingested as expected:\n%s", strings.Join(rows, "\n"))
	}
}

// A field holding values of two JSON kinds is refused with the fix.
func TestFormatJSONConflictingKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := filepath.Join(e.Landing, "mixed.json")
	writeFile(t, p, []byte("{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":3}\n"))
	r := e.Run("stream", "--source", e.Landing, "--format", "json", "--table", "db.mixed", "--checkpoint", e.Ckpt)
	if r.Code != 1 || !strings.Contains(r.Stderr, p) || !strings.Contains(r.Stderr, "line 2: field v holds both string and number values; give the column a type in source.schema") {
		t.Fatalf("want exit 1 naming the file, line and field, got %s", r)
	}
}

// JSON lines with an explicit schema: numbers take the declared types,
// absent keys are nulls, key order does not matter.
func TestFormatJSONExplicitSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.OK("run", e.usePipeline("json-schema"))
	checkSchema(t, e.fields("db.jsontyped"), "id long required", "score double", "qty int", "at timestamp", "tag string")
	checkRows(t, e.rows("db.jsontyped"),
		`{"at":"2024-01-02T03:04:05","id":1,"qty":2,"score":1,"tag":"a"}`,
		`{"at":null,"id":2,"qty":null,"score":2.5,"tag":null}`,
		`{"at":"2024-02-29T23:59:59.123456","id":3,"qty":null,"score":null,"tag":"c"}`)
}

// --mode complete: each batch replaces the table's contents.
func TestCompleteMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	table := "db.complete"
	e.WriteIDs("a.parquet", 0, 1000)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n := e.Count(table); n != 1000 {
		t.Fatalf("after file A: %d rows, want 1000", n)
	}
	e.WriteIDs("b.parquet", 10000, 500)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n := e.Count(table); n != 500 {
		t.Fatalf("after file B: %d rows, want exactly B's 500", n)
	}
	ids := e.IDs(table)
	for id := int64(10000); id < 10500; id++ {
		if !ids[id] {
			t.Fatalf("id %d of file B missing", id)
		}
	}
	if len(ids) != 500 {
		t.Fatalf("%d distinct ids, want 500 (none of file A)", len(ids))
	}
	snaps := e.Snapshots(table)
	if len(snaps) != 2 {
		t.Fatalf("snapshots = %+v, want 2", snaps)
	}
	if snaps[1].Operation != "overwrite" {
		t.Errorf("second snapshot operation = %q, want overwrite", snaps[1].Operation)
	}
	if snaps[1].ParentID == nil || *snaps[1].ParentID != snaps[0].SnapshotID {
		t.Errorf("second snapshot's parent = %v, want %d", snaps[1].ParentID, snaps[0].SnapshotID)
	}
	if snaps[1].Summary["floe.batch-id"] != "1" {
		t.Errorf("second snapshot floe.batch-id = %q, want 1", snaps[1].Summary["floe.batch-id"])
	}
	// Only B's data file is live.
	r := e.OK("table", "files", table, "--json")
	var files []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil {
		t.Fatalf("table files --json: %v\n%s", err, r.Stdout)
	}
	if len(files) != 1 {
		t.Errorf("live data files = %d, want 1:\n%s", len(files), r.Stdout)
	}

	// A re-run with nothing new leaves the table alone.
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", table, "--checkpoint", e.Ckpt, "--trigger", "available-now", "--mode", "complete")
	if n, s := e.Count(table), len(e.Snapshots(table)); n != 500 || s != 2 {
		t.Fatalf("after a re-run: %d rows, %d snapshots; want 500 and 2", n, s)
	}
}

// Complete mode replaces the table with each batch, so a rate limit would
// leave only the last slice of the input: floe refuses the combination.
func TestCompleteModeRefusesRateLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 1000)
	r := e.Stream("db.complete2", "--trigger", "available-now", "--mode", "complete", "--max-files-per-trigger", "1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "max-files-per-trigger") || !strings.Contains(r.Stderr, "complete") {
		t.Fatalf("want exit 2 naming the conflict, got %s", r)
	}
	if r := e.Run("scan", "db.complete2", "--count"); r.Code == 0 {
		t.Fatalf("a table was written: %s", r.Stdout)
	}
}

// The Hadoop-directory catalog (--catalog-type hadoop) runs the article
// scenario: three files, one snapshot; a re-run adds nothing; a fourth file
// makes a second snapshot. The table is a directory with a version hint.
func TestHadoopCatalog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hadoop := []string{"--catalog-type", "hadoop"}
	stream := func() {
		e.T.Helper()
		e.OK(append([]string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.stream", "--checkpoint", e.Ckpt, "--trigger", "available-now"}, hadoop...)...)
	}
	count := func() int64 {
		t.Helper()
		r := e.OK(append([]string{"scan", "db.stream", "--count"}, hadoop...)...)
		n, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
		if err != nil {
			t.Fatalf("scan --count printed %q", r.Stdout)
		}
		return n
	}
	snapshots := func() []fixture.Snapshot {
		t.Helper()
		r := e.OK(append([]string{"table", "snapshots", "db.stream", "--json"}, hadoop...)...)
		var out []fixture.Snapshot
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("snapshots --json: %v\n%s", err, r.Stdout)
		}
		return out
	}

	for i := int64(0); i < 3; i++ {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), i*1000, 1000)
	}
	stream()
	snaps := snapshots()
	if n := count(); n != 3000 || len(snaps) != 1 || snaps[0].Operation != "append" {
		t.Fatalf("after the first run: %d rows, snapshots %+v; want 3000 and one append", n, snaps)
	}
	if snaps[0].Summary["floe.query-id"] == "" || snaps[0].Summary["floe.batch-id"] != "0" {
		t.Fatalf("summary lacks floe.query-id/floe.batch-id: %v", snaps[0].Summary)
	}
	stream()
	if n, s := count(), len(snapshots()); n != 3000 || s != 1 {
		t.Fatalf("after a re-run: %d rows, %d snapshots; want 3000 and 1", n, s)
	}
	e.WriteIDs("part-3.parquet", 3000, 1000)
	stream()
	if n, s := count(), len(snapshots()); n != 4000 || s != 2 {
		t.Fatalf("after a fourth file: %d rows, %d snapshots; want 4000 and 2", n, s)
	}
	r := e.OK(append([]string{"scan", "db.stream", "--output-format", "csv"}, hadoop...)...)
	if lines := strings.Count(strings.TrimSpace(r.Stdout), "\n"); lines != 4000 {
		t.Fatalf("scan printed %d rows, want 4000", lines)
	}

	// The table is a Hadoop table directory: <warehouse>/db/stream with
	// metadata/version-hint.text naming the current metadata version.
	var d struct {
		Location         string `json:"location"`
		MetadataLocation string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(e.OK(append([]string{"table", "describe", "db.stream", "--json"}, hadoop...)...).Stdout), &d); err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimPrefix(d.Location, "file://")
	if !strings.HasPrefix(dir, e.Warehouse+string(filepath.Separator)) {
		t.Errorf("table location %s is not under the warehouse %s", d.Location, e.Warehouse)
	}
	hint, err := os.ReadFile(filepath.Join(dir, "metadata", "version-hint.text"))
	if err != nil {
		t.Fatalf("no version hint: %v", err)
	}
	v := strings.TrimSpace(string(hint))
	if _, err := strconv.Atoi(v); err != nil || !strings.Contains(filepath.Base(d.MetadataLocation), v) {
		t.Errorf("version-hint.text = %q, current metadata %s", hint, d.MetadataLocation)
	}
	// No SQL catalog was involved.
	if _, err := os.Stat(filepath.Join(e.Warehouse, "catalog.db")); err == nil {
		t.Errorf("catalog.db exists: a command used the SQL catalog")
	}
}

// With an explicit schema, the header of each file is matched to the schema
// by name: files may list the columns in another order, or leave optional
// ones out; a column the schema lacks is refused.
func TestFormatCSVExplicitSchemaHeaderOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Dir, "p.yaml"), []byte(`source:
  path: ./landing
  format: csv
  schema:
    - {name: id, type: long, required: true}
    - {name: ok, type: boolean}
    - {name: day, type: date}
    - {name: note, type: string}
sink:
  table: db.order
checkpoint: ./ckpt
`))
	writeFile(t, filepath.Join(e.Landing, "a.csv"), []byte("ok,day,id,note\nT,2024-01-02,1,x\n"))
	e.OK("run", "p.yaml")
	checkSchema(t, e.fields("db.order"), "id long required", "ok boolean", "day date", "note string")
	writeFile(t, filepath.Join(e.Landing, "b.csv"), []byte("note, id\ny,2\n"))
	e.OK("run", "p.yaml")
	checkRows(t, e.rows("db.order"),
		`{"day":"2024-01-02","id":1,"note":"x","ok":true}`,
		`{"day":null,"id":2,"note":"y","ok":null}`)

	bad := filepath.Join(e.Landing, "c.csv")
	writeFile(t, bad, []byte("id,colour\n3,blue\n"))
	r := e.Run("run", "p.yaml")
	if r.Code != 1 || !strings.Contains(r.Stderr, bad) || !strings.Contains(r.Stderr, `column "colour" of the header is not in source.schema`) {
		t.Fatalf("want exit 1 naming the file and the unknown column, got %s", r)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	bad = filepath.Join(e.Landing, "d.csv")
	writeFile(t, bad, []byte("ok,note\ntrue,z\n"))
	r = e.Run("run", "p.yaml")
	if r.Code != 1 || !strings.Contains(r.Stderr, bad) || !strings.Contains(r.Stderr, `required column "id" of source.schema is missing from the header`) {
		t.Fatalf("want exit 1 naming the file and the missing required column, got %s", r)
	}
}

// Later JSON files may leave nested keys out, hold only nulls in them, or
// hold empty lists: they still fit the table. A nested key the table lacks
// is refused.
func TestFormatJSONNestedLaterFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.Landing, "a.json"), []byte(`{"id":1,"addr":{"city":"Oslo","zip":1},"tags":["a"],"pts":[{"x":1,"y":2}]}`+"\n"))
	e.streamFormat("json", "db.nested")
	writeFile(t, filepath.Join(e.Landing, "b.json"), []byte(`{"id":2,"addr":{"city":"Rome","zip":null},"tags":[],"pts":[{"x":3}]}
{"id":3,"addr":{"city":"Bern"},"pts":[{"y":4}]}
{"id":4,"tags":[null],"addr":null,"pts":[]}
`))
	writeFile(t, filepath.Join(e.Landing, "c.json"), []byte(`{"id":5,"addr":null,"tags":null}`+"\n"))
	e.streamFormat("json", "db.nested")
	checkSchema(t, e.fields("db.nested"), "id long", "addr struct<city: string, zip: long>", "tags list<string>", "pts list<struct<x: long, y: long>>")
	got := e.rows("db.nested")
	for _, w := range []string{
		`{"addr":{"city":"Oslo","zip":1},"id":1,"pts":[{"x":1,"y":2}],"tags":["a"]}`,
		`{"addr":{"city":"Rome","zip":null},"id":2,"pts":[{"x":3,"y":null}],"tags":[]}`,
		`{"addr":{"city":"Bern","zip":null},"id":3,"pts":[{"x":null,"y":4}],"tags":null}`,
		`{"addr":null,"id":4,"pts":[],"tags":[null]}`,
		`{"addr":null,"id":5,"pts":null,"tags":null}`,
	} {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("row %s missing from\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != 5 {
		t.Errorf("%d rows, want 5", len(got))
	}

	bad := filepath.Join(e.Landing, "d.json")
	writeFile(t, bad, []byte(`{"id":6,"addr":{"city":"Bern","moon":1}}`+"\n"))
	r := e.Run("stream", "--source", e.Landing, "--format", "json", "--table", "db.nested", "--checkpoint", e.Ckpt)
	if r.Code != 1 || !strings.Contains(r.Stderr, bad) || !strings.Contains(r.Stderr, `column "addr"`) || !strings.Contains(r.Stderr, "moon") {
		t.Fatalf("want exit 1 naming the file, the column and the extra nested key, got %s", r)
	}
}

// The table format collects rows before it aligns them: each value it
// keeps must be its own copy, since the scan reuses a record's memory once
// the record is released (the Makefile's test run poisons freed memory).
func TestFormatScanTableKeepsValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 200, nil)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.regions", "--checkpoint", e.Ckpt)
	lines := strings.Split(strings.TrimSpace(e.OK("scan", "db.regions").Stdout), "\n")
	rows := 0
	for _, l := range lines[2:] {
		cells := strings.Split(l, " | ")
		if len(cells) < 2 {
			continue // the "(N rows)" footer
		}
		id, err := strconv.ParseInt(strings.TrimSpace(cells[0]), 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		if got, want := strings.TrimSpace(cells[1]), regions[id%int64(len(regions))]; got != want {
			t.Fatalf("row %d prints region %q, want %q", id, got, want)
		}
		rows++
	}
	if rows != 200 {
		t.Fatalf("%d rows printed, want 200:\n%s", rows, strings.Join(lines, "\n"))
	}
}
