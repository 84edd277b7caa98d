package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// Debezium change events (source.format debezium-json) are ingested in
// append mode as the row image plus __op, __source_lsn and __ts_ms. The
// table is read back with iceberg-go's own scan.

const dbzTsBase = 1700000000000

// pgEvent is a PostgreSQL connector's event for the row (id, name) at lsn,
// as JsonConverter writes it with schemas.enable=false. A delete's before
// image holds only the key when keyOnly is set, as with REPLICA IDENTITY
// DEFAULT.
func pgEvent(op string, id int64, name string, lsn int64, keyOnly bool) string {
	row := fmt.Sprintf(`{"id":%d,"name":%q}`, id, name)
	before, after := "null", row
	switch op {
	case "u":
		before = fmt.Sprintf(`{"id":%d,"name":"old"}`, id)
	case "d":
		before, after = row, "null"
		if keyOnly {
			before = fmt.Sprintf(`{"id":%d}`, id)
		}
	}
	return fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":%d,"snapshot":"false","db":"shop","sequence":"[null,\"%d\"]","schema":"public","table":"customers","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d,"transaction":null}`,
		before, after, dbzTsBase+lsn-1, lsn, 700+lsn, lsn, op, dbzTsBase+lsn)
}

// dbzRows reads columns of a table through iceberg-go's scan, each row as
// its values joined by "|" (null for nulls), sorted.
func dbzRows(t *testing.T, e *env, name string, cols ...string) []string {
	t.Helper()
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, strings.Split(name, "."))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	_, recs, err := tbl.Scan(table.WithSelectedFields(cols...)).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		arrs := make([]any, len(cols))
		for i, c := range cols {
			arrs[i] = rec.Column(rec.Schema().FieldIndices(c)[0])
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			vals := make([]string, len(cols))
			for i := range cols {
				a := arrs[i].(interface {
					IsNull(int) bool
					ValueStr(int) string
				})
				vals[i] = "null"
				if !a.IsNull(r) {
					vals[i] = a.ValueStr(r)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

func landLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := fixture.Land(path, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		t.Fatal(err)
	}
}

func dbzStreamArgs(e *env, table string, extra ...string) []string {
	return append([]string{"stream", "--source", e.Landing, "--format", "debezium-json", "--table", table,
		"--checkpoint", e.Ckpt, "--trigger", "available-now"}, extra...)
}

// Events without the schema wrapper: every create, snapshot read, update
// and delete is a row of its image; tombstones and blank lines are no
// rows; a source without an lsn (MySQL) gives a null __source_lsn.
func TestDebeziumAppendsChangeRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var snapshot, changes []string
	var want []string
	lsn := int64(1000)
	for id := int64(0); id < 50; id++ {
		lsn++
		snapshot = append(snapshot, pgEvent("r", id, fmt.Sprintf("n%d", id), lsn, false))
		want = append(want, fmt.Sprintf("%d|r|%d|%d|n%d", id, lsn, dbzTsBase+lsn, id))
	}
	for id := int64(50); id < 100; id++ {
		lsn++
		changes = append(changes, pgEvent("c", id, fmt.Sprintf("n%d", id), lsn, false))
		want = append(want, fmt.Sprintf("%d|c|%d|%d|n%d", id, lsn, dbzTsBase+lsn, id))
	}
	for id := int64(0); id < 10; id++ {
		lsn++
		changes = append(changes, pgEvent("u", id, fmt.Sprintf("n%d-v2", id), lsn, false))
		want = append(want, fmt.Sprintf("%d|u|%d|%d|n%d-v2", id, lsn, dbzTsBase+lsn, id))
	}
	for id := int64(90); id < 100; id++ {
		lsn++
		keyOnly := id%2 == 0
		changes = append(changes, pgEvent("d", id, fmt.Sprintf("n%d", id), lsn, keyOnly), "null", "")
		name := fmt.Sprintf("n%d", id)
		if keyOnly {
			name = "null"
		}
		want = append(want, fmt.Sprintf("%d|d|%d|%d|%s", id, lsn, dbzTsBase+lsn, name))
	}
	landLines(t, filepath.Join(e.Landing, "snapshot.json"), snapshot...)
	landLines(t, filepath.Join(e.Landing, "changes.json"), changes...)
	landLines(t, filepath.Join(e.Landing, "mysql.json"),
		`{"before":null,"after":{"id":100,"name":"my"},"source":{"version":"2.7.0.Final","connector":"mysql","name":"my","ts_ms":1,"db":"shop","table":"customers","server_id":1,"file":"binlog.000003","pos":154,"row":0},"op":"c","ts_ms":1700000009999}`)
	want = append(want, "100|c|null|1700000009999|my")

	e.OK(dbzStreamArgs(e, "db.customers")...)

	ids := e.TableIDs("db.customers")
	for id := int64(0); id <= 100; id++ {
		wantN := 1
		if id < 10 || id >= 90 && id < 100 {
			wantN = 2
		}
		if ids[id] != wantN {
			t.Errorf("id %d occurs %d times, want %d", id, ids[id], wantN)
		}
	}
	if len(ids) != 101 {
		t.Errorf("%d distinct ids, want 101", len(ids))
	}
	slices.Sort(want)
	got := dbzRows(t, e, "db.customers", "id", "__op", "__source_lsn", "__ts_ms", "name")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows differ\n got: %v\nwant: %v", got, want)
	}
	fixture.CheckSchema(t, e.fields("db.customers"), "id long", "name string", "__op string", "__source_lsn long", "__ts_ms long")
}

