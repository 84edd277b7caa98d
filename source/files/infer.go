package files

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
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
		if _, err := strconv.ParseFloat(v, 64); err != nil {
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
	_, err := time.Parse("2006-01-02", v)
	return err == nil
}

// validTimestamp parses like arrow's CSV reader does for timestamp columns.
func validTimestamp(v string) bool {
	_, _, err := arrow.TimestampFromStringInLocation(v, arrow.Microsecond, time.UTC)
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
func inferCSV(path string, delim rune, header bool) (*arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	skipBOM(br)
	r := csv.NewReader(br)
	r.Comma = delim
	r.ReuseRecord = true
	var names []string
	var kinds []csvKind
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return nil, fmt.Errorf("line %d has %d columns, the header has %d; fix the row or remove it", pe.Line, len(rec), len(names))
			}
			return nil, fmt.Errorf("malformed CSV: %w", err)
		}
		if names == nil {
			names = make([]string, len(rec))
			kinds = make([]csvKind, len(rec))
			for i, v := range rec {
				if header {
					names[i] = strings.TrimSpace(v)
				} else {
					names[i] = fmt.Sprintf("f%d", i)
					kinds[i].observe(v)
				}
			}
			continue
		}
		for i, v := range rec {
			kinds[i].observe(v)
		}
	}
	if names == nil {
		return nil, errors.New("the CSV file has no header row")
	}
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("column %d of the header has no name; name every column", i+1)
		}
		fields[i] = arrow.Field{Name: n, Type: kinds[i].arrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// jsonKind is the inferred type of one JSON value position.
type jsonKind struct {
	kind   string // "", "bool", "int", "float", "string", "object", "array"
	names  []string
	fields map[string]*jsonKind
	elem   *jsonKind
}

func (k *jsonKind) observe(v any, path string) error {
	var kind string
	switch v.(type) {
	case nil:
		return nil
	case bool:
		kind = "bool"
	case json.Number:
		kind = "int"
		if _, err := strconv.ParseInt(string(v.(json.Number)), 10, 64); err != nil {
			kind = "float"
		}
	case string:
		kind = "string"
	case map[string]any:
		kind = "object"
	case []any:
		kind = "array"
	}
	switch {
	case k.kind == "":
		k.kind = kind
	case k.kind == kind:
	case (k.kind == "int" && kind == "float") || (k.kind == "float" && kind == "int"):
		k.kind = "float"
	default:
		return &kindConflict{path: path, was: jsonWord(k.kind), is: jsonWord(kind)}
	}
	switch val := v.(type) {
	case map[string]any:
		if k.fields == nil {
			k.fields = map[string]*jsonKind{}
		}
		// Keep first-seen key order: JSON objects are unordered, but users
		// expect the table's columns in the order of their data.
		for _, name := range orderedKeys(val) {
			f, ok := k.fields[name]
			if !ok {
				f = &jsonKind{}
				k.fields[name] = f
				k.names = append(k.names, name)
			}
			if err := f.observe(val[name], path+"."+name); err != nil {
				return err
			}
		}
	case []any:
		if k.elem == nil {
			k.elem = &jsonKind{}
		}
		for _, e := range val {
			if err := k.elem.observe(e, path+"[]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// kindConflict is a JSON field holding two kinds of value, which no
// inferred type holds.
type kindConflict struct{ path, was, is string }

func (e *kindConflict) Error() string {
	return fmt.Sprintf("field %s holds both %s and %s values; give the column a type in source.schema", e.path, e.was, e.is)
}

func jsonWord(kind string) string {
	switch kind {
	case "int", "float":
		return "number"
	case "bool":
		return "boolean"
	}
	return kind
}

func (k *jsonKind) arrowType() arrow.DataType {
	switch k.kind {
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "int":
		return arrow.PrimitiveTypes.Int64
	case "float":
		return arrow.PrimitiveTypes.Float64
	case "object":
		fields := make([]arrow.Field, len(k.names))
		for i, n := range k.names {
			fields[i] = arrow.Field{Name: n, Type: k.fields[n].arrowType(), Nullable: true}
		}
		return arrow.StructOf(fields...)
	case "array":
		elem := k.elem
		if elem == nil {
			elem = &jsonKind{}
		}
		return arrow.ListOf(elem.arrowType())
	case "string":
		return arrow.BinaryTypes.String
	default:
		// Only nulls seen: no type to infer. As for CSV, the null type fits
		// any table column, nested ones included; a table created from it
		// gets a string column.
		return arrow.Null
	}
}

// orderedKeys returns the keys of an object decoded from JSON in a stable
// order. encoding/json loses the document order, so the keys are sorted;
// inferJSON recovers the document order of the top level separately.
func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// inferJSON reads every line of a JSON-lines file, reporting a malformed
// line by number.
func inferJSON(path string) (*arrow.Schema, error) {
	root := &jsonKind{kind: "object", fields: map[string]*jsonKind{}}
	if err := eachLine(path, func(_ int, b []byte) error { return observeLine(root, b) }); err != nil {
		return nil, err
	}
	if len(root.names) == 0 {
		return nil, errors.New("the file holds no JSON objects")
	}
	st := root.arrowType().(*arrow.StructType)
	return arrow.NewSchema(st.Fields(), nil), nil
}

// eachLine calls fn with every line of a file that is not blank, trimmed,
// and its number, and names the line in fn's error.
func eachLine(path string, fn func(line int, b []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	skipBOM(br)
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			b = bytes.TrimSpace(b)
			if len(b) > 0 {
				if err := fn(line, b); err != nil {
					return fmt.Errorf("line %d: %w", line, err)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func observeLine(root *jsonKind, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("malformed JSON (%v)", err)
	}
	if dec.More() {
		return errors.New("malformed JSON (more than one value on the line)")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errors.New("malformed JSON (a line must hold one object)")
	}
	// Record new top-level keys in document order.
	keys, err := topLevelKeys(b)
	if err != nil {
		return fmt.Errorf("malformed JSON (%v)", err)
	}
	for _, name := range keys {
		f, ok := root.fields[name]
		if !ok {
			f = &jsonKind{}
			root.fields[name] = f
			root.names = append(root.names, name)
		}
		if err := f.observe(obj[name], name); err != nil {
			return err
		}
	}
	return nil
}

func topLevelKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// arrowType maps an Iceberg primitive type name from source.schema to the
// Arrow type the readers produce for it.
func arrowType(name string) (arrow.DataType, error) {
	switch name {
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, nil
	case "int":
		return arrow.PrimitiveTypes.Int32, nil
	case "long":
		return arrow.PrimitiveTypes.Int64, nil
	case "float":
		return arrow.PrimitiveTypes.Float32, nil
	case "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	case "time":
		return arrow.FixedWidthTypes.Time64us, nil
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case "timestamptz":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case "string", "uuid":
		return arrow.BinaryTypes.String, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	}
	var p, s int32
	if _, err := fmt.Sscanf(strings.ReplaceAll(name, " ", ""), "decimal(%d,%d)", &p, &s); err == nil {
		return &arrow.Decimal128Type{Precision: p, Scale: s}, nil
	}
	return nil, fmt.Errorf("type %q is not supported; use boolean, int, long, float, double, date, time, timestamp, timestamptz, string, uuid, binary or decimal(P,S)", name)
}
