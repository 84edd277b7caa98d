// Package canonical turns rows read from Iceberg tables into one canonical
// JSON form, so that tests can compare what different readers return (floe's
// own scan, icebird, DuckDB) value by value. The form is defined in
// interop/check.mjs, which produces the same bytes.
package canonical

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Type is a parsed Iceberg type from the table schema JSON.
type Type struct {
	Kind        string // boolean, int, ..., decimal, fixed, struct, list, map
	Scale       int
	Fields      []Field
	Elem        *Type
	Key, Values *Type
}

// Field is a field of a struct type or of the table schema.
type Field struct {
	ID   int
	Name string
	Type *Type
}

var decimalRe = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)

// ParseType parses a type as the table metadata JSON writes it.
func ParseType(raw json.RawMessage) (*Type, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if m := decimalRe.FindStringSubmatch(s); m != nil {
			sc, _ := strconv.Atoi(m[2])
			return &Type{Kind: "decimal", Scale: sc}, nil
		}
		if strings.HasPrefix(s, "fixed[") {
			return &Type{Kind: "fixed"}, nil
		}
		switch s {
		case "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary":
			return &Type{Kind: s}, nil
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
		t := &Type{Kind: "struct"}
		for _, f := range obj.Fields {
			ft, err := ParseType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			t.Fields = append(t.Fields, Field{ID: f.ID, Name: f.Name, Type: ft})
		}
		return t, nil
	case "list":
		e, err := ParseType(obj.Element)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: "list", Elem: e}, nil
	case "map":
		k, err := ParseType(obj.Key)
		if err != nil {
			return nil, err
		}
		v, err := ParseType(obj.Value)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: "map", Key: k, Values: v}, nil
	}
	return nil, fmt.Errorf("iceberg type %s is not supported", raw)
}

// Object is a JSON object whose keys keep schema order.
type Object []KV

// KV is one key and its canonical value.
type KV struct {
	Key   string
	Value any
}

// canonJSON writes a canonical value (nil, bool, string, []any, Object)
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
	case Object:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonString(b, e.Key)
			b.WriteByte(':')
			canonJSON(b, e.Value)
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

func JSON(v any) string {
	var b strings.Builder
	canonJSON(&b, v)
	return b.String()
}

// Value canonicalises one value of floe's jsonl output (arrow-go's JSON
// encoding, decoded with UseNumber) by its Iceberg type.
func Value(v any, t *Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	num := func() (string, error) {
		n, ok := v.(json.Number)
		if !ok {
			return "", fmt.Errorf("%s value %v (%T) is not a JSON number", t.Kind, v, v)
		}
		return n.String(), nil
	}
	str := func() (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s value %v (%T) is not a JSON string", t.Kind, v, v)
		}
		return s, nil
	}
	switch t.Kind {
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
			return nil, fmt.Errorf("%s value %s: %w", t.Kind, s, err)
		}
		return strconv.FormatInt(n, 10), nil
	case "float", "double":
		s, err := floatText(v)
		if err != nil {
			return nil, err
		}
		if t.Kind == "float" {
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
		u, err := unscaled(s, t.Scale)
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
			return nil, fmt.Errorf("%s value %q: %w", t.Kind, s, err)
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
			return nil, fmt.Errorf("%s value %q is not base64: %w", t.Kind, s, err)
		}
		return hex.EncodeToString(b), nil
	case "struct":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("struct value %v (%T)", v, v)
		}
		out := Object{}
		for _, f := range t.Fields {
			c, err := Value(m[f.Name], f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out = append(out, KV{f.Name, c})
		}
		return out, nil
	case "list":
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("list value %v (%T)", v, v)
		}
		out := []any{}
		for _, e := range a {
			c, err := Value(e, t.Elem)
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
			k, err := Value(m["key"], t.Key)
			if err != nil {
				return nil, err
			}
			val, err := Value(m["value"], t.Values)
			if err != nil {
				return nil, err
			}
			p := []any{k, val}
			pairs = append(pairs, pair{JSON(p), p})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].json < pairs[j].json })
		out := []any{}
		for _, p := range pairs {
			out = append(out, p.v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("type %s is not supported", t.Kind)
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
