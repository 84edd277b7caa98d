package jsonrows_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/jsonrows"
)

// twoPass is the reference: the columns inferred as before Rows, then the
// lines read by arrow-go, as floe read JSON before Rows.
func twoPass(lines []string) (*arrow.Schema, []arrow.RecordBatch, error) {
	root := newRefObject()
	for _, l := range lines {
		if err := root.observeLine([]byte(l)); err != nil {
			return nil, nil, err
		}
	}
	schema := root.schema()
	recs, err := readAll(schema, nil, lines)
	return schema, recs, err
}

// readAll reads lines with arrow-go's RecordBuilder.UnmarshalJSON, the
// values of asText rewritten as strings of their JSON text first.
func readAll(schema *arrow.Schema, asText []string, lines []string) ([]arrow.RecordBatch, error) {
	fields := slices.Clone(schema.Fields())
	for i := range fields {
		fields[i].Nullable = true
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	var out []arrow.RecordBatch
	flush := func() {
		rec := b.NewRecordBatch()
		out = append(out, array.NewRecordBatch(schema, rec.Columns(), rec.NumRows()))
		rec.Release()
	}
	n := 0
	for _, l := range lines {
		line := []byte(l)
		if len(asText) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(line, &obj); err != nil {
				return nil, err
			}
			for k, v := range obj {
				if slices.Contains(asText, k) && v[0] != '"' && string(v) != "null" {
					obj[k], _ = json.Marshal(string(v))
				}
			}
			line, _ = json.Marshal(obj)
		}
		if err := b.UnmarshalJSON(line); err != nil {
			return nil, err
		}
		if n++; n == jsonrows.BatchRows {
			flush()
			n = 0
		}
	}
	if n > 0 {
		flush()
	}
	return out, nil
}

func onePass(lines []string) (*arrow.Schema, []arrow.RecordBatch, error) {
	rows := jsonrows.NewRows()
	rows.Reserve(len(lines))
	for _, l := range lines {
		if err := rows.Append([]byte(l)); err != nil {
			return nil, nil, err
		}
	}
	schema := rows.Schema()
	recs, err := rows.Records(schema)
	return schema, recs, err
}

func sameRows(t *testing.T, name string, want, got []arrow.RecordBatch) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !array.RecordEqual(want[i], got[i]) {
			t.Fatalf("%s: record %d differs:\n got %v\nwant %v", name, i, got[i], want[i])
		}
	}
}

func differential(t *testing.T, name string, lines []string) {
	t.Helper()
	ws, wr, werr := twoPass(lines)
	gs, gr, gerr := onePass(lines)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: error %v, want %v\nlines: %q", name, gerr, werr, lines)
	}
	if werr != nil {
		if strings.Contains(gerr.Error(), "twice") {
			// Rows refuses a repeated key at once, arrow-go did when
			// reading, after the inference.
			return
		}
		var wc, gc *jsonrows.KindConflict
		if errors.As(werr, &wc) != errors.As(gerr, &gc) {
			t.Fatalf("%s: error %v, want %v", name, gerr, werr)
		}
		return
	}
	if !ws.Equal(gs) {
		t.Fatalf("%s: schema\n%v\nwant\n%v\nlines: %q", name, gs, ws, lines)
	}
	if ws.NumFields() == 0 {
		// arrow-go counts no rows without columns; the Kafka source
		// writes none either.
		return
	}
	sameRows(t, name, wr, gr)
	fixed := jsonrows.NewRowsOf(ws, nil)
	for _, l := range lines {
		if err := fixed.Append([]byte(l)); err != nil {
			t.Fatalf("%s: with the inferred schema: %v", name, err)
		}
	}
	fr, err := fixed.Records(ws)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, name+" with the inferred schema", wr, fr)
	kind := jsonrows.NewObject()
	for _, l := range lines {
		if err := kind.ObserveLine([]byte(l)); err != nil {
			t.Fatalf("%s: inferring the columns only: %v", name, err)
		}
	}
	if !kind.Schema().Equal(ws) {
		t.Fatalf("%s: inferring the columns only: %v, want %v", name, kind.Schema(), ws)
	}
}

