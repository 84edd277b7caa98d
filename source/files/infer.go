package files

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/internal/textnum"
	"github.com/floe-io/floe/internal/texttime"
)

// Type inference looks at every value of the file, not a prefix: a column
// whose first thousand values are integers and whose last is "n/a" must be a
// string column, not a parse failure half-way through the file.

// csvKind flags which types every non-empty value of a column parses as.
// padded is set by a number written with leading zeros (00501), which
// keeps the column from being a number column: the zeros would be lost.
type csvKind struct {
	seen                               bool
	isInt, isFloat, isBool, isDate     bool
	isTimestamp, isTimestampTZ, isTime bool
	padded                             bool
}

var (
	dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	tsRe   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$`)
	tsTZRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$`)
	timeRe = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}(\.\d{1,9})?$`)
)

func (k *csvKind) observe(v string) {
	if v == "" {
		return // empty is null
	}
	if !k.seen {
		*k = csvKind{seen: true, isInt: true, isFloat: true, isBool: true, isDate: true, isTimestamp: true, isTimestampTZ: true, isTime: true}
	}
	k.padded = k.padded || zeroPadded(v)
	if k.isInt {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			k.isInt = false
		}
	}
	if k.isFloat {
		if _, err := textnum.ParseFloat(v); err != nil {
			k.isFloat = false
		}
	}
	if k.isBool {
		// true or false, in a case strconv.ParseBool (the reader) accepts:
		// true, True, TRUE.
		l := strings.ToLower(v)
		_, err := strconv.ParseBool(v)
		k.isBool = (l == "true" || l == "false") && err == nil
	}
	// A value of the right shape must also parse as the reader will parse
	// it: "2024-02-30" or "25:00:00" make a string column, not a file that
	// fails half-way through.
	k.isDate = k.isDate && dateRe.MatchString(v) && validDate(v)
	k.isTimestamp = k.isTimestamp && tsRe.MatchString(v) && validTimestamp(v)
	k.isTimestampTZ = k.isTimestampTZ && tsTZRe.MatchString(v) && validTimestamp(v)
	k.isTime = k.isTime && timeRe.MatchString(v) && validTime(v)
}

// zeroPadded tells a number written with a leading zero before another
// digit (007, -01, 00.5): codes such as zip codes and account numbers,
// whose zeros a number column would drop.
func zeroPadded(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return len(v) > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9'
}

// validDate parses like arrow's CSV reader does for date columns.
func validDate(v string) bool {
	_, err := texttime.Date(v)
	return err == nil
}

// validTimestamp parses like arrow's CSV reader does for timestamp columns.
func validTimestamp(v string) bool {
	_, _, err := texttime.Timestamp(v, arrow.Microsecond)
	return err == nil
}

// validTime parses like the CSV reader's conversion of time columns.
func validTime(v string) bool {
	_, err := arrow.Time64FromString(v, arrow.Microsecond)
	return err == nil
}

func (k csvKind) arrowType() arrow.DataType {
	switch {
	case !k.seen:
		// Only empty values: no type to infer. The null type fits any table
		// column (a table created from it gets a string column), so a file
		// where a column happens to be empty is not a schema mismatch.
		return arrow.Null
	case k.isInt && !k.padded:
		return arrow.PrimitiveTypes.Int64
	case k.isFloat && !k.padded:
		return arrow.PrimitiveTypes.Float64
	case k.isBool:
		return arrow.FixedWidthTypes.Boolean
	case k.isDate:
		return arrow.FixedWidthTypes.Date32
	case k.isTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case k.isTimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case k.isTime:
		return arrow.FixedWidthTypes.Time64us
	default:
		return arrow.BinaryTypes.String
	}
}

// inferCSV reads the whole file once to find column names and types, and to
// report a wrong column count with its line before anything is converted.
func inferCSV(text textOpener, delim rune, header bool) (*arrow.Schema, error) {
	br, f, err := text()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := newCSVRecords(br, delim)
	cols := csvColumns{header: header}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return nil, fmt.Errorf("line %d has %d columns, the header has %d; fix the row or remove it", pe.Line, len(rec), len(cols.names))
			}
			return nil, fmt.Errorf("malformed CSV: %w", err)
		}
		cols.observe(rec)
	}
	return cols.schema()
}

// csvColumns infers a CSV file's columns from its records, the header
// (or the first record of a file without one) first; it keeps none of a
// record's values, which are views of the reader's buffer.
type csvColumns struct {
	header bool
	names  []string
	kinds  []csvKind
}

func (c *csvColumns) observe(rec []string) {
	if c.names == nil {
		c.names = make([]string, len(rec))
		c.kinds = make([]csvKind, len(rec))
		for i, v := range rec {
			if c.header {
				c.names[i] = strings.Clone(strings.TrimSpace(v))
			} else {
				c.names[i] = fmt.Sprintf("f%d", i)
				c.kinds[i].observe(v)
			}
		}
		return
	}
	for i, v := range rec {
		c.kinds[i].observe(v)
	}
}

func (c *csvColumns) schema() (*arrow.Schema, error) {
	if c.names == nil {
		return nil, errors.New("the CSV file has no header row")
	}
	fields := make([]arrow.Field, len(c.names))
	for i, n := range c.names {
		if n == "" {
			return nil, fmt.Errorf("column %d of the header has no name; name every column", i+1)
		}
		fields[i] = arrow.Field{Name: n, Type: c.kinds[i].arrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// inferJSON reads every line of a JSON-lines file, reporting a malformed
// line by number, or handing it to aside when that is set. Columns of
// given take any value as their type.
func inferJSON(text textOpener, given *arrow.Schema, aside func(int, []byte, error)) (*arrow.Schema, error) {
	root := jsonrows.NewObjectWith(given)
	observe := func(_ int, b []byte) error { return root.ObserveLine(b) }
	err := eachLine(text, observe)
	if err != nil && aside != nil {
		// A broken line may have left the keys it reached as columns: the
		// columns are inferred again, each line checked to be whole JSON
		// first. A file without bad lines never pays for that.
		root = jsonrows.NewObjectWith(given)
		err = eachLine(text, asideLines(aside, true, observe))
	}
	if err != nil {
		return nil, err
	}
	if root.Empty() {
		return nil, errors.New("the file holds no JSON objects")
	}
	return root.Schema(), nil
}

// eachLine calls fn with every line of a file that is not blank, trimmed,
// and its number, and names the line in fn's error.
func eachLine(text textOpener, fn func(line int, b []byte) error) error {
	br, f, err := text()
	if err != nil {
		return err
	}
	defer f.Close()
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			// A line cut short by a failed read is no malformed line.
			return err
		}
		if len(b) > 0 {
			line++
			b = bytes.TrimSpace(b)
			if len(b) > 0 {
				if err := fn(line, b); err != nil {
					return fmt.Errorf("line %d: %w", line, err)
				}
			}
		}
		if err != nil {
			return nil
		}
	}
}