// A Connect decimal field: bytes, its scale and precision as parameters.
func dbzDecimal(name string) string {
	return `{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"` + name + `"}`
}

// dbzWrapped is an event with schemas.enable=true, its row images of the
// columns id (int32), price (decimal(10,2)), born (Date), created
// (MicroTimestamp), seen (ZonedTimestamp), uid (Uuid) and tags (an array).
func dbzWrapped(op, before, after string, lsn int64) string {
	cols := `{"type":"int32","optional":false,"field":"id"},` + dbzDecimal("price") + `,` +
		`{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"born"},` +
		`{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"created"},` +
		`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"seen"},` +
		`{"type":"string","optional":true,"name":"io.debezium.data.Uuid","version":1,"field":"uid"},` +
		`{"type":"array","items":{"type":"string","optional":true},"optional":true,"field":"tags"}`
	value := func(field string) string {
		return `{"type":"struct","fields":[` + cols + `],"optional":true,"name":"pg.public.orders.Value","field":"` + field + `"}`
	}
	schema := `{"type":"struct","fields":[` + value("before") + `,` + value("after") + `,` +
		`{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},` +
		`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"pg.public.orders.Envelope","version":2}`
	return fmt.Sprintf(`{"schema":%s,"payload":{"before":%s,"after":%s,"source":{"connector":"postgresql","lsn":%d},"op":%q,"ts_ms":%d}}`,
		schema, before, after, lsn, op, dbzTsBase+lsn)
}

// With the schema wrapper, columns take the types of their Connect schema
// and logical names: decimals, dates and timestamps are read as such.
func TestDebeziumTypesFromConnectSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// 12345 and -1 unscaled are "MDk=" and "/w=="; 19723 days is
	// 2024-01-01; 1704164645123456 µs is 2024-01-02T03:04:05.123456Z.
	row1 := `{"id":1,"price":"MDk=","born":19723,"created":1704164645123456,"seen":"2024-01-02T05:04:05.5+02:00","uid":"b6a1c5a2-6c1d-4a43-9d49-0f2a5b2b1e11","tags":["a","b"]}`
	row1b := `{"id":1,"price":"/w==","born":null,"created":null,"seen":null,"uid":null,"tags":[]}`
	row2 := `{"id":2,"price":null,"born":0,"created":0,"seen":"1970-01-01T00:00:00Z","uid":null,"tags":null}`
	landLines(t, filepath.Join(e.Landing, "orders.json"),
		dbzWrapped("r", "null", row1, 10),
		dbzWrapped("c", "null", row2, 11),
		`{"schema":null,"payload":null}`,
		dbzWrapped("u", row1, row1b, 12),
		dbzWrapped("d", row2, "null", 13),
		`{"schema":null,"payload":null}`,
	)
	e.OK(dbzStreamArgs(e, "db.orders")...)

	fixture.CheckSchema(t, e.fields("db.orders"), "id int", "price decimal(10, 2)", "born date", "created timestamp", "seen timestamptz",
		"uid string", "tags string", "__op string", "__source_lsn long", "__ts_ms long")
	if ids := e.TableIDs("db.orders"); len(ids) != 2 || ids[1] != 2 || ids[2] != 2 {
		t.Errorf("ids %v, want 1 and 2 twice each", ids)
	}
	got := dbzRows(t, e, "db.orders", "id", "__op", "__source_lsn", "__ts_ms", "price", "born", "created", "seen", "uid", "tags")
	want := []string{
		`1|r|10|1700000000010|123.45|2024-01-01|2024-01-02T03:04:05.123456|2024-01-02T03:04:05.5Z|b6a1c5a2-6c1d-4a43-9d49-0f2a5b2b1e11|["a","b"]`,
		`1|u|12|1700000000012|-0.01|null|null|null|null|[]`,
		`2|c|11|1700000000011|null|1970-01-01|1970-01-01T00:00:00|1970-01-01T00:00:00Z|null|null`,
		`2|d|13|1700000000013|null|1970-01-01|1970-01-01T00:00:00|1970-01-01T00:00:00Z|null|null`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows differ\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Bad events fail the batch with exit 1, naming the file, the line and the
// fix; nothing is committed, and the checkpoint lets the next run retry.
func TestDebeziumBadInput(t *testing.T) {
	t.Parallel()
	good := pgEvent("c", 1, "a", 100, false)
	for _, tc := range []struct {
		name string
		bad  string
		want []string
	}{
		{"truncate", `{"before":null,"after":null,"source":{"connector":"postgresql","lsn":7},"op":"t","ts_ms":1}`,
			[]string{`op "t" truncates the source table, and floe does not apply truncates`, "quarantine the file"}},
		{"unknown op", strings.Replace(good, `"op":"c"`, `"op":"x"`, 1),
			[]string{`unknown op "x"`, "c (create), r (read), u (update), d (delete) or t (truncate"}},
		{"create without after", `{"before":null,"after":null,"source":{"lsn":7},"op":"c","ts_ms":1}`,
			[]string{`op "c" has no "after" row image`}},
		{"delete without before", `{"before":null,"after":null,"source":{"lsn":7},"op":"d","ts_ms":1}`,
			[]string{`op "d" has no "before" row image`, "REPLICA IDENTITY"}},
		{"malformed JSON", `{"before":null,"after":{"id":2,"name":"b"},"op":"c"`,
			[]string{"malformed JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			landLines(t, filepath.Join(e.Landing, "a-good.json"), good)
			bad := filepath.Join(e.Landing, "b-bad.json")
			landLines(t, bad, good, "null", tc.bad, good)
			r := e.Run(dbzStreamArgs(e, "db.bad")...)
			if r.Code != 1 {
				t.Fatalf("want exit 1, got %s", r)
			}
			for _, w := range append([]string{"bad input file " + bad, "line 3: "}, tc.want...) {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.Stderr)
				}
			}
			if ids := e.TableIDs("db.bad"); len(ids) != 0 {
				t.Errorf("the failed batch committed rows: %v", ids)
			}
			if _, err := os.Stat(filepath.Join(e.Ckpt, "commits", "0")); err == nil {
				t.Error("the failed batch recorded a commit")
			}
		})
	}
}

