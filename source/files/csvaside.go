package files

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/internal/texttime"
)

// span is the bytes [from, to) of a text file's stream (after its codec
// and byte order mark): a CSV record set aside, which the reader skips.
type span struct{ from, to int64 }

// scanCSV reads a CSV file's records as encoding/csv does, under
// on-bad-record: dead-letter: a record with another number of columns
// than the header, broken quoting, or a value its column's type cannot
// read (cols, in file order; nil checks no values) is set aside
// with its line and bytes, and its span returned for the reader to skip.
// observe, when set, sees each good record, the header first.
func (p *filePart) scanCSV(delim rune, header bool, cols *arrow.Schema, observe func(rec []string)) ([]span, error) {
	br, f, err := p.text()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tee := &recordBytes{r: br}
	r := csv.NewReader(tee)
	r.Comma = delim
	r.ReuseRecord = true
	var checks []columnCheck
	if cols != nil {
		for _, f := range cols.Fields() {
			checks = append(checks, columnCheck{f.Name, f.Type, csvCheck(f.Type)})
		}
	}
	aside := p.lineAside()
	var spans []span
	var from int64
	first := true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return spans, nil
		}
		to := r.InputOffset()
		var pe *csv.ParseError
		line := 0
		switch {
		case err != nil && !errors.As(err, &pe):
			return nil, err
		case err != nil && first:
			return nil, fmt.Errorf("malformed CSV header: %w", err)
		case err != nil && errors.Is(pe.Err, csv.ErrFieldCount):
			err = fmt.Errorf("the row has %d columns, the header %d", len(rec), r.FieldsPerRecord)
			line = pe.StartLine
		case err != nil:
			err = fmt.Errorf("malformed CSV: %w", pe.Err)
			line = pe.StartLine
		default:
			line, _ = r.FieldPos(0)
			if !first || !header {
				err = checkRecord(rec, checks)
			}
		}
		if err != nil {
			aside(line, tee.take(from, to), err)
			spans = append(spans, span{from, to})
		} else if observe != nil {
			observe(rec)
		}
		tee.drop(to)
		from, first = to, false
	}
}

// tableTyped is the CSV columns inferred, read as the destination
// table's types wherever arrow's CSV reader reads those: with bad records
// set aside, a value the table's column cannot hold is a bad record, not a
// reason to type the whole file otherwise (and refuse it).
func tableTyped(inferred, table *arrow.Schema) *arrow.Schema {
	typed, _ := jsonrows.AsTable(inferred, table, false)
	if table == nil {
		return typed
	}
	fields := typed.Fields()
	for i, f := range fields {
		if j := jsonrows.FieldIndex(table, f.Name); j >= 0 && f.Type.ID() == arrow.STRING {
			if want := table.Field(j).Type; csvCheck(want) != nil {
				fields[i].Type = want
			}
		}
	}
	return arrow.NewSchema(fields, nil)
}

// columnCheck reads a column's values as its type.
type columnCheck struct {
	name string
	typ  arrow.DataType
	read func(string) error
}

// checkRecord reads each value of rec as its column's check does.
func checkRecord(rec []string, checks []columnCheck) error {
	for i, v := range rec {
		if i < len(checks) && checks[i].read != nil && v != "" {
			if err := checks[i].read(v); err != nil {
				return fmt.Errorf("column %q cannot hold %q as %s (%v)", checks[i].name, v, checks[i].typ, err)
			}
		}
	}
	return nil
}

// csvCheck reads a non-empty value as arrow's CSV reader (and, for times
// of day and null columns, csvConvReader) reads it into a column of type
// t, or is nil when every value reads.
func csvCheck(t arrow.DataType) func(string) error {
	if t == nil {
		return nil
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		return func(v string) error { _, err := strconv.ParseBool(v); return err }
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		return func(v string) error { _, err := strconv.ParseInt(v, 10, bits); return err }
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		bits := t.(arrow.FixedWidthDataType).BitWidth()
		return func(v string) error { _, err := strconv.ParseUint(v, 10, bits); return err }
	case *arrow.Float32Type:
		return func(v string) error { _, err := strconv.ParseFloat(v, 32); return err }
	case *arrow.Float64Type:
		return func(v string) error { _, err := strconv.ParseFloat(v, 64); return err }
	case *arrow.Date32Type, *arrow.Date64Type:
		return func(v string) error { _, err := texttime.Date(v); return err }
	case *arrow.Time32Type:
		return func(v string) error { _, err := arrow.Time32FromString(v, t.Unit); return err }
	case *arrow.Time64Type:
		return func(v string) error { _, err := arrow.Time64FromString(v, t.Unit); return err }
	case *arrow.NullType:
		return func(string) error { return errors.New("a value where the column is empty") }
	case *arrow.Decimal128Type:
		return func(v string) error { _, err := decimal128.FromString(v, t.Precision, t.Scale); return err }
	case *arrow.Decimal256Type:
		return func(v string) error { _, err := decimal256.FromString(v, t.Precision, t.Scale); return err }
	case *arrow.TimestampType:
		return func(v string) error { _, err := csvTimestamp(v, t); return err }
	}
	return nil
}

// recordBytes keeps the bytes a CSV reader reads from r since the last
// drop, so that a record set aside is kept as it was written.
type recordBytes struct {
	r    io.Reader
	buf  []byte
	base int64 // the stream offset of buf[0]
}

func (t *recordBytes) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// take is a copy of the bytes [from, to), without the line end.
func (t *recordBytes) take(from, to int64) []byte {
	b := t.buf[from-t.base : to-t.base]
	return []byte(strings.TrimRight(string(b), "\r\n"))
}

// drop forgets the bytes before offset at.
func (t *recordBytes) drop(at int64) {
	n := copy(t.buf, t.buf[at-t.base:])
	t.buf, t.base = t.buf[:n], at
}

// skipSpans reads r without the spans (sorted, offsets of r's stream).
type skipSpans struct {
	r     *bufio.Reader
	spans []span
	at    int64
}

func (s *skipSpans) Read(p []byte) (int, error) {
	for len(s.spans) > 0 && s.at == s.spans[0].from {
		n, err := s.r.Discard(int(s.spans[0].to - s.spans[0].from))
		s.at += int64(n)
		if err != nil {
			return 0, err
		}
		s.spans = s.spans[1:]
	}
	if len(s.spans) > 0 && int64(len(p)) > s.spans[0].from-s.at {
		p = p[:s.spans[0].from-s.at]
	}
	n, err := s.r.Read(p)
	s.at += int64(n)
	return n, err
}
