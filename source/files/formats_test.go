package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
	"github.com/floe-io/floe/source"
)

// CSV and JSON lines files land in tables with the types docs/formats.md
// documents, checked on the table a pipeline creates and on the rows a
// scan of it returns (as `floe scan --output-format jsonl` prints them).

// pipelineDir is a landing directory, a checkpoint and the embedded catalog
// of a warehouse, for pipelines run in-process as `floe stream` and `floe
// run` run them.
type pipelineDir struct {
	t                        *testing.T
	landing, ckpt, warehouse string
	// source, when set, is the landing zone instead of landing (an
	// object-store prefix), reached with the catalog properties props.
	source string
	props  map[string]string
}

func newPipelineDir(t *testing.T) *pipelineDir {
	t.Helper()
	dir := t.TempDir()
	d := &pipelineDir{t: t, landing: filepath.Join(dir, "landing"), ckpt: filepath.Join(dir, "ckpt"), warehouse: filepath.Join(dir, "warehouse")}
	if err := os.MkdirAll(d.landing, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// land writes a file into the landing directory and returns its path.
func (d *pipelineDir) land(name, content string) string {
	d.t.Helper()
	p := filepath.Join(d.landing, name)
	if err := fixture.Land(p, []byte(content)); err != nil {
		d.t.Fatal(err)
	}
	return p
}

// run runs cfg over the directory's landing files, checkpoint and
// warehouse until the input available at the start is in the table.
func (d *pipelineDir) run(cfg *config.Pipeline) error {
	d.t.Helper()
	cfg.Source.Path, cfg.Checkpoint, cfg.Catalog.Warehouse = d.landing, d.ckpt, d.warehouse
	if d.source != "" {
		cfg.Source.Path, cfg.Catalog.Properties = d.source, d.props
	}
	cfg.Trigger = config.Trigger{Kind: config.TriggerAvailableNow}
	cfg.SetDefaults()
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{})
	if err != nil {
		return err
	}
	_, err = p.Run(ctx)
	return errors.Join(err, p.Close())
}

// stream is `floe stream --format FORMAT --table TABLE --trigger
// available-now` with the source options of src.
func (d *pipelineDir) stream(src config.Source, name string) error {
	d.t.Helper()
	return d.run(&config.Pipeline{Source: src, Sink: config.Sink{Table: name}})
}

// mustStream is stream that fails the test on an error.
func (d *pipelineDir) mustStream(src config.Source, name string) {
	d.t.Helper()
	if err := d.stream(src, name); err != nil {
		d.t.Fatal(err)
	}
}

// runFile runs a pipeline file's text, its paths replaced by the
// directory's.
func (d *pipelineDir) runFile(text string) error {
	d.t.Helper()
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		d.t.Fatal(err)
	}
	return d.run(cfg)
}

// runGood runs the pipeline file cmd/floe/testdata/good/NAME.yaml, which
// the binary's tests run as a file, over its landing files.
func (d *pipelineDir) runGood(name string) {
	d.t.Helper()
	dir := filepath.Join("..", "..", "cmd", "floe", "testdata", "good")
	entries, err := os.ReadDir(filepath.Join(dir, name))
	if err != nil {
		d.t.Fatal(err)
	}
	for _, de := range entries {
		b, err := os.ReadFile(filepath.Join(dir, name, de.Name()))
		if err != nil {
			d.t.Fatal(err)
		}
		d.land(de.Name(), string(b))
	}
	text, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
	if err != nil {
		d.t.Fatal(err)
	}
	if err := d.runFile(string(text)); err != nil {
		d.t.Fatal(err)
	}
}

// fields returns the table's columns by name.
func (d *pipelineDir) fields(name string) map[string]fixture.FieldInfo {
	d.t.Helper()
	b, err := json.Marshal(d.table(name).Schema())
	if err != nil {
		d.t.Fatal(err)
	}
	return fixture.SchemaFields(d.t, b)
}

