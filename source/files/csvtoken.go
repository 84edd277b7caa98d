package files

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"unsafe"
)

// csvRecords is what csvValues reads records from: encoding/csv's Reader,
// or csvTokens where the delimiter allows.
type csvRecords interface {
	Read() ([]string, error)
	InputOffset() int64
	// StartLine is the line the last record read starts on, for errors
	// about its values.
	StartLine() int
}

// newCSVRecords splits r into records with delim as encoding/csv's Reader
// does with floe's settings (no comments, quotes strict, leading spaces
// kept, the first record fixing the number of fields).
func newCSVRecords(r io.Reader, delim rune) csvRecords {
	if delim < 0x80 && delim != '\r' && delim != '\n' && delim != '"' && delim != 0 {
		return newCSVTokens(r, byte(delim), 1<<20)
	}
	cr := csv.NewReader(r)
	cr.Comma = delim
	cr.ReuseRecord = true
	return csvReader{cr}
}

// csvReader is encoding/csv's Reader as csvRecords.
type csvReader struct{ *csv.Reader }

func (r csvReader) StartLine() int {
	line, _ := r.FieldPos(0)
	return line
}

// csvTokens splits CSV text into records exactly as encoding/csv's Reader
// does, errors included, but reads a line without a quote (nearly every
// line of nearly every file) in one pass over it, and hands out its fields
// as views of the line rather than copies in a new string. That was a
// quarter of a CSV ingest's CPU. The fields are valid until the next Read.
type csvTokens struct {
	br     *bufio.Reader
	comma  byte
	line   int   // lines read
	start  int   // the line the last record starts on
	offset int64 // bytes read
	fields int   // each record's fields, from the first; 0 before it
	rec    []string
	// buf holds the fields of a record with quotes, unquoted, ends where
	// each ends; long holds a line longer than br's buffer.
	buf  []byte
	ends []int
	long []byte
}

func newCSVTokens(r io.Reader, comma byte, size int) *csvTokens {
	return &csvTokens{br: bufio.NewReaderSize(r, size), comma: comma}
}

func (t *csvTokens) InputOffset() int64 { return t.offset }
func (t *csvTokens) StartLine() int     { return t.start }

// readLine is the next line with its '\n', "\r\n" read as "\n", a last
// line without one as it is (less a trailing '\r'); its error is io.EOF
// only when there is no line.
func (t *csvTokens) readLine() ([]byte, error) {
	line, err := t.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		t.long = append(t.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = t.br.ReadSlice('\n')
			t.long = append(t.long, line...)
		}
		line = t.long
	}
	n := len(line)
	if n > 0 && err == io.EOF {
		err = nil
		if line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	t.line++
	t.offset += int64(n)
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

// newline is 1 when b ends with '\n', else 0.
func newline(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

func (t *csvTokens) Read() ([]string, error) {
	var (
		line    []byte
		errRead error
	)
	for errRead == nil {
		line, errRead = t.readLine()
		if errRead == nil && len(line) == newline(line) {
			continue // a blank line
		}
		break
	}
	if errRead == io.EOF {
		return nil, errRead
	}
	start := t.line
	t.start = start
	var err error
	if bytes.IndexByte(line, '"') < 0 {
		t.split(line[:len(line)-newline(line)])
	} else {
		err = t.quoted(line, &errRead, start)
	}
	if err == nil {
		err = errRead
	}
	if t.fields == 0 {
		t.fields = len(t.rec)
	} else if len(t.rec) != t.fields && err == nil {
		err = &csv.ParseError{StartLine: start, Line: start, Column: 1, Err: csv.ErrFieldCount}
	}
	return t.rec, err
}

// split makes the fields of a line without quotes views of it.
func (t *csvTokens) split(line []byte) {
	t.rec = t.rec[:0]
	for {
		i := bytes.IndexByte(line, t.comma)
		if i < 0 {
			t.rec = append(t.rec, view(line))
			return
		}
		t.rec = append(t.rec, view(line[:i]))
		line = line[i+1:]
	}
}

// quoted reads a record with quotes, which may go on over more lines,
// into buf; errRead is the last line's read error, which reading more
// lines updates.
func (t *csvTokens) quoted(line []byte, errRead *error, start int) error {
	t.buf, t.ends = t.buf[:0], t.ends[:0]
	defer func() {
		t.rec = t.rec[:0]
		from := 0
		for _, end := range t.ends {
			t.rec = append(t.rec, view(t.buf[from:end]))
			from = end
		}
	}()
	lineNo, col := t.line, 1
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, t.comma)
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-newline(field)]
			}
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				return &csv.ParseError{StartLine: start, Line: t.line, Column: col + j, Err: csv.ErrBareQuote}
			}
			t.buf = append(t.buf, field...)
			t.ends = append(t.ends, len(t.buf))
			if i < 0 {
				return nil
			}
			line = line[i+1:]
			col += i + 1
			continue
		}
		// A quoted field, up to the quote that ends it.
		line = line[1:]
		col++
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				t.buf = append(t.buf, line[:i]...)
				line = line[i+1:]
				col += i + 1
				switch {
				case len(line) > 0 && line[0] == '"': // "" is a quote
					t.buf = append(t.buf, '"')
					line = line[1:]
					col++
					continue
				case len(line) > 0 && line[0] == t.comma: // the field's end
					line = line[1:]
					col++
					t.ends = append(t.ends, len(t.buf))
				case newline(line) == len(line): // the record's end
					t.ends = append(t.ends, len(t.buf))
					return nil
				default:
					return &csv.ParseError{StartLine: start, Line: t.line, Column: col - 1, Err: csv.ErrQuote}
				}
			case len(line) > 0:
				// The field goes on over the next line.
				t.buf = append(t.buf, line...)
				if *errRead != nil {
					return nil // the field is left out, the error told
				}
				col += len(line)
				line, *errRead = t.readLine()
				if len(line) > 0 {
					lineNo++
					col = 1
				}
				if *errRead == io.EOF {
					*errRead = nil
				}
				continue
			default:
				if *errRead == nil {
					return &csv.ParseError{StartLine: start, Line: lineNo, Column: col, Err: csv.ErrQuote}
				}
				t.ends = append(t.ends, len(t.buf))
				return nil
			}
			break // to the next field
		}
	}
}

// view is b as a string without a copy, valid while b is.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
