// Package jsonrows reads JSON objects, one a line, as Arrow rows: the
// columns inferred from every value, the destination table's types taken
// where the values allow, and the reader that builds the records. The file
// source reads JSON-lines and Debezium files with it, the Kafka source
// message values.
package jsonrows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// NewObject is the kind of a row: an object whose keys are the columns.
func NewObject() *Kind { return &Kind{kind: "object", fields: map[string]*Kind{}} }

// Empty reports whether no key was seen.
func (k *Kind) Empty() bool { return len(k.names) == 0 }

// Schema is the columns of an object kind, in first-seen key order.
func (k *Kind) Schema() *arrow.Schema {
	return arrow.NewSchema(k.arrowType().(*arrow.StructType).Fields(), nil)
}

// Kind is the inferred type of one JSON value position; NewObject is the
// root, a row of JSON lines.
type Kind struct {
	kind   string // "", "bool", "int", "float", "string", "object", "array"
	names  []string
	fields map[string]*Kind
	elem   *Kind
}

func (k *Kind) observe(v any, path string) error {
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
		return &KindConflict{Path: path, Was: jsonWord(k.kind), Is: jsonWord(kind)}
	}
	switch val := v.(type) {
	case map[string]any:
		if k.fields == nil {
			k.fields = map[string]*Kind{}
		}
		// Keep first-seen key order: JSON objects are unordered, but users
		// expect the table's columns in the order of their data.
		for _, name := range orderedKeys(val) {
			f, ok := k.fields[name]
			if !ok {
				f = &Kind{}
				k.fields[name] = f
				k.names = append(k.names, name)
			}
			if err := f.observe(val[name], path+"."+name); err != nil {
				return err
			}
		}
	case []any:
		if k.elem == nil {
			k.elem = &Kind{}
		}
		for _, e := range val {
			if err := k.elem.observe(e, path+"[]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// KindConflict is a JSON field holding two kinds of value, which no
// inferred type holds.
type KindConflict struct{ Path, Was, Is string }

func (e *KindConflict) Error() string {
	return fmt.Sprintf("field %s holds both %s and %s values; give the column a type in source.schema", e.Path, e.Was, e.Is)
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

func (k *Kind) arrowType() arrow.DataType {
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
			elem = &Kind{}
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
// ObserveLine recovers the document order of the top level separately.
func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ObserveLine widens root, an object kind from NewObject, by one line's
// JSON object.
func (root *Kind) ObserveLine(b []byte) error {
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
	// New top-level keys are recorded in document order, which takes a
	// second pass over the line: only lines that bring one pay for it.
	keys := root.names
	for name := range obj {
		if _, known := root.fields[name]; !known {
			var err error
			if keys, err = topLevelKeys(b); err != nil {
				return fmt.Errorf("malformed JSON (%v)", err)
			}
			break
		}
	}
	for _, name := range keys {
		if _, in := obj[name]; !in {
			continue
		}
		f, ok := root.fields[name]
		if !ok {
			f = &Kind{}
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

// ColumnType maps an Iceberg primitive type name from source.schema to the
// Arrow type the readers produce for it.
func ColumnType(name string) (arrow.DataType, error) {
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
