package scan_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/canonical"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/scan"
)

// Tables written by other engines (shared/fixtures/peer-tables, see its
// README), one subtest each: the rows a scan returns, printed as `floe
// scan --output-format jsonl` prints them and put in the canonical form
// that interop/check.mjs defines, must equal the rows in
// testdata/peer/<table>.jsonl. Those files were derived without floe: their
// first line says from where (both independent readers of interop/check.mjs
// agreeing, or the spec applied by hand to the data files where one of
// those readers lacks the feature under test). Big tables are checked by
// count; out-of-spec tables must be refused with a message naming the
// problem (a failed run, exit 1 in the binary), never a panic.
func TestPeerTables(t *testing.T) {
	t.Parallel()
	peer := fixture.Shared(t, "fixtures/peer-tables")
	var cases []peerCase
	raw, err := os.ReadFile(filepath.Join("testdata", "peer", "tables.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Skip != "" {
				t.Skip(c.Skip)
			}
			tbl, err := loadPeer(peer, c)
			switch c.Kind {
			case "reject":
				if err == nil {
					_, err = jsonLines(tbl, scan.Options{})
				}
				if err == nil || errors.Is(err, ingest.ErrConfig) || !strings.Contains(err.Error(), c.Error) || strings.Contains(err.Error(), "internal error") {
					t.Fatalf("want a failed read with a message containing %q, got %v", c.Error, err)
				}
			case "count":
				if err != nil {
					t.Fatal(err)
				}
				n, err := scan.Count(context.Background(), tbl, scan.Options{})
				if err != nil || n != c.Count {
					t.Fatalf("want %d rows, got %d, %v", c.Count, n, err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				checkPeerRows(t, c, filepath.Join(peer, "tables", c.Metadata), tbl)
			}
		})
	}
}

// loadPeer loads case c's table by location, with its path prefixes, as
// `floe scan LOC --path-prefix FROM=TO` does.
func loadPeer(peer string, c peerCase) (*table.Table, error) {
	var prefixes []catalogs.PathPrefix
	for _, p := range c.Prefixes {
		prefixes = append(prefixes, catalogs.PathPrefix{From: p[0], To: filepath.Join(peer, p[1])})
	}
	return catalogs.LoadTableAt(context.Background(), filepath.Join(peer, "tables", c.Metadata), nil, prefixes)
}

// jsonLines reads the table as `floe scan --output-format jsonl` prints
// it: records from floe's pool, each as JSON lines by arrow-go.
func jsonLines(tbl *table.Table, o scan.Options) (string, error) {
	o.Allocator = arrowpool.New()
	_, recs, err := scan.Table(context.Background(), tbl, o)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	for rec, err := range recs {
		if err != nil {
			return "", err
		}
		err = array.RecordToJSON(rec, &out)
		rec.Release()
		if err != nil {
			return "", err
		}
	}
	return out.String(), nil
}

// flagOptions are the scan options `floe scan` makes of these flags, so
// that the cases read as the commands they stand for.
func flagOptions(t *testing.T, flags ...string) scan.Options {
	t.Helper()
	var o scan.Options
	if len(flags)%2 != 0 {
		t.Fatalf("flags %q are not pairs", flags)
	}
	for i := 0; i < len(flags); i += 2 {
		v := flags[i+1]
		switch flags[i] {
		case "--filter":
			o.Filter = v
		case "--keep":
			o.Columns = config.SplitList(v)
		case "--branch":
			o.Branch = v
		case "--snapshot-id", "--as-of-timestamp":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s %s: %v", flags[i], v, err)
			}
			if flags[i] == "--snapshot-id" {
				o.SnapshotID = n
			} else {
				o.AsOfMs = &n
			}
		default:
			t.Fatalf("flag %s is not one these tests use", flags[i])
		}
	}
	return o
}

// peerCase is one entry of testdata/peer/tables.json.
type peerCase struct {
	Name     string      `json:"name"`
	Metadata string      `json:"metadata"` // under tables/: a directory or a metadata file
	Prefixes [][2]string `json:"prefixes"` // FROM, TO relative to the peer-tables folder
	Kind     string      `json:"kind"`     // rows, count or reject
	Count    int64       `json:"count"`
	Error    string      `json:"error"` // for reject: text the message must contain
	Skip     string      `json:"skip"`
	// Rows names the expected rows' file when another case's holds them
	// (testdata/peer/<rows>.jsonl); by default it is named after the case.
	Rows string `json:"rows"`
}