// rows scans the table and returns its rows as JSON lines with sorted keys.
func (d *pipelineDir) rows(name string) []string {
	d.t.Helper()
	_, recs, err := scan.Table(context.Background(), d.table(name), scan.Options{})
	if err != nil {
		d.t.Fatal(err)
	}
	var buf bytes.Buffer
	for rec, err := range recs {
		if err != nil {
			d.t.Fatal(err)
		}
		err = array.RecordToJSON(rec, &buf)
		rec.Release()
		if err != nil {
			d.t.Fatal(err)
		}
	}
	return fixture.JSONRows(d.t, &buf)
}

// table loads a table of the warehouse's catalog.
func (d *pipelineDir) table(name string) *icetable.Table {
	d.t.Helper()
	cat, _ := fixture.CatalogAt(d.t, d.warehouse)
	ident, err := floe.ParseIdent(name)
	if err != nil {
		d.t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		d.t.Fatal(err)
	}
	return tbl
}

// badFileRun fails unless err is a failed run (exit 1 in the binary, not a
// configuration error) over bad input whose message holds each of want.
func badFileRun(t *testing.T, err error, want ...string) {
	t.Helper()
	ok := err != nil && !errors.Is(err, floe.ErrConfig) && errors.Is(err, source.ErrBadInput)
	for _, w := range want {
		ok = ok && strings.Contains(err.Error(), w)
	}
	if !ok {
		t.Fatalf("got %v, want a bad-input failure naming %q", err, want)
	}
}

// wantIDs fails unless the table holds the n ids from first once each, as
// iceberg-go's reader reads them.
func (d *pipelineDir) wantIDs(name string, first, n int64) {
	d.t.Helper()
	cat, _ := fixture.CatalogAt(d.t, d.warehouse)
	ids, err := fixture.ReadIDs(context.Background(), cat, name, "id")
	if err != nil {
		d.t.Fatal(err)
	}
	if diff := fixture.Exact(ids, first, n); diff != "" {
		d.t.Fatalf("table %s: %s", name, diff)
	}
}

var (
	csvFormat  = config.Source{Format: "csv"}
	jsonFormat = config.Source{Format: "json"}
)

// CSV with a header: every column's type is inferred from all its values;
// empty values are nulls.
func TestFormatCSVInference(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.land("infer.csv", `id,price,ok,day,at,at_tz,clock,name,code,empty
1,1.5,true,2024-01-02,2024-01-02 03:04:05,2024-01-02T03:04:05Z,12:30:00,alice,007,
2,,false,,2024-01-03T10:00:00.123456,,,"bob, jr",n/a,
,3,TRUE,2024-02-29,,2024-01-02T03:04:05+02:00,08:00:00.25,,42,
`)
	d.mustStream(csvFormat, "db.csv")
	fixture.CheckSchema(t, d.fields("db.csv"),
		"id long", "price double", "ok boolean", "day date", "at timestamp", "at_tz timestamptz",
		"clock time", "name string", "code string", "empty string")
	fixture.CheckRows(t, d.rows("db.csv"),
		`{"at":"2024-01-02T03:04:05","at_tz":"2024-01-02T03:04:05Z","clock":"12:30:00","code":"007","day":"2024-01-02","empty":null,"id":1,"name":"alice","ok":true,"price":1.5}`,
		`{"at":"2024-01-03T10:00:00.123456","at_tz":null,"clock":null,"code":"n/a","day":null,"empty":null,"id":2,"name":"bob, jr","ok":false,"price":null}`,
		`{"at":null,"at_tz":"2024-01-02T01:04:05Z","clock":"08:00:00.25","code":"42","day":"2024-02-29","empty":null,"id":null,"name":null,"ok":true,"price":3}`)
}

// A value that looks like a boolean, date, time or timestamp but does not
// parse as one makes the column a string column; it does not fail the file.
func TestFormatCSVInferenceFallsBackToString(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.land("x.csv", "id,t,d,ts,ok_ts,b,ok_b\n1,10:00:00,2024-02-28,2024-01-01 10:00,2024-01-01 10:00,true,True\n2,25:00:00,2024-02-30,2024-01-01 25:61,2024-01-01T11:30:15.5,tRuE,FALSE\n")
	d.mustStream(csvFormat, "db.temporal")
	fixture.CheckSchema(t, d.fields("db.temporal"), "id long", "t string", "d string", "ts string", "ok_ts timestamp", "b string", "ok_b boolean")
	fixture.CheckRows(t, d.rows("db.temporal"),
		`{"b":"true","d":"2024-02-28","id":1,"ok_b":true,"ok_ts":"2024-01-01T10:00:00","t":"10:00:00","ts":"2024-01-01 10:00"}`,
		`{"b":"tRuE","d":"2024-02-30","id":2,"ok_b":false,"ok_ts":"2024-01-01T11:30:15.5","t":"25:00:00","ts":"2024-01-01 25:61"}`)
}

