package main_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe"
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
	peer := filepath.Join(sharedDir(t), "fixtures", "peer-tables")
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
				r := e.run(args...)
				if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "internal error") {
					t.Fatalf("floe crashed: %s", r)
				}
				if r.code != 1 || !strings.Contains(r.stderr, c.Error) {
					t.Fatalf("want exit 1 with a message containing %q, got %s", c.Error, r)
				}
			case "count":
				r := e.run(append(args, "--count")...)
				if r.code != 0 || strings.TrimSpace(r.stdout) != strconv.FormatInt(c.Count, 10) {
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
}

func checkPeerRows(t *testing.T, e *env, c peerCase, loc string, args []string) {
	t.Helper()
	meta := loc
	if st, err := os.Stat(loc); err == nil && st.IsDir() {
		m, err := floe.FindMetadata(loc)
		if err != nil {
			t.Fatal(err)
		}
		meta = m
	}
	fields, err := currentSchema(meta)
	if err != nil {
		t.Fatal(err)
	}
	r := e.run(append(args, "--format", "jsonl")...)
	if r.code != 0 {
		t.Fatalf("scan failed: %s", r)
	}
	var got []string
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	for dec.More() {
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("floe printed invalid JSON: %v", err)
		}
		obj := orderedObj{}
		for _, f := range fields {
			v, err := canonFloe(row[f.Name], f.Type)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			obj = append(obj, kv{f.Name, v})
		}
		got = append(got, toCanonJSON(obj))
	}
	sort.Strings(got)
	wantFile := filepath.Join("testdata", "peer", strings.ReplaceAll(c.Name, "/", "__")+".jsonl")
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
func currentSchema(path string) ([]peerField, error) {
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
	typ, err := parsePeerType(json.RawMessage(`{"type":"struct","fields":` + string(fields) + `}`))
	if err != nil {
		return nil, err
	}
	return typ.fields, nil
}

// The canonical form below is copied from interop/stats_test.go (test code
// cannot be imported); check.mjs's header comment defines it.

// peerType is a parsed Iceberg type from the table schema JSON.
type peerType struct {
	kind      string // boolean, int, ..., decimal, fixed, struct, list, map
	scale     int
	fields    []peerField
	elem      *peerType
	key, vals *peerType
}

type peerField struct {
	ID   int
	Name string
	Type *peerType
}

var decimalRe = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)

// parsePeerType parses a type as the table metadata JSON writes it.
func parsePeerType(raw json.RawMessage) (*peerType, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if m := decimalRe.FindStringSubmatch(s); m != nil {
			sc, _ := strconv.Atoi(m[2])
			return &peerType{kind: "decimal", scale: sc}, nil
		}
		if strings.HasPrefix(s, "fixed[") {
			return &peerType{kind: "fixed"}, nil
		}
		switch s {
		case "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary":
			return &peerType{kind: s}, nil
		}
		return nil, fmt.Errorf("iceberg type %q is not supported by the interop checker", s)
	}
	var obj struct {
		Type   string `json:"type"`
		Fields []struct {
			ID   int             `json:"id"`
			Name string          `json:"name"`
			Type json.RawMessage `json:"type"`
		} `json:"fields"`
		Element json.RawMessage `json:"element"`
		Key     json.RawMessage `json:"key"`
		Value   json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("iceberg type %s: %w", raw, err)
	}
	switch obj.Type {
	case "struct":
		t := &peerType{kind: "struct"}
		for _, f := range obj.Fields {
			ft, err := parsePeerType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			t.fields = append(t.fields, peerField{ID: f.ID, Name: f.Name, Type: ft})
		}
		return t, nil
	case "list":
		e, err := parsePeerType(obj.Element)
		if err != nil {
			return nil, err
		}
		return &peerType{kind: "list", elem: e}, nil
	case "map":
		k, err := parsePeerType(obj.Key)
		if err != nil {
			return nil, err
		}
		v, err := parsePeerType(obj.Value)
		if err != nil {
			return nil, err
		}
		return &peerType{kind: "map", key: k, vals: v}, nil
	}
	return nil, fmt.Errorf("iceberg type %s is not supported", raw)
}

// orderedObj is a JSON object whose keys keep schema order.
type orderedObj []kv

type kv struct {
	k string
	v any
}

// canonJSON writes a canonical value (nil, bool, string, []any, orderedObj)
// exactly as check.mjs's toJSON does.
func canonJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		jsonString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			canonJSON(b, e)
		}
		b.WriteByte(']')
	case orderedObj:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, e.k)
			b.WriteByte(':')
			canonJSON(b, e.v)
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("not a canonical value: %T", v))
	}
}

// jsonString escapes only '"', '\' and control characters, as check.mjs does,
// so both sides hash the same bytes (Go's encoding/json escapes more).
func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func toCanonJSON(v any) string {
	var b strings.Builder
	canonJSON(&b, v)
	return b.String()
}

