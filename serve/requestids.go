package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A create request's schema carries the client's field ids, which the
// catalog replaces with fresh ones; the partition spec and sort order name
// their source columns by those ids. Iceberg's Java client numbers a schema
// converted from Spark's from 0, which iceberg-go refuses in a partition
// spec or sort order ("source ID must be positive"). Since the ids are
// replaced anyway, a request whose schema uses id 0 has every id of its
// schema, spec and order raised by one before they are parsed: the same
// columns, the same bindings.

// createParts are the parts of a create request that carry field ids.
type createParts struct {
	Schema, Spec, Order json.RawMessage
}

// raiseZeroIDs returns the parts with every field id raised by one when the
// schema uses id 0, and unchanged otherwise.
func raiseZeroIDs(p createParts) (createParts, error) {
	schema, err := decodeTree(p.Schema)
	if err != nil || schema == nil {
		return p, err
	}
	if !usesID(schema, 0) {
		return p, nil
	}
	out := p
	raise(schema, schemaIDKeys)
	if out.Schema, err = json.Marshal(schema); err != nil {
		return p, err
	}
	for _, part := range []*json.RawMessage{&out.Spec, &out.Order} {
		tree, err := decodeTree(*part)
		if err != nil {
			return p, err
		}
		if tree == nil {
			continue
		}
		raise(tree, sourceIDKeys)
		if *part, err = json.Marshal(tree); err != nil {
			return p, err
		}
	}
	return out, nil
}

// The keys whose values are field ids: in a schema (struct fields, list
// elements, map keys and values, identifier fields), and in a partition
// spec's or sort order's fields (source-ids is v3's multi-argument form).
var (
	schemaIDKeys = map[string]bool{"id": true, "element-id": true, "key-id": true, "value-id": true, "identifier-field-ids": true}
	sourceIDKeys = map[string]bool{"source-id": true, "source-ids": true}
)

func decodeTree(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// usesID tells whether id appears as a field id of the schema tree.
func usesID(v any, id int64) bool {
	found := false
	walk(v, schemaIDKeys, func(n json.Number) json.Number {
		if i, err := n.Int64(); err == nil && i == id {
			found = true
		}
		return n
	})
	return found
}

// raise adds one to every id under keys.
func raise(v any, keys map[string]bool) {
	walk(v, keys, func(n json.Number) json.Number {
		i, err := n.Int64()
		if err != nil {
			return n
		}
		return json.Number(fmt.Sprint(i + 1))
	})
}

// walk calls f on every number under one of keys (alone or in a list) and
// stores what it returns.
func walk(v any, keys map[string]bool, f func(json.Number) json.Number) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if keys[k] {
				switch n := e.(type) {
				case json.Number:
					x[k] = f(n)
					continue
				case []any:
					for i, m := range n {
						if num, ok := m.(json.Number); ok {
							n[i] = f(num)
						}
					}
					continue
				}
			}
			walk(e, keys, f)
		}
	case []any:
		for _, e := range x {
			walk(e, keys, f)
		}
	}
}
