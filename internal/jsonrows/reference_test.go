package jsonrows_test

// The inference floe had before Rows, kept as the reference Rows must
// agree with: encoding/json decodes each line into a map, and a second
// walk recovers the order of the top-level keys.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/jsonrows"
)

func newRefObject() *refKind { return &refKind{kind: "object", fields: map[string]*refKind{}} }

// Empty reports whether no key was seen.
func (k *refKind) empty() bool { return len(k.names) == 0 }

// Schema is the columns of an object kind, in first-seen key order.
func (k *refKind) schema() *arrow.Schema {
	return arrow.NewSchema(k.arrowType().(*arrow.StructType).Fields(), nil)
}

// Kind is the inferred type of one JSON value position; NewObject is the
// root, a row of JSON lines.
type refKind struct {
	kind   string // "", "bool", "int", "float", "string", "object", "array"
	names  []string
	fields map[string]*refKind
	elem   *refKind
}

func (k *refKind) observe(v any, path string) error {
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
		return &jsonrows.KindConflict{Path: path, Was: refWord(k.kind), Is: refWord(kind)}
	}
	switch val := v.(type) {
	case map[string]any:
		if k.fields == nil {
			k.fields = map[string]*refKind{}
		}
		// Keep first-seen key order: JSON objects are unordered, but users
		// expect the table's columns in the order of their data.
		for _, name := range orderedKeys(val) {
			f, ok := k.fields[name]
			if !ok {
				f = &refKind{}
				k.fields[name] = f
				k.names = append(k.names, name)
			}
			if err := f.observe(val[name], path+"."+name); err != nil {
				return err
			}
		}
	case []any:
		if k.elem == nil {
			k.elem = &refKind{}
		}
		for _, e := range val {
			if err := k.elem.observe(e, path+"[]"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *refKind) arrowType() arrow.DataType {
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
			elem = &refKind{}
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
func (root *refKind) observeLine(b []byte) error {
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
			f = &refKind{}
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

func refWord(kind string) string {
	switch kind {
	case "int", "float":
		return "number"
	case "bool":
		return "boolean"
	}
	return kind
}
