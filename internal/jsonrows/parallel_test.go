package jsonrows

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

type readOut struct {
	rows  []string // each row as JSON
	err   string
	aside []string // line: raw
}

func readWith(t *testing.T, schema *arrow.Schema, in []byte, par int, withAside bool, skip func(int) bool) readOut {
	return readSized(t, schema, in, 0, par, withAside, skip)
}

// readSized is readWith with the reader told size bytes are to come.
func readSized(t *testing.T, schema *arrow.Schema, in []byte, size int64, par int, withAside bool, skip func(int) bool) readOut {
	t.Helper()
	r := NewReader(bytes.NewReader(in), nil, schema, nil, nil)
	r.SizeHint(size)
	var out readOut
	var mu sync.Mutex
	if withAside || skip != nil {
		var fn func(int, []byte, error)
		if withAside {
			fn = func(line int, raw []byte, err error) {
				mu.Lock()
				defer mu.Unlock()
				out.aside = append(out.aside, fmt.Sprintf("%d: %s", line, raw))
			}
		}
		r.SetAside(fn, skip)
	}
	r.Parallel(par)
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		for i := range int(rec.NumRows()) {
			var b strings.Builder
			for c := range int(rec.NumCols()) {
				b.WriteString(rec.Column(c).ValueStr(i) + "|")
			}
			out.rows = append(out.rows, b.String())
		}
	}
	if r.Err() != nil {
		out.err = r.Err().Error()
	}
	slices.Sort(out.aside)
	return out
}

// TestParallelAsSequential reads random inputs cut into small blocks on
// several goroutines and one at a time: the same rows in the same order,
// the same first error, the same lines set aside.
func TestParallelAsSequential(t *testing.T) {
	defer func(n int) { blockBytes = n }(blockBytes)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rnd := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		blockBytes = 1 + rnd.IntN(600)
		var in bytes.Buffer
		lines := rnd.IntN(200)
		for i := range lines {
			switch rnd.IntN(30) {
			case 0:
				in.WriteString("\n")
			case 1:
				in.WriteString(`{"id": "not a number"}` + "\n")
			case 2:
				in.WriteString(`{"id": 1,` + "\n")
			default:
				fmt.Fprintf(&in, `{"id":%d,"ts":"2024-03-%02dT10:00:00.%d","s":%q,"f":%v}`, i, 1+rnd.IntN(28), rnd.IntN(1000), strings.Repeat("x", rnd.IntN(300)), rnd.Float64())
				if rnd.IntN(10) == 0 {
					in.WriteString("\r")
				}
				in.WriteString("\n")
			}
		}
		if rnd.IntN(2) == 0 && in.Len() > 0 {
			in.Truncate(in.Len() - 1) // no line ending after the last line
		}
		skipped := map[int]bool{rnd.IntN(lines + 1): true}
		for _, c := range []struct {
			aside bool
			skip  func(int) bool
		}{{false, nil}, {true, nil}, {true, func(l int) bool { return skipped[l] }}} {
			want := readWith(t, schema, in.Bytes(), 1, c.aside, c.skip)
			for _, par := range []int{2, 3} {
				got := readWith(t, schema, in.Bytes(), par, c.aside, c.skip)
				if want.err != "" {
					// The rows read before the error are dropped with
					// the part; which of them came out differs by chunk.
					got.rows, want.rows = nil, nil
				}
				if !slices.Equal(got.rows, want.rows) || got.err != want.err || !slices.Equal(got.aside, want.aside) {
					t.Fatalf("round %d, %d goroutines, blocks of %d bytes, aside %v: got %d rows, error %q, aside %q; want %d rows, error %q, aside %q\ninput: %q",
						round, par, blockBytes, c.aside, len(got.rows), got.err, got.aside, len(want.rows), want.err, want.aside, in.String())
				}
			}
		}
	}
}

// TestSizeHintReadsAlike reads random inputs of up to two chunks told
// their size, a wrong one too: the same rows and errors as untold, as the
// size only sizes the columns.
func TestSizeHintReadsAlike(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rnd := rand.New(rand.NewPCG(7, 8))
	for round := range 20 {
		var in bytes.Buffer
		for i := range rnd.IntN(2 * BatchRows) {
			switch rnd.IntN(5000) {
			case 0:
				in.WriteString("\n")
			case 1:
				in.WriteString(`{"id": "not a number"}` + "\n")
			default:
				// Lines that lengthen along the file, so that the first
				// ones size the columns too small.
				fmt.Fprintf(&in, `{"id":%d,"s":%q,"f":%v}`+"\n", i, strings.Repeat("x", rnd.IntN(1+i/500)), rnd.Float64())
			}
		}
		size := int64(rnd.IntN(2*in.Len() + 1))
		for _, aside := range []bool{false, true} {
			want := readWith(t, schema, in.Bytes(), 1, aside, nil)
			got := readSized(t, schema, in.Bytes(), size, 1, aside, nil)
			if !slices.Equal(got.rows, want.rows) || got.err != want.err || !slices.Equal(got.aside, want.aside) {
				t.Fatalf("round %d, %d bytes told %d, aside %v: got %d rows, error %q; want %d rows, error %q",
					round, in.Len(), size, aside, len(got.rows), got.err, len(want.rows), want.err)
			}
		}
	}
}

// TestParallelReleasedEarly stops reading after the first record: the
// goroutines end and every record is released.
func TestParallelReleasedEarly(t *testing.T) {
	defer func(n int) { blockBytes = n }(blockBytes)
	blockBytes = 64
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	var in bytes.Buffer
	for i := range 10_000 {
		fmt.Fprintf(&in, `{"id":%d}`+"\n", i)
	}
	for range 20 {
		r := NewReader(bytes.NewReader(in.Bytes()), nil, schema, nil, nil)
		r.Parallel(2)
		if !r.Next() || r.RecordBatch().Column(0).(*array.Int64).Value(0) != 0 {
			t.Fatalf("first record: %v", r.Err())
		}
		r.Release()
	}
}
