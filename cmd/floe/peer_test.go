package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/canonical"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
)

// Tables written by other engines (shared/fixtures/peer-tables, see its
// README), one subtest each: floe's rows, put in the canonical form that
// interop/check.mjs defines, must equal the rows in testdata/peer/<table>.jsonl.
// Those files were derived without floe: their first line says from where
// (both independent readers of interop/check.mjs agreeing, or the spec
// applied by hand to the data files where one of those readers lacks the
// feature under test). Big tables are checked by count; out-of-spec tables
// must be refused with a message naming the problem, never a panic.
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
	e := newEnv(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Skip != "" {
				t.Skip(c.Skip)
			}
			loc := filepath.Join(peer, "tables", c.Metadata)
			args := []string{"scan", loc}
			for _, p := range c.Prefixes {
				args = append(args, "--path-prefix", p[0]+"="+filepath.Join(peer, p[1]))
			}
			switch c.Kind {
			case "reject":
				r := e.Run(args...)
				if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "internal error") {
					t.Fatalf("floe crashed: %s", r)
				}
				if r.Code != 1 || !strings.Contains(r.Stderr, c.Error) {
					t.Fatalf("want exit 1 with a message containing %q, got %s", c.Error, r)
				}
			case "count":
				r := e.Run(append(args, "--count")...)
				if r.Code != 0 || strings.TrimSpace(r.Stdout) != strconv.FormatInt(c.Count, 10) {
					t.Fatalf("want %d rows, got %s", c.Count, r)
				}
			default:
				checkPeerRows(t, e, c, loc, args)
			}
		})
	}
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

func checkPeerRows(t *testing.T, e *env, c peerCase, loc string, args []string) {
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
	r := e.Run(append(args, "--format", "jsonl")...)
	if r.Code != 0 {
		t.Fatalf("scan failed: %s", r)
	}
	got := canonicalRows(t, r.Stdout, fields, nil)
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
// canonicalRows reads the JSON lines floe scan printed into canonical
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
			t.Fatalf("floe printed invalid JSON: %v", err)
		}
		if cols != nil && len(row) != len(cols) {
			t.Fatalf("scan printed columns %v, want %v", row, cols)
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

// The canonical form below is copied from interop/stats_test.go (test code
// cannot be imported); check.mjs's header comment defines it.