// Inference is per file: a later file in which a column is empty throughout
// (no type to infer) or holds only integers still fits the table.
func TestFormatCSVLaterFileTypes(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.land("a.csv", "id,price,at,clock\n1,1.5,2024-01-02 03:04:05,12:00:00\n")
	d.mustStream(csvFormat, "db.later")
	d.land("b.csv", "id,price,at,clock\n2,,,\n3,,,\n")
	d.land("c.csv", "id,price,at,clock\n4,7,,\n")
	d.mustStream(csvFormat, "db.later")
	fixture.CheckSchema(t, d.fields("db.later"), "id long", "price double", "at timestamp", "clock time")
	if n, err := scan.Count(context.Background(), d.table("db.later"), scan.Options{}); err != nil || n != 4 {
		t.Fatalf("rows = %d (%v), want 4", n, err)
	}
	got := strings.Join(d.rows("db.later"), "\n")
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
	d := newPipelineDir(t)
	d.runGood("csv-schema")
	fixture.CheckSchema(t, d.fields("db.typed"),
		"id long required", "qty int", "price decimal(10, 2)", "ratio float", "score double", "ok boolean",
		"day date", "t time", "at timestamp", "at_tz timestamptz", "name string")
	fixture.CheckRows(t, d.rows("db.typed"),
		`{"at":"2024-01-02T03:04:05","at_tz":"2024-01-02T03:04:05Z","day":"2024-01-02","id":1,"name":"alice","ok":true,"price":"19.99","qty":3,"ratio":0.5,"score":1000,"t":"12:30:00"}`,
		`{"at":null,"at_tz":null,"day":null,"id":2,"name":null,"ok":false,"price":"5","qty":null,"ratio":null,"score":null,"t":null}`,
		`{"at":"2024-02-29T23:59:59.123456","at_tz":"2024-02-29T21:59:59Z","day":"2024-02-29","id":3,"name":"bob, jr","ok":true,"price":"0.1","qty":7,"ratio":1.25,"score":-2.5,"t":"23:59:59.5"}`)
}

// A different delimiter (source.csv.delimiter); quoted fields may hold it.
func TestFormatCSVDelimiter(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.runGood("csv-delimiter")
	fixture.CheckSchema(t, d.fields("db.semicolon"), "id long", "label string", "amount double")
	fixture.CheckRows(t, d.rows("db.semicolon"),
		`{"amount":1.5,"id":1,"label":"a,b"}`,
		`{"amount":2,"id":2,"label":"x;y"}`,
		`{"amount":null,"id":3,"label":null}`)
}

// Without a header row the schema names the columns in file order.
func TestFormatCSVHeaderless(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.runGood("csv-headerless")
	fixture.CheckSchema(t, d.fields("db.headerless"), "id long", "city string", "ok boolean")
	fixture.CheckRows(t, d.rows("db.headerless"),
		`{"city":"Oslo","id":1,"ok":true}`,
		`{"city":"Rome","id":2,"ok":false}`)
}