// rowsFile is the file of the rows expected of case c.
func (c peerCase) rowsFile() string {
	name := c.Rows
	if name == "" {
		name = strings.ReplaceAll(c.Name, "/", "__")
	}
	return filepath.Join("testdata", "peer", name+".jsonl")
}

func checkPeerRows(t *testing.T, c peerCase, loc string, tbl *table.Table) {
	t.Helper()
	meta := loc
	if st, err := os.Stat(loc); err == nil && st.IsDir() {
		m, err := catalogs.FindMetadata(loc)
		if err != nil {
			t.Fatal(err)
		}
		meta = m
	}
	fields, err := currentSchema(meta)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonLines(tbl, scan.Options{})
	if err != nil {
		t.Fatalf("scan failed: %v", err)
	}
	got := canonicalRows(t, out, fields, nil)
	wantFile := c.rowsFile()
	want, err := readExpected(wantFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows differ from %s\n got (%d):\n%s\nwant (%d):\n%s", wantFile, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// readExpected reads canonical rows, skipping the "# source:" lines.
func readExpected(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	sort.Strings(rows)
	return rows, sc.Err()
}

// currentSchema returns the top-level fields of the metadata's current schema.
// canonicalRows reads JSON lines into canonical
// form, sorted, keeping the columns cols (every column when nil) and
// failing on a row with other columns.
func canonicalRows(t *testing.T, out string, fields []canonical.Field, cols []string) []string {
	t.Helper()
	var got []string
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	for dec.More() {
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("the scan's JSON lines are invalid: %v", err)
		}
		if cols != nil && len(row) != len(cols) {
			t.Fatalf("the scan read columns %v, want %v", row, cols)
		}
		obj := canonical.Object{}
		for _, f := range fields {
			if cols != nil && !slices.Contains(cols, f.Name) {
				continue
			}
			v, err := canonical.Value(row[f.Name], f.Type)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			obj = append(obj, canonical.KV{Key: f.Name, Value: v})
		}
		got = append(got, canonical.JSON(obj))
	}
	sort.Strings(got)
	return got
}

func currentSchema(path string) ([]canonical.Field, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m struct {
		CurrentSchemaID int `json:"current-schema-id"`
		Schemas         []struct {
			ID     int             `json:"schema-id"`
			Fields json.RawMessage `json:"fields"`
		} `json:"schemas"`
		Schema *struct {
			Fields json.RawMessage `json:"fields"`
		} `json:"schema"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var fields json.RawMessage
	for _, s := range m.Schemas {
		if s.ID == m.CurrentSchemaID {
			fields = s.Fields
		}
	}
	if fields == nil && m.Schema != nil {
		fields = m.Schema.Fields
	}
	typ, err := canonical.ParseType(json.RawMessage(`{"type":"struct","fields":` + string(fields) + `}`))
	if err != nil {
		return nil, err
	}
	return typ.Fields, nil
}

// peerTable is a case of testdata/peer/tables.json with the rows derived
// for it without floe (testdata/peer/<name>.jsonl, see TestPeerTables),
// for reads with filters and column selections: the expected rows are
// those rows, kept by a predicate written here and cut to the selected
// columns.
type peerTable struct {
	loc, meta string
	tbl       *table.Table
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
	if p.tbl, err = loadPeer(peer, c); err != nil {
		t.Fatal(err)
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

// scan reads the table with the options of the scan command's flags and
// returns its rows in canonical form, with the columns cols (every column
// when nil).
func (p peerTable) scan(t *testing.T, cols []string, flags ...string) []string {
	t.Helper()
	out, err := jsonLines(p.tbl, flagOptions(t, flags...))
	if err != nil {
		t.Fatalf("scan %v: %v", flags, err)
	}
	return canonicalRows(t, out, p.fields, cols)
}

// refused fails unless a read with the options of flags is a configuration
// error (exit 2 in the binary) naming want.
func (p peerTable) refused(t *testing.T, want string, flags ...string) {
	t.Helper()
	_, err := jsonLines(p.tbl, flagOptions(t, flags...))
	configError(t, fmt.Sprint(flags), err, want)
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

// count counts the table's rows with the options of the scan command's
// flags.
func (p peerTable) count(t *testing.T, flags ...string) int {
	t.Helper()
	n, err := scan.Count(context.Background(), p.tbl, flagOptions(t, flags...))
	if err != nil {
		t.Fatalf("count %v: %v", flags, err)
	}
	return int(n)
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
		sameRows(t, c.table+" --filter "+c.filter, p.scan(t, nil, "--filter", c.filter), want)
		if n := p.count(t, "--filter", c.filter); n != len(want) {
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
	p := openPeer(t, "icebird/spark_rename_column")
	date := func(days string) func(map[string]any) bool {
		return func(r map[string]any) bool { return r["event_date"] == days }
	}
	ids := []string{"id", "event_date"}
	for _, at := range [][]string{nil, {"--branch", "main"}} {
		sameRows(t, fmt.Sprint(at, " --keep id,event_date"), p.scan(t, ids, append(at, "--keep", "id,event_date")...), p.want(ids, always))
		sameRows(t, fmt.Sprint(at, " event_date = 2022-01-01"), p.scan(t, nil, append(at, "--filter", "event_date = DATE '2022-01-01'")...), p.want(nil, date("18993")))
		sameRows(t, fmt.Sprint(at, " event_date IS NULL"), p.scan(t, ids, append(at, "--filter", "event_date IS NULL", "--keep", "id,event_date")...),
			p.want(ids, func(r map[string]any) bool { return r["event_date"] == nil }))
		if n := p.count(t, append(at, "--filter", "event_date > DATE '2022-01-01'")...); n != 1 {
			t.Errorf("%v event_date > 2022-01-01 counts %d, want 1", at, n)
		}
		p.refused(t, `no column "date"`, append(at, "--keep", "date")...)
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
		sameRows(t, fmt.Sprint(at), old.scan(t, nil, at...), old.want(nil, always))
		sameRows(t, fmt.Sprint(at, " date IS NULL"), old.scan(t, []string{"id", "date"}, append(at, "--filter", "date IS NULL", "--keep", "id,date")...),
			old.want([]string{"id", "date"}, func(r map[string]any) bool { return r["date"] == nil }))
		p.refused(t, `no column "event_date"`, append(at, "--keep", "event_date")...)
	}

	b := openPeer(t, "icebird/java_bunnies_v3")
	kept := []string{"Breed Name", "__happy__"}
	sameRows(t, "--keep Breed Name,__happy__", b.scan(t, kept, "--keep", "Breed Name,__happy__"), b.want(kept, always))
	sameRows(t, "__happy__ IS NULL", b.scan(t, nil, "--filter", "__happy__ IS NULL"), b.want(nil, always))
	if n := b.count(t, "--filter", "__happy__ = TRUE"); n != 0 {
		t.Errorf("__happy__ = TRUE counts %d, want 0", n)
	}
	snap, _ = currentSnapshot(t, b.meta)
	b.refused(t, `no column "__happy__"`, "--snapshot-id", snap, "--keep", "__happy__")
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
		sameRows(t, strings.Join(args, " "), p.scan(t, c.keep, args...), p.want(c.keep, c.match))
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
	out, err := jsonLines(ps.tbl, scan.Options{Columns: []string{"a.col_integer"}})
	got := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(got)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("--keep a.col_integer: want %q, got %q, %v", want, got, err)
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
						cols[i] = concatChunks(t, data.Column(j).Data().Chunks())
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
	sameRows(t, "b IS NULL at snapshot "+snap, p.scan(t, nil, "--snapshot-id", snap, "--filter", "b IS NULL"), want)
	if n := p.count(t, "--snapshot-id", snap, "--filter", "b IS NULL"); n != len(want) {
		t.Errorf("count of b IS NULL at snapshot %s = %d, want %d", snap, n, len(want))
	}
	if n := p.count(t, "--snapshot-id", snap, "--filter", "b IS NOT NULL"); n != 0 {
		t.Errorf("count of b IS NOT NULL at snapshot %s = %d, want 0", snap, n)
	}
}

func concatChunks(t *testing.T, chunks []arrow.Array) arrow.Array {
	t.Helper()
	a, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
