package main_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/canonical"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
)

// peerTable is a case of testdata/peer/tables.json with the rows derived
// for it without floe (testdata/peer/<name>.jsonl, see TestPeerTables),
// for reads with filters and column selections: the expected rows are
// those rows, kept by a predicate written here and cut to the selected
// columns.
type peerTable struct {
	loc, meta string
	args      []string // scan LOC --path-prefix ...
	fields    []canonical.Field
	rows      []map[string]any
}

func openPeer(t *testing.T, name string) peerTable {
	t.Helper()
	peer := fixture.Shared(t, "fixtures/peer-tables")
	raw, err := os.ReadFile(filepath.Join("testdata", "peer", "tables.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []peerCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cases, func(c peerCase) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no peer table %s", name)
	}
	c := cases[i]
	p := peerTable{loc: filepath.Join(peer, "tables", c.Metadata)}
	p.args = []string{"scan", p.loc}
	for _, pp := range c.Prefixes {
		p.args = append(p.args, "--path-prefix", pp[0]+"="+filepath.Join(peer, pp[1]))
	}
	p.meta = p.loc
	if st, err := os.Stat(p.loc); err == nil && st.IsDir() {
		if p.meta, err = catalogs.FindMetadata(p.loc); err != nil {
			t.Fatal(err)
		}
	}
	if p.fields, err = currentSchema(p.meta); err != nil {
		t.Fatal(err)
	}
	want, err := readExpected(c.rowsFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range want {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		p.rows = append(p.rows, row)
	}
	return p
}

// scan runs floe scan with extra flags and returns its rows in canonical
// form, with the columns cols (every column when nil).
func (p peerTable) scan(t *testing.T, e *env, cols []string, extra ...string) []string {
	t.Helper()
	r := e.Run(append(append(slices.Clone(p.args), extra...), "--output-format", "jsonl")...)
	if r.Code != 0 {
		t.Fatalf("scan %v: %s", extra, r)
	}
	return canonicalRows(t, r.Stdout, p.fields, cols)
}

// want renders the expected rows keep accepts, with the columns cols
// (every column when nil).
func (p peerTable) want(cols []string, keep func(row map[string]any) bool) []string {
	var out []string
	for _, row := range p.rows {
		if !keep(row) {
			continue
		}
		obj := canonical.Object{}
		for _, f := range p.fields {
			if cols == nil || slices.Contains(cols, f.Name) {
				obj = append(obj, canonical.KV{Key: f.Name, Value: row[f.Name]})
			}
		}
		out = append(out, canonical.JSON(obj))
	}
	sort.Strings(out)
	return out
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: rows differ\n got (%d):\n%s\nwant (%d):\n%s", what, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// count runs floe scan --count with extra flags.
func (p peerTable) count(t *testing.T, e *env, extra ...string) int {
	t.Helper()
	r := e.Run(append(append(slices.Clone(p.args), extra...), "--count")...)
	n, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if r.Code != 0 || err != nil {
		t.Fatalf("scan --count %v: %s", extra, r)
	}
	return n
}

func always(map[string]any) bool { return true }

// hexBytes decodes a canonical binary value (hex).
func hexBytes(v any) []byte {
	s, _ := v.(string)
	b, _ := hex.DecodeString(s)
	return b
}

// Filtered scans of peer tables return every matching row. In
// is_null_is_not_null the file holding (7, NULL) and (8, 'blah') has one
// null and one value in its row group: iceberg-go 0.7.0 reads Parquet's
// count of non-null values as Iceberg's value count (which includes the
// nulls), takes the group for nulls only, and pruned row 8 for IS NOT NULL
// and for equality. The binary tables are filtered with X'..' literals on
// their identity-partition column, which the data files lack.
func TestPeerTableFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	isNull := func(col string) func(map[string]any) bool {
		return func(r map[string]any) bool { return r[col] == nil }
	}
	not := func(f func(map[string]any) bool) func(map[string]any) bool {
		return func(r map[string]any) bool { return !f(r) }
	}
	byteCmp := func(col, lit string, ok func(int) bool) func(map[string]any) bool {
		b, _ := hex.DecodeString(lit)
		return func(r map[string]any) bool { return r[col] != nil && ok(bytes.Compare(hexBytes(r[col]), b)) }
	}
	eq := func(c int) bool { return c == 0 }
	for _, c := range []struct {
		table, filter string
		keep          func(map[string]any) bool
	}{
		{"is_null_is_not_null", "value IS NOT NULL", not(isNull("value"))},
		{"is_null_is_not_null", "value = 'blah'", func(r map[string]any) bool { return r["value"] == "blah" }},
		{"is_null_is_not_null", "value IS NULL", isNull("value")},
		{"is_null_is_not_null", "value >= 'bar' AND id > 5", func(r map[string]any) bool {
			id, _ := strconv.Atoi(r["id"].(string))
			v, _ := r["value"].(string)
			return r["value"] != nil && v >= "bar" && id > 5
		}},
		{"partition_binary", "partition_col = X'010203'", byteCmp("partition_col", "010203", eq)},
		{"partition_binary", "partition_col <> x'010203'", byteCmp("partition_col", "010203", func(c int) bool { return c != 0 })},
		{"partition_binary", "partition_col > X'02'", byteCmp("partition_col", "02", func(c int) bool { return c > 0 })},
		{"partition_binary", "partition_col IN (X'AABBCC', X'00')", byteCmp("partition_col", "aabbcc", eq)},
		{"partition_fixed_length_binary", "partition_col = X'68656C6C6F20776F726C64'", byteCmp("partition_col", "68656c6c6f20776f726c64", eq)},
		{"partition_fixed_length_binary", "partition_col < X'68656c6c6f20776f726c64'", byteCmp("partition_col", "68656c6c6f20776f726c64", func(c int) bool { return c < 0 })},
		{"partition_fixed_length_binary", "partition_col IS NOT NULL", always},
	} {
		p := openPeer(t, c.table)
		want := p.want(nil, c.keep)
		sameRows(t, c.table+" --filter "+c.filter, p.scan(t, e, nil, "--filter", c.filter), want)
		if n := p.count(t, e, "--filter", c.filter); n != len(want) {
			t.Errorf("%s --filter %q --count = %d, want %d", c.table, c.filter, n, len(want))
		}
	}
}

// Tables whose schema changed after their current snapshot read, filter
// and keep columns by the current schema's names, as Spark and iceberg-go
// read them: Spark renamed date to event_date in rename_column, and
// Iceberg Java added __happy__ to bunnies after the snapshot its metadata
// v3 holds. A branch's head reads so too; the snapshot chosen by id or
// time keeps the schema it was written with, as in Iceberg's readers: the
// old name reads, the new one is no column.
func TestPeerTableCurrentSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := openPeer(t, "icebird/spark_rename_column")
	date := func(days string) func(map[string]any) bool {
		return func(r map[string]any) bool { return r["event_date"] == days }
	}
	ids := []string{"id", "event_date"}
	for _, at := range [][]string{nil, {"--branch", "main"}} {
		sameRows(t, fmt.Sprint(at, " --keep id,event_date"), p.scan(t, e, ids, append(at, "--keep", "id,event_date")...), p.want(ids, always))
		sameRows(t, fmt.Sprint(at, " event_date = 2022-01-01"), p.scan(t, e, nil, append(at, "--filter", "event_date = DATE '2022-01-01'")...), p.want(nil, date("18993")))
		sameRows(t, fmt.Sprint(at, " event_date IS NULL"), p.scan(t, e, ids, append(at, "--filter", "event_date IS NULL", "--keep", "id,event_date")...),
			p.want(ids, func(r map[string]any) bool { return r["event_date"] == nil }))
		if n := p.count(t, e, append(at, "--filter", "event_date > DATE '2022-01-01'")...); n != 1 {
			t.Errorf("%v event_date > 2022-01-01 counts %d, want 1", at, n)
		}
		if r := e.Run(append(append(slices.Clone(p.args), at...), "--keep", "date")...); r.Code != 2 || !strings.Contains(r.Stderr, `no column "date"`) {
			t.Errorf("%v --keep date: want exit 2 naming the old name, got %s", at, r)
		}
	}
	snap, ts := currentSnapshot(t, p.meta)
	old := p
	old.fields = slices.Clone(p.fields)
	for i := range old.fields {
		if old.fields[i].Name == "event_date" {
			old.fields[i].Name = "date"
		}
	}
	old.rows = nil
	for _, r := range p.rows {
		r = maps.Clone(r)
		r["date"] = r["event_date"]
		delete(r, "event_date")
		old.rows = append(old.rows, r)
	}
	for _, at := range [][]string{{"--snapshot-id", snap}, {"--as-of-timestamp", ts}} {
		sameRows(t, fmt.Sprint(at), old.scan(t, e, nil, at...), old.want(nil, always))
		sameRows(t, fmt.Sprint(at, " date IS NULL"), old.scan(t, e, []string{"id", "date"}, append(at, "--filter", "date IS NULL", "--keep", "id,date")...),
			old.want([]string{"id", "date"}, func(r map[string]any) bool { return r["date"] == nil }))
		if r := e.Run(append(append(slices.Clone(p.args), at...), "--keep", "event_date")...); r.Code != 2 || !strings.Contains(r.Stderr, `no column "event_date"`) {
			t.Errorf("%v --keep event_date: want exit 2, the snapshot's schema has no such column, got %s", at, r)
		}
	}

	b := openPeer(t, "icebird/java_bunnies_v3")
	kept := []string{"Breed Name", "__happy__"}
	sameRows(t, "--keep Breed Name,__happy__", b.scan(t, e, kept, "--keep", "Breed Name,__happy__"), b.want(kept, always))
	sameRows(t, "__happy__ IS NULL", b.scan(t, e, nil, "--filter", "__happy__ IS NULL"), b.want(nil, always))
	if n := b.count(t, e, "--filter", "__happy__ = TRUE"); n != 0 {
		t.Errorf("__happy__ = TRUE counts %d, want 0", n)
	}
	snap, _ = currentSnapshot(t, b.meta)
	if r := e.Run(append(slices.Clone(b.args), "--snapshot-id", snap, "--keep", "__happy__")...); r.Code != 2 || !strings.Contains(r.Stderr, `no column "__happy__"`) {
		t.Errorf("--snapshot-id %s --keep __happy__: want exit 2, got %s", snap, r)
	}
}

