package jsonrows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// JSONSchema is a JSON Schema, as Confluent's JSON Schema serializer
// registers it, mapped onto Arrow columns; its values are JSON objects.
type JSONSchema struct {
	arrow *arrow.Schema
}

// jsonNode is the part of a JSON Schema that says a value's type.
type jsonNode struct {
	Type        json.RawMessage      `json:"type"`
	Format      string               `json:"format"`
	Properties  map[string]*jsonNode `json:"properties"`
	Required    []string             `json:"required"`
	Items       *jsonNode            `json:"items"`
	Ref         string               `json:"$ref"`
	OneOf       []*jsonNode          `json:"oneOf"`
	AnyOf       []*jsonNode          `json:"anyOf"`
	Definitions map[string]*jsonNode `json:"definitions"`
	Defs        map[string]*jsonNode `json:"$defs"`
	// order is the properties' order in the schema's text, which the
	// columns keep.
	order []string
}

func (n *jsonNode) UnmarshalJSON(b []byte) error {
	type plain jsonNode
	if err := json.Unmarshal(b, (*plain)(n)); err != nil {
		return err
	}
	var raw struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Properties) == 0 {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Properties))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		n.order = append(n.order, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// ParseJSONSchema maps a JSON Schema whose root is an object with
// properties onto Arrow: integer is int64, number float64, boolean and
// string themselves (format date-time a timestamp with zone, date a
// date), an object with properties a struct, an array a list; a property
// is non-null when required and its type does not admit null. $ref
// reaches the schema's definitions ($defs) and refs, the schemas a
// registry holds as its references, by the name they are referenced by.
func ParseJSONSchema(schema string, refs map[string]string) (*JSONSchema, error) {
	m := jsonMapper{refs: map[string]*jsonNode{}}
	root, err := parseNode(schema)
	if err != nil {
		return nil, fmt.Errorf("the JSON Schema does not parse: %w", err)
	}
	for name, r := range refs {
		if m.refs[name], err = parseNode(r); err != nil {
			return nil, fmt.Errorf("the referenced JSON Schema %q does not parse: %w", name, err)
		}
	}
	m.root = root
	dt, _, err := m.typeOf(root, "")
	if err != nil {
		return nil, err
	}
	st, ok := dt.(*arrow.StructType)
	if !ok {
		return nil, fmt.Errorf("the JSON Schema describes %s values, not objects whose properties become columns", dt)
	}
	return &JSONSchema{arrow: arrow.NewSchema(st.Fields(), nil)}, nil
}

func parseNode(s string) (*jsonNode, error) {
	var n jsonNode
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// Arrow is the columns of the schema's objects.
func (s *JSONSchema) Arrow() *arrow.Schema { return s.arrow }

// Append reads one JSON object into b's next row; keys that are no
// column are skipped, and absent ones are null.
func (s *JSONSchema) Append(b *array.RecordBuilder, body []byte) error {
	if err := b.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("the value does not match its JSON Schema: %w", err)
	}
	return nil
}

type jsonMapper struct {
	root *jsonNode
	refs map[string]*jsonNode
	// visiting are the $refs being mapped, which may not contain
	// themselves.
	visiting []string
}

// resolve follows $ref: "#/definitions/x" or "#/$defs/x" in the root,
// a reference's name, or a reference's name with such a fragment.
func (m *jsonMapper) resolve(ref string) (*jsonNode, error) {
	doc, frag, _ := strings.Cut(ref, "#")
	base := m.root
	if doc != "" {
		if base = m.refs[doc]; base == nil {
			return nil, fmt.Errorf("$ref %q names no schema reference of this schema", ref)
		}
	}
	if frag == "" || frag == "/" {
		return base, nil
	}
	for _, defs := range []struct {
		prefix string
		m      map[string]*jsonNode
	}{{"/definitions/", base.Definitions}, {"/$defs/", base.Defs}} {
		if name, ok := strings.CutPrefix(frag, defs.prefix); ok && defs.m[name] != nil {
			return defs.m[name], nil
		}
	}
	return nil, fmt.Errorf("$ref %q names no definition (only #/definitions/NAME and #/$defs/NAME are followed)", ref)
}

// typeOf maps n, at path (for errors), and tells whether it admits null.
func (m *jsonMapper) typeOf(n *jsonNode, path string) (arrow.DataType, bool, error) {
	at := path
	if at == "" {
		at = "the schema"
	}
	if n.Ref != "" {
		if slices.Contains(m.visiting, n.Ref) {
			return nil, false, fmt.Errorf("%s: $ref %q contains itself, which a table cannot hold", at, n.Ref)
		}
		d, err := m.resolve(n.Ref)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", at, err)
		}
		m.visiting = append(m.visiting, n.Ref)
		defer func() { m.visiting = m.visiting[:len(m.visiting)-1] }()
		return m.typeOf(d, path)
	}
	if alts := append(n.OneOf, n.AnyOf...); len(alts) > 0 {
		var other []*jsonNode
		null := false
		for _, a := range alts {
			if ts, _ := types(a.Type); len(ts) == 1 && ts[0] == "null" {
				null = true
			} else {
				other = append(other, a)
			}
		}
		if len(other) != 1 {
			return nil, false, fmt.Errorf("%s: oneOf/anyOf of %d schemas besides null is not supported; only a schema or null", at, len(other))
		}
		dt, n2, err := m.typeOf(other[0], path)
		return dt, null || n2, err
	}
	ts, err := types(n.Type)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", at, err)
	}
	null := false
	var typ string
	for _, t := range ts {
		switch {
		case t == "null":
			null = true
		case typ != "" && !(typ == "number" && t == "integer" || typ == "integer" && t == "number"):
			return nil, false, fmt.Errorf("%s: the types %s and %s in one property are not supported; only a type or null", at, typ, t)
		case typ == "" || t == "number":
			typ = t
		}
	}
	if typ == "" && len(n.Properties) > 0 {
		typ = "object"
	}
	switch typ {
	case "integer":
		return arrow.PrimitiveTypes.Int64, null, nil
	case "number":
		return arrow.PrimitiveTypes.Float64, null, nil
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, null, nil
	case "string":
		switch n.Format {
		case "date-time":
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, null, nil
		case "date":
			return arrow.FixedWidthTypes.Date32, null, nil
		}
		return arrow.BinaryTypes.String, null, nil
	case "array":
		if n.Items == nil {
			return nil, false, fmt.Errorf("%s: an array without items has no element type; give it items", at)
		}
		et, enull, err := m.typeOf(n.Items, path+"[]")
		if err != nil {
			return nil, false, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: enull}), null, nil
	case "object":
		if len(n.Properties) == 0 {
			return nil, false, fmt.Errorf("%s: an object without properties has no columns; give it properties", at)
		}
		fields := make([]arrow.Field, 0, len(n.order))
		for _, name := range n.order {
			p := name
			if path != "" {
				p = path + "." + name
			}
			dt, pnull, err := m.typeOf(n.Properties[name], p)
			if err != nil {
				return nil, false, err
			}
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: pnull || !slices.Contains(n.Required, name)})
		}
		return arrow.StructOf(fields...), null, nil
	}
	return nil, false, fmt.Errorf("%s: no type floe reads (integer, number, boolean, string, array, object)", at)
}

// types reads "type": one name or a list of names.
func types(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New(`"type" is neither a type name nor a list of them`)
	}
	return many, nil
}
