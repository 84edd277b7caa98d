package files

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestCSVTokensAsEncodingCSV splits random text of commas, quotes, line
// ends and letters, through a buffer small enough for long lines, with
// csvTokens and with encoding/csv: the same records, offsets and errors,
// up to the first error, where csvValues stops.
func TestCSVTokensAsEncodingCSV(t *testing.T) {
	alphabet := []string{"a", "b", "é", ",", ";", `"`, `""`, "\n", "\r\n", "\r", " ", "\t"}
	rnd := rand.New(rand.NewPCG(9, 10))
	for round := range 20000 {
		var in strings.Builder
		for range rnd.IntN(60) {
			in.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		if rnd.IntN(10) == 0 {
			in.WriteString(strings.Repeat("x", 40)) // longer than the buffer
		}
		comma := []rune{',', ';', '\t'}[rnd.IntN(3)]
		want := csv.NewReader(strings.NewReader(in.String()))
		want.Comma, want.ReuseRecord = comma, true
		got := newCSVTokens(strings.NewReader(in.String()), byte(comma), 16)
		for rec := 0; ; rec++ {
			wr, werr := want.Read()
			gr, gerr := got.Read()
			w, g := fmt.Sprintf("%q %v %d", wr, werr, want.InputOffset()), fmt.Sprintf("%q %v %d", gr, gerr, got.InputOffset())
			if w != g {
				t.Fatalf("round %d, record %d of %q split by %q: got %s, want %s", round, rec, in.String(), comma, g, w)
			}
			if werr != nil {
				break
			}
		}
	}
}

// TestCSVValueErrorsKeepTheirText reads bad values whose text, a view
// of the reader's buffer, the next records overwrite: the error still
// names the value read.
func TestCSVValueErrorsKeepTheirText(t *testing.T) {
	for _, c := range []struct {
		typ arrow.DataType
		bad string
	}{
		{arrow.PrimitiveTypes.Int64, "not-a-number"},
		{arrow.PrimitiveTypes.Float64, "1.5.5"},
		{arrow.FixedWidthTypes.Boolean, "maybe"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, "2024-13-45T99:00:00"},
		{arrow.FixedWidthTypes.Date32, "2024-02-30"},
	} {
		var in bytes.Buffer
		in.WriteString("x\n" + c.bad + "\n")
		for range 1000 {
			in.WriteString("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n")
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: c.typ, Nullable: true}}, nil)
		v := newCSVValues(newSmallReader(in.Bytes()), 0, schema, ',', true)
		for v.Next() {
		}
		if err := v.Err(); err == nil || !strings.Contains(err.Error(), c.bad) || strings.Contains(err.Error(), "zz") {
			t.Errorf("%s: got %v, want an error naming %q alone", c.typ, err, c.bad)
		}
		v.Release()
	}
}

// newSmallReader reads b a few bytes at a time, so that a reader's buffer
// is refilled, and overwritten, from record to record.
func newSmallReader(b []byte) io.Reader { return &smallReader{b: b} }

type smallReader struct{ b []byte }

func (r *smallReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], r.b)
	r.b = r.b[n:]
	return n, nil
}