// With on-bad-file quarantine, a file holding a truncate is moved aside
// and the other files' events are ingested.
func TestDebeziumTruncateQuarantined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	landLines(t, filepath.Join(e.Landing, "a.json"), pgEvent("c", 1, "a", 100, false), pgEvent("c", 2, "b", 101, false))
	bad := filepath.Join(e.Landing, "b.json")
	landLines(t, bad, pgEvent("c", 3, "c", 102, false), `{"before":null,"after":null,"source":{"lsn":103},"op":"t","ts_ms":1}`)
	r := e.OK(dbzStreamArgs(e, "db.q", "--on-bad-file", "quarantine")...)
	if !strings.Contains(r.Stderr, "line 2: op \"t\" truncates") {
		t.Errorf("the quarantine does not give the reason:\n%s", r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(e.Ckpt, "quarantine", "b.json")); err != nil {
		t.Errorf("b.json not in the quarantine: %v", err)
	}
	if d := fixture.Exact(e.TableIDs("db.q"), 1, 2); d != "" {
		t.Error(d)
	}
}

// A NanoTimestamp makes a timestamp_ns column of a format-version 3 table,
// kept to the nanosecond, not cut short; a format-version 2 table cannot
// hold one, and the run that finds so creates no table.
func TestDebeziumNanosecondsNotCut(t *testing.T) {
	t.Parallel()
	field := `{"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1,"field":"ts"}`
	schema := `{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},` + field + `],"optional":true,"field":"after"}],"optional":false}`
	event := func(id int, ns int64) string {
		return fmt.Sprintf(`{"schema":%s,"payload":{"op":"c","after":{"id":%d,"ts":%d},"ts_ms":1}}`, schema, id, ns)
	}
	e := newEnv(t)
	landLines(t, filepath.Join(e.Landing, "a.json"), event(1, 1704164645123456789))
	r := e.Run(dbzStreamArgs(e, "db.ns")...)
	if r.Code != 1 || !strings.Contains(r.Stderr, `column "ts" is timestamp_ns`) || !strings.Contains(r.Stderr, "format-version 3") {
		t.Fatalf("want exit 1 naming the column and format-version 3, got %s", r)
	}
	if d := e.Run("table", "describe", "db.ns"); d.Code == 0 {
		t.Fatalf("the refused run left db.ns behind:\n%s", d.Stdout)
	}
	e.OK(dbzStreamArgs(e, "db.ns", "--format-version", "3")...)
	if got := dbzRows(t, e, "db.ns", "id", "ts"); !slices.Equal(got, []string{"1|2024-01-02T03:04:05.123456789"}) {
		t.Errorf("rows %v", got)
	}
}