// JSON lines: integers, floats (mixed with integers: double), booleans,
// strings, objects (struct), arrays (list), nulls.
func TestFormatJSONInference(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.land("infer.json", `{"id":1,"price":1,"ok":true,"name":"a","tags":["x","y"],"addr":{"zip":123,"city":"Oslo"},"score":2.5,"note":null,"n":[1,2.5]}
{"id":2,"price":2.25,"ok":false,"name":"b","tags":[],"addr":{"city":"Rome"},"score":null}

{"name":null,"id":3,"price":3,"tags":null,"addr":null,"extra":"late"}
`)
	d.mustStream(jsonFormat, "db.json")
	fixture.CheckSchema(t, d.fields("db.json"),
		"id long", "price double", "ok boolean", "name string", "tags list<string>",
		"addr struct<city: string, zip: long>", "score double", "note string", "n list<double>", "extra string")
	fixture.CheckRows(t, d.rows("db.json"),
		`{"addr":{"city":"Oslo","zip":123},"extra":null,"id":1,"n":[1,2.5],"name":"a","note":null,"ok":true,"price":1,"score":2.5,"tags":["x","y"]}`,
		`{"addr":{"city":"Rome","zip":null},"extra":null,"id":2,"n":null,"name":"b","note":null,"ok":false,"price":2.25,"score":null,"tags":[]}`,
		`{"addr":null,"extra":"late","id":3,"n":null,"name":null,"note":null,"ok":null,"price":3,"score":null,"tags":null}`)

	// A later file whose values are all null, or integers where the table
	// has doubles, still fits.
	d.land("later.json", `{"id":4,"price":null,"ok":null,"name":null,"score":7}`+"\n")
	d.mustStream(jsonFormat, "db.json")
	rows := d.rows("db.json")
	if len(rows) != 4 || !strings.Contains(strings.Join(rows, "\n"), `"id":4,"n":null,"name":null,"note":null,"ok":null,"price":null,"score":7,`) {
		t.Fatalf("later file not ingested as expected:\n%s", strings.Join(rows, "\n"))
	}
}

// A field holding values of two JSON kinds is refused with the fix.
func TestFormatJSONConflictingKinds(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	p := d.land("mixed.json", "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":3}\n")
	badFileRun(t, d.stream(jsonFormat, "db.mixed"), p, "line 2: field v holds both string and number values; give the column a type in source.schema")
}

// JSON lines with an explicit schema: numbers take the declared types,
// absent keys are nulls, key order does not matter.
func TestFormatJSONExplicitSchema(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.runGood("json-schema")
	fixture.CheckSchema(t, d.fields("db.jsontyped"), "id long required", "score double", "qty int", "at timestamp", "tag string")
	fixture.CheckRows(t, d.rows("db.jsontyped"),
		`{"at":"2024-01-02T03:04:05","id":1,"qty":2,"score":1,"tag":"a"}`,
		`{"at":null,"id":2,"qty":null,"score":2.5,"tag":null}`,
		`{"at":"2024-02-29T23:59:59.123456","id":3,"qty":null,"score":null,"tag":"c"}`)
}

// With an explicit schema, the header of each file is matched to the schema
// by name: files may list the columns in another order, or leave optional
// ones out; a column the schema lacks is refused.
func TestFormatCSVExplicitSchemaHeaderOrder(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	pipeline := `source:
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
`
	d.land("a.csv", "ok,day,id,note\nT,2024-01-02,1,x\n")
	if err := d.runFile(pipeline); err != nil {
		t.Fatal(err)
	}
	fixture.CheckSchema(t, d.fields("db.order"), "id long required", "ok boolean", "day date", "note string")
	d.land("b.csv", "note, id\ny,2\n")
	if err := d.runFile(pipeline); err != nil {
		t.Fatal(err)
	}
	fixture.CheckRows(t, d.rows("db.order"),
		`{"day":"2024-01-02","id":1,"note":"x","ok":true}`,
		`{"day":null,"id":2,"note":"y","ok":null}`)

	bad := d.land("c.csv", "id,colour\n3,blue\n")
	badFileRun(t, d.runFile(pipeline), bad, `column "colour" of the header is not in source.schema`)
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	bad = d.land("d.csv", "ok,note\ntrue,z\n")
	badFileRun(t, d.runFile(pipeline), bad, `required column "id" of source.schema is missing from the header`)
}