func TestRowsWidenAsInference(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string
		want  string // the schema, or the error
	}{
		{"int to double", []string{`{"a":1}`, `{"a":2.5}`, `{"a":3}`}, "a: type=float64"},
		{"double then int", []string{`{"a":1e3}`, `{"a":-7}`}, "a: type=float64"},
		{"mixed kinds", []string{`{"a":1}`, `{"a":"x"}`}, "field a holds both number and string values"},
		{"nested mixed kinds", []string{`{"o":{"b":true}}`, `{"o":{"b":[1]}}`}, "field o.b holds both boolean and array values"},
		{"nested objects", []string{`{"o":{"z":1,"a":{"k":"v"}}}`, `{"o":{"m":null,"a":{"j":2}}}`, `{"o":null}`}, "o: type=struct<a: struct<k: utf8 nullable, j: int64 nullable> nullable, z: int64 nullable, m: null nullable>"},
		{"arrays", []string{`{"l":[1,2]}`, `{"l":[]}`, `{"l":null}`, `{"l":[3.5,null]}`, `{"e":[]}`}, "l: type=list<item: float64, nullable>"},
		{"array of objects", []string{`{"l":[{"b":1},{"a":"x"}]}`, `{"l":[{"b":2.5}]}`}, "l: type=list<item: struct<b: float64 nullable, a: utf8 nullable>, nullable>"},
		{"nulls only", []string{`{"n":null}`, `{"n":null,"x":1}`}, "n: type=null"},
		{"null then a kind", []string{`{"a":null}`, `{"a":null}`, `{"a":"s"}`}, "a: type=utf8"},
		{"missing keys", []string{`{"a":1}`, `{"b":"x"}`, `{}`, `{"a":2,"b":"y"}`}, "b: type=utf8"},
		{"key order", []string{`{"b":1,"a":2}`, `{"a":3,"c":4,"b":5}`}, "- b: type=int64, nullable\n    - a: type=int64, nullable\n    - c: type=int64, nullable"},
		{"unicode escapes", []string{`{"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \n","\u006b":"key"}`, `{"s":"日本"}`}, "k: type=utf8"},
		{"big ints", []string{`{"a":9007199254740993}`, `{"a":9223372036854775807}`, `{"a":-9223372036854775808}`}, "a: type=int64"},
		{"ints beyond int64", []string{`{"a":1}`, `{"a":9223372036854775808}`, `{"a":123456789012345678901234567890}`}, "a: type=float64"},
		{"booleans", []string{`{"b":true}`, `{"b":false}`, `{"b":null}`}, "b: type=bool"},
		{"whitespace", []string{" { \"a\" : [ 1 , 2 ] , \"b\" : { } } ", `{"a":[],"b":{"c":null}}`}, "b: type=struct<c: null nullable>"},
		{"not an object", []string{`[1,2]`}, "a line must hold one object"},
		{"malformed", []string{`{"a":1}`, `{"a":`}, "malformed JSON (unexpected EOF)"},
		{"trailing value", []string{`{"a":1} {"a":2}`}, "malformed JSON (more than one value on the line)"},
		{"bad number", []string{`{"a":01}`}, "malformed JSON"},
		{"control character", []string{"{\"a\":\"x\ty\"}"}, "malformed JSON"},
		{"duplicate key", []string{`{"a":1,"a":2}`}, "key a shows up twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema, _, err := onePass(c.lines)
			got := fmt.Sprint(err)
			if err == nil {
				got = schema.String()
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			if c.name != "duplicate key" {
				differential(t, c.name, c.lines)
			}
		})
	}
}

// The reference and Rows agree on random lines: every kind, nesting,
// missing and reordered keys, escapes, big numbers and (now and then) a
// kind conflict, over more rows than one record holds.
func TestRowsRandomAsTwoPass(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rnd.IntN(200)
		if seed == 0 {
			n = jsonrows.BatchRows + 10
		}
		lines := make([]string, n)
		for i := range lines {
			lines[i] = randomObject(rnd, 0, seed%5 == 0)
		}
		differential(t, "seed "+strconv.FormatUint(seed, 10), lines)
	}
}

var keys = []string{"id", "name", "v", "o", "l", "b", "caf\\u00e9", "z"}

func randomObject(rnd *rand.Rand, depth int, conflicts bool) string {
	var sb strings.Builder
	sb.WriteString("{")
	perm := rnd.Perm(len(keys))
	first := true
	for _, k := range perm[:rnd.IntN(len(keys)+1)] {
		if !first {
			sb.WriteString(",")
		}
		first = false
		fmt.Fprintf(&sb, "%q:%s", keys[k], randomValue(rnd, keys[k], depth, conflicts))
	}
	sb.WriteString("}")
	return strings.ReplaceAll(sb.String(), `\\u`, `\u`)
}