// canonFloe canonicalises one value of floe's jsonl output (arrow-go's JSON
// encoding, decoded with UseNumber) by its Iceberg type.
func canonFloe(v any, t *peerType) (any, error) {
	if v == nil {
		return nil, nil
	}
	num := func() (string, error) {
		n, ok := v.(json.Number)
		if !ok {
			return "", fmt.Errorf("%s value %v (%T) is not a JSON number", t.kind, v, v)
		}
		return n.String(), nil
	}
	str := func() (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s value %v (%T) is not a JSON string", t.kind, v, v)
		}
		return s, nil
	}
	switch t.kind {
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("boolean value %v (%T)", v, v)
		}
		return b, nil
	case "int", "long":
		s, err := num()
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s value %s: %w", t.kind, s, err)
		}
		return strconv.FormatInt(n, 10), nil
	case "float", "double":
		s, err := floatText(v)
		if err != nil {
			return nil, err
		}
		if t.kind == "float" {
			f, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, fmt.Errorf("float value %s: %w", s, err)
			}
			if math.IsNaN(f) {
				return "NaN", nil
			}
			return fmt.Sprintf("%08x", math.Float32bits(float32(f))), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("double value %s: %w", s, err)
		}
		if math.IsNaN(f) {
			return "NaN", nil
		}
		return fmt.Sprintf("%016x", math.Float64bits(f)), nil
	case "decimal":
		s, err := decimalText(v)
		if err != nil {
			return nil, err
		}
		u, err := unscaled(s, t.scale)
		if err != nil {
			return nil, err
		}
		return u.String(), nil
	case "date":
		s, err := str()
		if err != nil {
			return nil, err
		}
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, fmt.Errorf("date value %q: %w", s, err)
		}
		return strconv.FormatInt(d.Unix()/86400, 10), nil
	case "time":
		s, err := str()
		if err != nil {
			return nil, err
		}
		d, err := time.Parse("15:04:05.999999999", s)
		if err != nil {
			return nil, fmt.Errorf("time value %q: %w", s, err)
		}
		midnight := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		return strconv.FormatInt(d.Sub(midnight).Microseconds(), 10), nil
	case "timestamp", "timestamptz":
		// arrow-go writes "2024-01-02T03:04:05.123456" (no zone) for
		// timestamp and a trailing "Z" for timestamptz; both are UTC.
		s, err := str()
		if err != nil {
			return nil, err
		}
		ts, err := time.Parse("2006-01-02T15:04:05.999999999", strings.TrimSuffix(strings.Replace(s, " ", "T", 1), "Z"))
		if err != nil {
			return nil, fmt.Errorf("%s value %q: %w", t.kind, s, err)
		}
		return strconv.FormatInt(ts.UnixMicro(), 10), nil
	case "string":
		return str()
	case "uuid":
		s, err := str()
		if err != nil {
			return nil, err
		}
		return strings.ToLower(s), nil
	case "binary", "fixed":
		// arrow-go writes binary as standard base64.
		s, err := str()
		if err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%s value %q is not base64: %w", t.kind, s, err)
		}
		return hex.EncodeToString(b), nil
	case "struct":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("struct value %v (%T)", v, v)
		}
		out := orderedObj{}
		for _, f := range t.fields {
			c, err := canonFloe(m[f.Name], f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out = append(out, kv{f.Name, c})
		}
		return out, nil
	case "list":
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("list value %v (%T)", v, v)
		}
		out := []any{}
		for _, e := range a {
			c, err := canonFloe(e, t.elem)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	case "map":
		// arrow-go writes a map as an array of {"key": K, "value": V}.
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("map value %v (%T)", v, v)
		}
		type pair struct {
			json string
			v    []any
		}
		var pairs []pair
		for _, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("map entry %v (%T)", e, e)
			}
			k, err := canonFloe(m["key"], t.key)
			if err != nil {
				return nil, err
			}
			val, err := canonFloe(m["value"], t.vals)
			if err != nil {
				return nil, err
			}
			p := []any{k, val}
			pairs = append(pairs, pair{toCanonJSON(p), p})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].json < pairs[j].json })
		out := []any{}
		for _, p := range pairs {
			out = append(out, p.v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("type %s is not supported", t.kind)
}

// floatText accepts a JSON number, or the strings arrow-go may use for
// non-finite values.
func floatText(v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("float value %v (%T)", v, v)
}

// decimalText accepts arrow-go's decimal encoding: a string such as
// "-123456.789" (or a number, which it used in some versions).
func decimalText(v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("decimal value %v (%T)", v, v)
}

// unscaled turns "-123.4" at scale 3 into -123400.
func unscaled(s string, scale int) (*big.Int, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	ip, fp, _ := strings.Cut(s, ".")
	if strings.ContainsAny(s, "eE") {
		// arrow-go writes small decimals in exponent form ("1e-11").
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, fmt.Errorf("decimal %q is not a number", s)
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		if !r.IsInt() {
			return nil, fmt.Errorf("decimal %q does not fit scale %d", s, scale)
		}
		n := new(big.Int).Set(r.Num())
		if neg {
			n.Neg(n)
		}
		return n, nil
	}
	if len(fp) > scale {
		return nil, fmt.Errorf("decimal %q does not fit scale %d", s, scale)
	}
	fp += strings.Repeat("0", scale-len(fp))
	n, ok := new(big.Int).SetString(ip+fp, 10)
	if !ok {
		return nil, fmt.Errorf("decimal %q is not a number", s)
	}
	if neg {
		n.Neg(n)
	}
	return n, nil
}