// Later JSON files may leave nested keys out, hold only nulls in them, or
// hold empty lists: they still fit the table. A nested key the table lacks
// is refused.
func TestFormatJSONNestedLaterFiles(t *testing.T) {
	t.Parallel()
	d := newPipelineDir(t)
	d.land("a.json", `{"id":1,"addr":{"city":"Oslo","zip":1},"tags":["a"],"pts":[{"x":1,"y":2}]}`+"\n")
	d.mustStream(jsonFormat, "db.nested")
	d.land("b.json", `{"id":2,"addr":{"city":"Rome","zip":null},"tags":[],"pts":[{"x":3}]}
{"id":3,"addr":{"city":"Bern"},"pts":[{"y":4}]}
{"id":4,"tags":[null],"addr":null,"pts":[]}
`)
	d.land("c.json", `{"id":5,"addr":null,"tags":null}`+"\n")
	d.mustStream(jsonFormat, "db.nested")
	fixture.CheckSchema(t, d.fields("db.nested"), "id long", "addr struct<city: string, zip: long>", "tags list<string>", "pts list<struct<x: long, y: long>>")
	got := d.rows("db.nested")
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

	bad := d.land("d.json", `{"id":6,"addr":{"city":"Bern","moon":1}}`+"\n")
	badFileRun(t, d.stream(jsonFormat, "db.nested"), bad, `column "addr"`, "moon")
}

// A column the table has is read as the table's type: a string column
// created from "AB12" takes a later file whose zip codes all look like
// numbers, with their leading zeros. A new column of zero-padded digits is
// a string column: as a number it would lose the zeros.
func TestColumnsAreReadAsTheTableTypes(t *testing.T) {
	t.Parallel()
	t.Run("csv", func(t *testing.T) {
		t.Parallel()
		d := newPipelineDir(t)
		d.land("a.csv", "id,zip,code\n1,AB12,007\n")
		d.mustStream(csvFormat, "db.t")
		fixture.CheckSchema(t, d.fields("db.t"), "id long", "zip string", "code string")
		d.land("b.csv", "id,zip,code\n2,00501,010\n3,02134,\n")
		d.mustStream(csvFormat, "db.t")
		want := []string{`{"code":"007","id":1,"zip":"AB12"}`, `{"code":"010","id":2,"zip":"00501"}`, `{"code":null,"id":3,"zip":"02134"}`}
		if got := sorted(d.rows("db.t")); !slices.Equal(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		d.wantIDs("db.t", 1, 3)
	})
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		d := newPipelineDir(t)
		d.land("a.json", `{"id":1,"zip":"AB12","ratio":0.5}`+"\n")
		d.mustStream(jsonFormat, "db.t")
		d.land("b.json", `{"id":2,"zip":501,"ratio":1}`+"\n")
		d.land("c.json", `{"id":3,"zip":true,"ratio":null}`+"\n")
		d.mustStream(jsonFormat, "db.t")
		want := []string{`{"id":1,"ratio":0.5,"zip":"AB12"}`, `{"id":2,"ratio":1,"zip":"501"}`, `{"id":3,"ratio":null,"zip":"true"}`}
		if got := sorted(d.rows("db.t")); !slices.Equal(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		d.wantIDs("db.t", 1, 3)
	})
}

// A UTF-8 byte order mark (Excel's "CSV UTF-8") is not part of the first
// column's name or value, in CSV and JSON lines alike, in the table a
// pipeline creates.
func TestByteOrderMarkIsSkipped(t *testing.T) {
	t.Parallel()
	const bom = "\ufeff"
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			d := newPipelineDir(t)
			data := func(first int64) []byte {
				if format == "csv" {
					return fixture.IDCSV(first, 100, ',', true)
				}
				return fixture.IDJSON(first, 100)
			}
			d.land("a."+format, bom+string(data(0)))
			d.land("b."+format, string(data(100)))
			d.mustStream(config.Source{Format: format}, "db.t")
			fixture.CheckSchema(t, d.fields("db.t"), "id long", "v string")
			d.wantIDs("db.t", 0, 200)
		})
	}
}

// sameTable fails unless table name holds the rows and columns of a twin
// landed from the same values in another form.
func (d *pipelineDir) sameTable(name string, want []string, wantFields map[string]fixture.FieldInfo) {
	d.t.Helper()
	if got := d.rows(name); !slices.Equal(got, want) {
		var g, w string
		if len(got) > 0 {
			g = got[0]
		}
		if len(want) > 0 {
			w = want[0]
		}
		d.t.Fatalf("%d rows unlike the twin's %d; first %.200s, want %.200s", len(got), len(want), g, w)
	}
	got := d.fields(name)
	for n, f := range wantFields {
		if got[n] != f {
			d.t.Fatalf("column %s is %+v, the twin's %+v", n, got[n], f)
		}
	}
}
