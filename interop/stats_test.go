package interop_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/floe-io/floe/internal/canonical"
)

// This file computes, from `floe scan --output-format jsonl`, the same STATS that
// check.mjs computes with icebird and DuckDB. The canonical form is defined
// in check.mjs's header comment; the two must change together.

// Stats is what each reader reports for one table.
type Stats struct {
	Rows     int64             `json:"rows"`
	NonNull  map[string]int64  `json:"nonNull"`
	Sums     map[string]string `json:"sums"`
	Checksum string            `json:"checksum"`
}

// statsAcc accumulates Stats over canonical rows.
type statsAcc struct {
	fields  []canonical.Field
	rows    int64
	nonNull []int64
	ints    []*big.Int
	floats  [][]float64
	sum     uint64
	dump    io.Writer // if set, canonical rows are written here
}

func newStatsAcc(fields []canonical.Field) *statsAcc {
	a := &statsAcc{fields: fields, nonNull: make([]int64, len(fields)), ints: make([]*big.Int, len(fields)), floats: make([][]float64, len(fields))}
	for i := range a.ints {
		a.ints[i] = new(big.Int)
	}
	return a
}

func (a *statsAcc) add(vals []any) error {
	row := canonical.Object{}
	for i, f := range a.fields {
		row = append(row, canonical.KV{Key: f.Name, Value: vals[i]})
	}
	j := canonical.JSON(row)
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
		switch f.Type.Kind {
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
			if f.Type.Kind == "float" {
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
		switch f.Type.Kind {
		case "int", "long":
			st.Sums[f.Name] = a.ints[i].String()
		case "decimal":
			st.Sums[f.Name] = decimalString(a.ints[i], f.Type.Scale)
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

// statsFromJSONL computes Stats from `floe scan --output-format jsonl` output.
func statsFromJSONL(fields []canonical.Field, jsonl []byte, dump io.Writer) (Stats, error) {
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
			c, err := canonical.Value(m[f.Name], f.Type)
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

// checkerReaders are the readers check.mjs reports.
var checkerReaders = []string{"icebird", "duckdb"}

// compareStats returns an error naming every difference between floe's
// stats and each named reader's (check.mjs's readers when none are named).
func compareStats(floe Stats, readers map[string]Stats, names ...string) error {
	if len(names) == 0 {
		names = checkerReaders
	}
	var diffs []string
	for _, name := range names {
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