func randomValue(rnd *rand.Rand, key string, depth int, conflicts bool) string {
	if rnd.IntN(6) == 0 {
		return "null"
	}
	if conflicts && rnd.IntN(50) == 0 {
		return `"conflict"`
	}
	switch key {
	case "id":
		return strconv.FormatInt(rnd.Int64()>>rnd.IntN(63), 10)
	case "v":
		switch rnd.IntN(4) {
		case 0:
			return strconv.FormatInt(rnd.Int64N(1<<60)+1<<53, 10)
		case 1:
			return "1" + strings.Repeat("0", 19+rnd.IntN(5))
		case 2:
			return strconv.FormatFloat(rnd.NormFloat64()*1e6, 'g', -1, 64)
		}
		return strconv.FormatFloat(rnd.Float64(), 'e', 3, 64)
	case "b":
		return strconv.FormatBool(rnd.IntN(2) == 0)
	case "o", "z":
		if depth < 2 {
			return randomObject(rnd, depth+1, conflicts)
		}
		return "{}"
	case "l":
		var parts []string
		for range rnd.IntN(4) {
			if depth < 2 && key == "l" && rnd.IntN(2) == 0 {
				parts = append(parts, randomObject(rnd, depth+1, conflicts))
			} else {
				parts = append(parts, "null")
			}
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	words := []string{`plain`, `caf\u00e9`, `\ud83d\ude00`, `tab\there`, `quote\"`, `日本語`, ``}
	return `"` + words[rnd.IntN(len(words))] + words[rnd.IntN(len(words))] + `"`
}

// With a schema Rows reads values as arrow-go did, its asText columns
// and arrow-go's conversions included.
func TestRowsOfSchemaAsReader(t *testing.T) {
	t.Parallel()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "t", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tn", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	lines := []string{
		`{"id":1,"s":"a","f":1,"ts":"2026-01-01T00:00:00Z","d":"12.34","i":7,"b":true,"t":501,"other":[1,{"x":2}],"tn":"2026-01-01T10:00:00.123456"}`,
		`{"id":"2","f":"2.5","ts":null,"d":3.5,"b":"false","t":true,"tn":"1700000000"}`,
		`{"id":3e2,"s":null,"t":"x","t2":1,"ts":"2026-01-01 00:00:00+02:00","tn":1700000001}`,
		`{"ts":"+1700000000","tn":"-5"}`,
		`{}`,
	}
	want, err := readAll(schema, []string{"t"}, lines)
	if err != nil {
		t.Fatal(err)
	}
	rows := jsonrows.NewRowsOf(schema, []string{"t"})
	for _, l := range lines {
		if err := rows.Append([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := rows.Records(schema)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "schema", want, recs)

	for _, bad := range []string{`{"id":1.5}`, `{"id":"x"}`, `{"s":1}`, `{"ts":"yesterday"}`, `{"i":1e20}`, `{"tn":"2026-01-01T00:00:00Z"}`, `{"ts":"2026-01-01T00:00:00"}`} {
		if _, err := readAll(schema, nil, []string{bad}); err == nil {
			t.Fatalf("arrow-go read %s", bad)
		}
		err := jsonrows.NewRowsOf(schema, nil).Append([]byte(bad))
		var ve *jsonrows.ValueError
		if !errors.As(err, &ve) || !strings.Contains(bad, `"`+ve.Column+`"`) || !strings.Contains(err.Error(), ve.Value) {
			t.Fatalf("%s: error %v, want one naming the column and the value", bad, err)
		}
	}
}

// Rows never panics, rejects what is not JSON, and on JSON agrees with the
// reference.
func FuzzRows(f *testing.F) {
	for _, s := range []string{`{"a":1}` + "\n" + `{"a":2.5,"b":[{"c":null}]}`, `{"s":"\u00e9\ud83d"}`, `{"a":{"b":{"c":[1,[2]]}}}`, `{"a":1e400}`, `{"a":-0,"b":true,"c":"x"}` + "\n" + `{"a":"y"}`, `{"a":-9223372036854775808,"b":999999999999999999}` + "\n" + `{"a":9223372036854775808,"b":-1234567890123456789}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		valid := true
		for _, l := range lines {
			valid = valid && json.Valid([]byte(l))
		}
		if valid {
			differential(t, "fuzz", lines)
			return
		}
		rows := jsonrows.NewRows()
		for _, l := range lines {
			if err := rows.Append([]byte(l)); err != nil {
				return
			}
		}
		t.Fatalf("read %q, which is not JSON", s)
	})
}
