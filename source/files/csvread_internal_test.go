package files

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"

	"github.com/floe-io/floe/internal/jsonrows"
)

func readCSVAll(r array.RecordReader) (string, string) {
	defer r.Release()
	var b strings.Builder
	for r.Next() {
		rec := r.RecordBatch()
		for i := range int(rec.NumRows()) {
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				if col.IsNull(i) {
					b.WriteString("null|")
				} else {
					b.WriteString(col.ValueStr(i) + "|")
				}
			}
			b.WriteString("\n")
		}
	}
	errText := ""
	if err := r.Err(); err != nil {
		// csvValues names the line and column of the value arrow-go's
		// error is about; the reference is the error itself.
		var ve *jsonrows.ValueError
		if errors.As(err, &ve) {
			err = ve.Err
		}
		errText = err.Error()
	}
	return b.String(), errText
}

// TestCSVValuesAsArrow reads random CSV files with csvValues and with
// arrow-go's reader, the reference: the same values, nulls and first
// error.
func TestCSVValuesAsArrow(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "tz", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	rnd := rand.New(rand.NewPCG(7, 8))
	values := [][]string{
		{"", "1", "-128", "127", "128", "x"},
		{"", "0", "-2147483648", "2147483647", "2147483648", "1.5"},
		{"", "42", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "0x10"},
		{"", "1.5", "-0", "3.4e38", "3.5e38", "1e", "NaN"},
		{"", "0.1", "1e308", "1e309", "-2.5E-3", "abc", "inf"},
		{"", "true", "false", "1", "0", "TRUE", "yes"},
		{"", "a", "hello, world", `say "hi"`, "multi\nline", " spaced "},
		{"", "2024-02-29", "2023-02-29", "1969-12-31", "2024-1-1"},
		{"", "2024-01-01T00:00:00.000001", "2024-01-01 10:11:12", "2024-01-01T10:11:12Z", "2024-01-01T10:11:12+02:00", "2024-01-01", "2024-01-01T10:11:12.1234567", "nope", "1700000000", "-5", "99999999999999999999"},
		{"", "2024-01-01T00:00:00.123", "2024-01-01T00:00:00.1234", "2024-06-01T10:11:12-05:30"},
	}
	for round := range 400 {
		var in bytes.Buffer
		w := newTestCSVWriter(&in)
		header := rnd.IntN(2) == 0
		if header {
			w(schemaNames(schema))
		}
		bad := rnd.IntN(4) == 0
		for range rnd.IntN(300) {
			rec := make([]string, len(values))
			for c, vs := range values {
				k := rnd.IntN(len(vs))
				if !bad {
					k = rnd.IntN(min(len(vs), 4))
				}
				rec[c] = vs[k]
			}
			w(rec)
		}
		want, wantErr := readCSVAll(arrowcsv.NewReader(bytes.NewReader(in.Bytes()), schema,
			arrowcsv.WithHeader(header), arrowcsv.WithChunk(jsonrows.BatchRows), arrowcsv.WithNullReader(true, "")))
		// The size only sizes the columns, so a wrong one reads the same.
		size := int64(rnd.IntN(2*in.Len() + 1))
		got, gotErr := readCSVAll(newCSVValues(bytes.NewReader(in.Bytes()), size, schema, ',', header))
		if wantErr != "" {
			// A chunk with a bad value is dropped with its part.
			want, got = "", ""
		}
		if got != want || gotErr != wantErr {
			t.Fatalf("round %d: got error %q, want %q\ngot:\n%s\nwant:\n%s\ninput:\n%s", round, gotErr, wantErr, got, want, in.String())
		}
	}
}

func schemaNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

func newTestCSVWriter(b *bytes.Buffer) func([]string) {
	return func(rec []string) {
		for i, v := range rec {
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.ContainsAny(v, ",\"\n") {
				fmt.Fprintf(b, `"%s"`, strings.ReplaceAll(v, `"`, `""`))
			} else {
				b.WriteString(v)
			}
		}
		b.WriteByte('\n')
	}
}

// BenchmarkCSVRead reads 200,000 rows of the events shape (the bench's
// CSV) with arrow-go's reader, time as text then parsed, and csvValues.
func BenchmarkCSVRead(b *testing.B) {
	var in bytes.Buffer
	in.WriteString("id,ts,category,v,payload\n")
	for id := range 200_000 {
		fmt.Fprintf(&in, "%d,2024-01-01T%02d:%02d:%02d.%06d,cat-%d,%v,%040d\n", id, id/3600%24, id/60%60, id%60, id*7%1_000_000, id*31%100, float64(id)/7, id*1_000_003)
	}
	file := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	read := func(b *testing.B, r array.RecordReader) {
		rows := 0
		r = newCSVConvReader(r, file, file)
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if r.Err() != nil || rows != 200_000 {
			b.Fatal(r.Err(), rows)
		}
		r.Release()
	}
	b.SetBytes(int64(in.Len()))
	b.Run("arrow-go", func(b *testing.B) {
		for b.Loop() {
			read(b, arrowcsv.NewReader(bytes.NewReader(in.Bytes()), csvReadSchema(file), arrowcsv.WithHeader(true),
				arrowcsv.WithChunk(jsonrows.BatchRows), arrowcsv.WithNullReader(true, "")))
		}
	})
	b.Run("values", func(b *testing.B) {
		for b.Loop() {
			read(b, newCSVValues(bytes.NewReader(in.Bytes()), 0, csvValuesSchema(file), ',', true))
		}
	})
}
