package interop_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file computes, from `floe scan --format jsonl`, the same STATS that
// check.mjs computes with icebird and DuckDB. The canonical form is defined
// in check.mjs's header comment; the two must change together.

// Stats is what each reader reports for one table.
type Stats struct {
	Rows     int64             `json:"rows"`
	NonNull  map[string]int64  `json:"nonNull"`
	Sums     map[string]string `json:"sums"`
	Checksum string            `json:"checksum"`
}

// icebergType is a parsed Iceberg type from the table schema JSON.
type icebergType struct {
	kind      string // boolean, int, ..., decimal, fixed, struct, list, map
	scale     int
	fields    []icebergField
	elem      *icebergType
	key, vals *icebergType
}

type icebergField struct {
	ID   int
	Name string
	Type *icebergType
}

var decimalRe = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)

// parseIcebergType parses a type as the table metadata JSON writes it.
func parseIcebergType(raw json.RawMessage) (*icebergType, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if m := decimalRe.FindStringSubmatch(s); m != nil {
			sc, _ := strconv.Atoi(m[2])
			return &icebergType{kind: "decimal", scale: sc}, nil
		}
		if strings.HasPrefix(s, "fixed[") {
			return &icebergType{kind: "fixed"}, nil
		}
		switch s {
		case "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary":
			return &icebergType{kind: s}, nil
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
		t := &icebergType{kind: "struct"}
		for _, f := range obj.Fields {
			ft, err := parseIcebergType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			t.fields = append(t.fields, icebergField{ID: f.ID, Name: f.Name, Type: ft})
		}
		return t, nil
	case "list":
		e, err := parseIcebergType(obj.Element)
		if err != nil {
			return nil, err
		}
		return &icebergType{kind: "list", elem: e}, nil
	case "map":
		k, err := parseIcebergType(obj.Key)
		if err != nil {
			return nil, err
		}
		v, err := parseIcebergType(obj.Value)
		if err != nil {
			return nil, err
		}
		return &icebergType{kind: "map", key: k, vals: v}, nil
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
func canonFloe(v any, t *icebergType) (any, error) {
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
	if len(fp) > scale || strings.ContainsAny(s, "eE") {
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

// statsAcc accumulates Stats over canonical rows.
type statsAcc struct {
	fields  []icebergField
	rows    int64
	nonNull []int64
	ints    []*big.Int
	floats  [][]float64
	sum     uint64
	dump    io.Writer // if set, canonical rows are written here
}

func newStatsAcc(fields []icebergField) *statsAcc {
	a := &statsAcc{fields: fields, nonNull: make([]int64, len(fields)), ints: make([]*big.Int, len(fields)), floats: make([][]float64, len(fields))}
	for i := range a.ints {
		a.ints[i] = new(big.Int)
	}
	return a
}

func (a *statsAcc) add(vals []any) error {
	row := orderedObj{}
	for i, f := range a.fields {
		row = append(row, kv{f.Name, vals[i]})
	}
	j := toCanonJSON(row)
	if a.dump != nil {
		fmt.Fprintf(a.dump, "floe: %s\n", j)
	}
	h := sha256.Sum256([]byte(j))
	a.sum += binary.BigEndian.Uint64(h[:8])
	a.rows++
	for i, f := range a.fields {
		if vals[i] == nil {
			continue
		}
		a.nonNull[i]++
		s, _ := vals[i].(string)
		switch f.Type.kind {
		case "int", "long", "decimal":
			n, ok := new(big.Int).SetString(s, 10)
			if !ok {
				return fmt.Errorf("%s: %q is not an integer", f.Name, s)
			}
			a.ints[i].Add(a.ints[i], n)
		case "float", "double":
			if s == "NaN" {
				a.floats[i] = append(a.floats[i], math.NaN())
				continue
			}
			bits, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return err
			}
			if f.Type.kind == "float" {
				a.floats[i] = append(a.floats[i], float64(math.Float32frombits(uint32(bits))))
			} else {
				a.floats[i] = append(a.floats[i], math.Float64frombits(bits))
			}
		}
	}
	return nil
}

func (a *statsAcc) result() Stats {
	st := Stats{Rows: a.rows, NonNull: map[string]int64{}, Sums: map[string]string{}, Checksum: fmt.Sprintf("%016x", a.sum)}
	for i, f := range a.fields {
		st.NonNull[f.Name] = a.nonNull[i]
		switch f.Type.kind {
		case "int", "long":
			st.Sums[f.Name] = a.ints[i].String()
		case "decimal":
			st.Sums[f.Name] = decimalString(a.ints[i], f.Type.scale)
		case "float", "double":
			st.Sums[f.Name] = floatSum(a.floats[i])
		}
	}
	return st
}

// floatSum adds the values in ascending order, as check.mjs does, and
// formats like JavaScript's toExponential(5).
func floatSum(xs []float64) string {
	if len(xs) == 0 {
		return "0"
	}
	for _, x := range xs {
		if math.IsNaN(x) {
			return "NaN"
		}
	}
	sort.Float64s(xs)
	var s float64
	for _, x := range xs {
		s += x
	}
	return jsExponential(s)
}

// jsExponential formats like Number.prototype.toExponential(5): "2.20000e+0".
func jsExponential(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	if math.IsInf(x, 1) {
		return "Infinity"
	}
	if math.IsInf(x, -1) {
		return "-Infinity"
	}
	s := strconv.FormatFloat(x, 'e', 5, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	if digits == "" {
		digits = "0"
	}
	if mant == "-0.00000" {
		mant = "0.00000" // JavaScript prints -0 as 0
	}
	return mant + "e" + sign + digits
}

func decimalString(n *big.Int, scale int) string {
	if scale == 0 {
		return n.String()
	}
	neg := n.Sign() < 0
	d := new(big.Int).Abs(n).String()
	if len(d) < scale+1 {
		d = strings.Repeat("0", scale+1-len(d)) + d
	}
	out := d[:len(d)-scale] + "." + d[len(d)-scale:]
	if neg {
		out = "-" + out
	}
	return out
}

// statsFromJSONL computes Stats from `floe scan --format jsonl` output.
func statsFromJSONL(fields []icebergField, jsonl []byte, dump io.Writer) (Stats, error) {
	acc := newStatsAcc(fields)
	acc.dump = dump
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !utf8.Valid(sc.Bytes()) {
			return Stats{}, fmt.Errorf("jsonl line %d is not UTF-8", line)
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return Stats{}, fmt.Errorf("jsonl line %d: %w", line, err)
		}
		vals := make([]any, len(fields))
		for i, f := range fields {
			c, err := canonFloe(m[f.Name], f.Type)
			if err != nil {
				return Stats{}, fmt.Errorf("jsonl line %d, column %s: %w", line, f.Name, err)
			}
			vals[i] = c
		}
		if err := acc.add(vals); err != nil {
			return Stats{}, err
		}
	}
	if err := sc.Err(); err != nil {
		return Stats{}, err
	}
	return acc.result(), nil
}

// compareStats returns an error naming every difference between floe's
// stats and each checker reader's.
func compareStats(floe Stats, readers map[string]Stats) error {
	var diffs []string
	for _, name := range []string{"icebird", "duckdb"} {
		got, ok := readers[name]
		if !ok {
			diffs = append(diffs, name+": no stats reported")
			continue
		}
		if got.Rows != floe.Rows {
			diffs = append(diffs, fmt.Sprintf("%s: rows %d, floe %d", name, got.Rows, floe.Rows))
		}
		for _, k := range unionKeys(got.NonNull, floe.NonNull) {
			if g, w := got.NonNull[k], floe.NonNull[k]; g != w {
				diffs = append(diffs, fmt.Sprintf("%s: nonNull[%s] %d, floe %d", name, k, g, w))
			}
		}
		for _, k := range unionKeys(got.Sums, floe.Sums) {
			if g, w := got.Sums[k], floe.Sums[k]; g != w {
				diffs = append(diffs, fmt.Sprintf("%s: sums[%s] %q, floe %q", name, k, g, w))
			}
		}
		if got.Checksum != floe.Checksum {
			diffs = append(diffs, fmt.Sprintf("%s: checksum %s, floe %s", name, got.Checksum, floe.Checksum))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("readers disagree with floe:\n  %s", strings.Join(diffs, "\n  "))
	}
	return nil
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