// currentSnapshot reads a metadata file's current snapshot id and when it
// was made (epoch ms).
func currentSnapshot(t *testing.T, meta string) (id, timestampMs string) {
	t.Helper()
	raw, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Current   json.Number `json:"current-snapshot-id"`
		Snapshots []struct {
			ID json.Number `json:"snapshot-id"`
			Ms json.Number `json:"timestamp-ms"`
		} `json:"snapshots"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&md); err != nil {
		t.Fatal(err)
	}
	for _, s := range md.Snapshots {
		if s.ID == md.Current {
			return s.ID.String(), s.Ms.String()
		}
	}
	t.Fatalf("%s has no current snapshot", meta)
	return "", ""
}

// Columns added with an initial-default read as that default in files
// written before the column existed, also when the columns read are only
// such columns: iceberg-go cannot read a file for none of its columns, so
// floe reads one the file has along and drops it.
func TestPeerTableDefaultsSelected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := openPeer(t, "add_columns_with_defaults")
	for _, c := range []struct {
		keep   []string
		filter string
		match  func(map[string]any) bool
	}{
		{[]string{"col_integer"}, "", always},
		{[]string{"col_fixed", "col_binary"}, "", always},
		{[]string{"col_uuid", "col_decimal", "col_timestamptz"}, "", always},
		{[]string{"col_integer"}, "col_integer = 342342", func(r map[string]any) bool { return r["col_integer"] == "342342" }},
		{[]string{"col_uuid"}, "col_long < 0", func(r map[string]any) bool { return strings.HasPrefix(r["col_long"].(string), "-") }},
		{[]string{"col1", "col_binary"}, "col_binary = X'0102'", func(r map[string]any) bool { return r["col_binary"] == "0102" }},
	} {
		args := []string{"--keep", strings.Join(c.keep, ",")}
		if c.filter != "" {
			args = append(args, "--filter", c.filter)
		}
		sameRows(t, strings.Join(args, " "), p.scan(t, e, c.keep, args...), p.want(c.keep, c.match))
	}
	// A field added to a struct, selected alone: the older file holds the
	// struct with none of the selected fields.
	ps := openPeer(t, "add_columns_with_defaults_in_struct")
	var want []string
	for _, row := range ps.rows {
		a, _ := row["a"].(map[string]any)
		want = append(want, fmt.Sprintf(`{"a":{"col_integer":%s}}`, a["col_integer"]))
	}
	sort.Strings(want)
	r := e.Run(append(slices.Clone(ps.args), "--keep", "a.col_integer", "--output-format", "jsonl")...)
	got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	sort.Strings(got)
	if r.Code != 0 || !slices.Equal(got, want) {
		t.Errorf("--keep a.col_integer: want %q, got %s", want, r)
	}
}

// A column added without a default reads as NULL from files written before
// it, also when it is the only column read.
func TestScanOnlyColumnsOlderFilesLack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	land := func(name, csv string) {
		if err := fixture.Land(filepath.Join(e.Landing, name), []byte(csv)); err != nil {
			t.Fatal(err)
		}
	}
	stream := func() {
		e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt,
			"--trigger", "available-now", "--schema-evolution", "add-columns")
	}
	land("a.csv", "id\n1\n2\n")
	stream()
	land("b.csv", "id,x\n3,foo\n")
	stream()
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 3); d != "" {
		t.Fatal(d)
	}
	r := e.OK("scan", "db.t", "--keep", "x", "--output-format", "jsonl")
	got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	sort.Strings(got)
	if want := []string{`{"x":"foo"}`, `{"x":null}`, `{"x":null}`}; !slices.Equal(got, want) {
		t.Errorf("--keep x printed %q, want %q", got, want)
	}
	r = e.OK("scan", "db.t", "--keep", "x", "--filter", "x IS NULL", "--count")
	if strings.TrimSpace(r.Stdout) != "2" {
		t.Errorf("x IS NULL counts %s, want 2", r.Stdout)
	}
}

// A row group that holds as many nulls as values (here one of each, as
// floe writes them) keeps its value under a filter: iceberg-go 0.7.0
// took such groups for nulls only.
func TestFilterKeepsHalfNullRowGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := fixture.Land(filepath.Join(e.Landing, "a.csv"), []byte("id,x\n1,\n2,a\n")); err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "csv", "--table", "db.t", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 2); d != "" {
		t.Fatal(d)
	}
	for _, f := range []string{"x IS NOT NULL", "x = 'a'", "x >= 'a'", "x IN ('a', 'b')", "x LIKE 'a%'"} {
		r := e.OK("scan", "db.t", "--filter", f, "--output-format", "csv")
		if got := strings.TrimSpace(r.Stdout); got != "id,x\n2,a" {
			t.Errorf("--filter %q printed %q, want row 2", f, got)
		}
	}
}

// A data file whose manifest records a value count that leaves out the
// nulls (as some writers do) is not pruned: iceberg-go reads such metrics
// as "nulls only" and skipped the file for IS NOT NULL.
func TestFilterIgnoresContradictoryManifestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "value", Type: iceberg.PrimitiveTypes.String},
	)
	tbl := fixture.CreateIcebergTable(t, cat, table.Identifier{"db", "t"}, sc)
	asc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})},
		{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2"})},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"", "x", "y"}, []bool{false, true, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	uri := tbl.Location() + "/data/by-hand.parquet"
	path := strings.TrimPrefix(uri, "file://")
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, uri, iceberg.ParquetFile, nil, nil, nil, 3, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	df := db.ValueCounts(map[int]int64{1: 3, 2: 1}).NullValueCounts(map[int]int64{1: 0, 2: 1}).
		LowerBoundValues(map[int][]byte{2: []byte("x")}).UpperBoundValues(map[int][]byte{2: []byte("y")}).Build()
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, []iceberg.DataFile{df}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if d := fixture.Exact(e.TableIDs("db.t"), 1, 3); d != "" {
		t.Fatal(d)
	}
	for f, want := range map[string]string{"value IS NOT NULL": "2\n3", "value = 'y'": "3", "value IS NULL": "1"} {
		r := e.OK("scan", "db.t", "--filter", f, "--keep", "id", "--output-format", "csv")
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:]
		sort.Strings(lines)
		if got := strings.Join(lines, "\n"); got != want {
			t.Errorf("--filter %q: ids %q, want %q", f, got, want)
		}
	}
	var plan struct {
		Planned int `json:"files_planned"`
	}
	r := e.OK("scan", "db.t", "--filter", "value IS NOT NULL", "--explain", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &plan); err != nil || plan.Planned != 1 {
		t.Errorf("explain plans %d files (%v), want the 1 file: %s", plan.Planned, err, r.Stdout)
	}
}

// The name-mapped peer table read at its first snapshot: its data file has
// no field ids, and the table's current name mapping gives column b the
// new id 3, while the snapshot's schema reads b as field 2. The file thus
// has no field 2 and b reads as NULL on every row, whatever metrics its
// manifest recorded for field 2 (no nulls) when the file was added. The
// expected rows come from the Parquet file itself, read with pqarrow and
// resolved through the name mapping by hand.
func TestPeerNameMappingAtOldSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := openPeer(t, "name_mapping")
	const snap = "6597550917742534971"
	var md struct {
		Props     map[string]string `json:"properties"`
		Snapshots []struct {
			ID       json.Number `json:"snapshot-id"`
			SchemaID int         `json:"schema-id"`
		} `json:"snapshots"`
		Schemas []struct {
			ID     int             `json:"schema-id"`
			Fields json.RawMessage `json:"fields"`
		} `json:"schemas"`
	}
	raw, err := os.ReadFile(p.meta)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&md); err != nil {
		t.Fatal(err)
	}
	var schemaID = -1
	for _, s := range md.Snapshots {
		if s.ID.String() == snap {
			schemaID = s.SchemaID
		}
	}
	var fieldsJSON json.RawMessage
	for _, s := range md.Schemas {
		if s.ID == schemaID {
			fieldsJSON = s.Fields
		}
	}
	typ, err := canonical.ParseType(json.RawMessage(`{"type":"struct","fields":` + string(fieldsJSON) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal(fieldsJSON, &ids); err != nil {
		t.Fatal(err)
	}
	var mapping []struct {
		Names []string `json:"names"`
		ID    int      `json:"field-id"`
	}
	if err := json.Unmarshal([]byte(md.Props["schema.name-mapping.default"]), &mapping); err != nil {
		t.Fatal(err)
	}
	// The snapshot's live data files, as iceberg-go plans them.
	id, _ := strconv.ParseInt(snap, 10, 64)
	peer := fixture.Shared(t, "fixtures/peer-tables")
	tbl, err := catalogs.LoadTableAt(context.Background(), p.loc, nil, []catalogs.PathPrefix{{From: "data/persistent/name_mapping/", To: filepath.Join(peer, "tables", "name_mapping") + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan(table.WithSnapshotID(id)).PlanFiles(context.Background())
	if err != nil || len(tasks) == 0 {
		t.Fatalf("plan snapshot %s: %d files, %v", snap, len(tasks), err)
	}
	var want []string
	for _, task := range tasks {
		local := strings.Replace(task.File.FilePath(), "data/persistent/name_mapping/", filepath.Join(peer, "tables", "name_mapping")+"/", 1)
		data, err := fixture.ReadParquetFile(local)
		if err != nil {
			t.Fatal(err)
		}
		// column of each schema field: the file column one of the field's
		// mapped names names, or none.
		cols := make([]arrow.Array, len(typ.Fields))
		for i := range typ.Fields {
			for _, m := range mapping {
				if m.ID != ids[i].ID {
					continue
				}
				for j, af := range data.Schema().Fields() {
					if slices.Contains(m.Names, af.Name) {
						cols[i] = concat(t, data.Column(j).Data().Chunks())
						defer cols[i].Release()
					}
				}
			}
		}
		for r := 0; r < int(data.NumRows()); r++ {
			obj := canonical.Object{}
			var b any
			for i, f := range typ.Fields {
				var v any
				if cols[i] != nil && cols[i].IsValid(r) {
					v = json.Number(cols[i].ValueStr(r))
				}
				cv, err := canonical.Value(v, f.Type)
				if err != nil {
					t.Fatal(err)
				}
				if f.Name == "b" {
					b = cv
				}
				obj = append(obj, canonical.KV{Key: f.Name, Value: cv})
			}
			if b == nil { // b IS NULL
				want = append(want, canonical.JSON(obj))
			}
		}
		data.Release()
	}
	sort.Strings(want)
	if len(want) == 0 {
		t.Fatal("no expected rows: the fixture changed")
	}
	p.fields = typ.Fields
	sameRows(t, "b IS NULL at snapshot "+snap, p.scan(t, e, nil, "--snapshot-id", snap, "--filter", "b IS NULL"), want)
	if n := p.count(t, e, "--snapshot-id", snap, "--filter", "b IS NULL"); n != len(want) {
		t.Errorf("count of b IS NULL at snapshot %s = %d, want %d", snap, n, len(want))
	}
	if n := p.count(t, e, "--snapshot-id", snap, "--filter", "b IS NOT NULL"); n != 0 {
		t.Errorf("count of b IS NOT NULL at snapshot %s = %d, want 0", snap, n)
	}
}

func concat(t *testing.T, chunks []arrow.Array) arrow.Array {
	t.Helper()
	a, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The binary's part of a scan's option errors: --limit and
// --as-of-timestamp are checked as flags, and an error package scan finds
// (scan.TestOptionErrors) exits 2 with its message, also with --count.
func TestScanOptionErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK(e.StreamArgs("db.t", "--trigger", "available-now")...)
	first := time.UnixMilli(e.Snapshots("db.t")[0].TimestampMs).UTC().Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--as-of-timestamp", "0", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--as-of-timestamp", "1970-01-01T00:00:00Z", "--count"}, []string{"its history starts at " + first}},
		{[]string{"--keep", "nope"}, []string{`no column "nope"`}},
		{[]string{"--drop", "nope", "--count"}, []string{`drop`, `no column "nope"`}},
		{[]string{"--limit", "-1"}, []string{"--limit -1", "0 for all"}},
		{[]string{"--limit", "-1", "--count"}, []string{"--limit -1"}},
	} {
		r := e.Run(append([]string{"scan", "db.t"}, c.args...)...)
		ok := r.Code == 2
		for _, w := range c.want {
			ok = ok && strings.Contains(r.Stderr, w)
		}
		if !ok {
			t.Errorf("scan %v: want exit 2 naming %q, got %s", c.args, c.want, r)
		}
	}
	if n := e.Count("db.t"); n != 10 {
		t.Errorf("count %d, want 10", n)
	}
	r := e.OK("scan", "db.t", "--as-of-timestamp", strconv.FormatInt(e.Snapshots("db.t")[0].TimestampMs, 10), "--count")
	if strings.TrimSpace(r.Stdout) != "10" {
		t.Errorf("as of the first snapshot: %s", r.Stdout)
	}
}
