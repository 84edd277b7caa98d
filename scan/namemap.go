package scan

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// Data files written without Parquet field ids (imported with add_files or
// a migration) are resolved through the table's name mapping
// (schema.name-mapping.default): a column whose name the mapping names is
// that field; a column it does not name is no field of the table and is
// not read, as in Iceberg Java (ParquetSchemaUtil.applyNameMapping leaves
// it without an id, and the projection passes it over). iceberg-go 0.7
// fails such a file instead ("cannot convert b ... missing field_id"), so
// the metadata it reads with gets a completed mapping (completeMapping).

// mappingError is why the table's name mapping cannot be read, nil when it
// can. iceberg-go takes a mapping it cannot parse for none and then fails
// a file without field ids on its first column; Iceberg Java refuses to
// read the table's data files.
func mappingError(tbl *table.Table) error {
	var m iceberg.NameMapping
	if err := json.Unmarshal([]byte(tbl.Properties()[table.DefaultNameMappingKey]), &m); err != nil {
		return fmt.Errorf("table %s: its property %s is not a name mapping (%v): the Iceberg spec's is a JSON list of objects {\"field-id\": ID, \"names\": [NAME, ...]}, one per field; correct or remove the property",
			ingest.JoinIdent(tbl.Identifier()), table.DefaultNameMappingKey, err)
	}
	if m == nil {
		return fmt.Errorf("table %s: its property %s is null, not a name mapping; correct or remove the property", ingest.JoinIdent(tbl.Identifier()), table.DefaultNameMappingKey)
	}
	return nil
}

// completeMapping returns m with every name a field of schemas had named
// at its place in the mapping, under the id unread, which no schema uses,
// so that iceberg-go passes over a column of that name rather than fail;
// an entry without an id gets unread too. changed is false when m already
// names them all.
func completeMapping(m iceberg.NameMapping, schemas []*iceberg.Schema, unread int) (out iceberg.NameMapping, changed bool) {
	out = cloneMapping(m)
	for _, sc := range schemas {
		out = completeFields(out, sc.Fields(), unread, &changed)
	}
	return out, changed
}

func completeFields(m []iceberg.MappedField, fields []iceberg.NestedField, unread int, changed *bool) []iceberg.MappedField {
	for i := range m {
		if m[i].FieldID == nil {
			m[i].FieldID, *changed = &unread, true
		}
	}
	for _, f := range fields {
		at := -1
		for i := range m {
			for _, n := range m[i].Names {
				if n == f.Name {
					at = i
				}
			}
		}
		if at < 0 {
			m = append(m, iceberg.MappedField{Names: []string{f.Name}, FieldID: &unread})
			at, *changed = len(m)-1, true
		}
		m[at].Fields = completeFields(m[at].Fields, children(f.Type), unread, changed)
	}
	return m
}

// children are the fields a nested type holds, as the mapping names them:
// a struct's fields, a list's element, a map's key and value.
func children(t iceberg.Type) []iceberg.NestedField {
	switch x := t.(type) {
	case *iceberg.StructType:
		return x.FieldList
	case *iceberg.ListType:
		return []iceberg.NestedField{x.ElementField()}
	case *iceberg.MapType:
		return []iceberg.NestedField{x.KeyField(), x.ValueField()}
	}
	return nil
}

func cloneMapping(m []iceberg.MappedField) []iceberg.MappedField {
	if m == nil {
		return nil
	}
	out := make([]iceberg.MappedField, len(m))
	for i, f := range m {
		out[i] = iceberg.MappedField{Names: f.Names, FieldID: f.FieldID, Fields: cloneMapping(f.Fields)}
	}
	return out
}

// unreadID is an id no field of md has, nor its mapping gives: above the
// table's last column id and every id its schemas and mapping use.
func unreadID(md table.Metadata, m iceberg.NameMapping) int {
	top := md.LastColumnID()
	for _, sc := range md.Schemas() {
		top = max(top, sc.HighestFieldID())
	}
	var walk func([]iceberg.MappedField)
	walk = func(fields []iceberg.MappedField) {
		for _, f := range fields {
			if f.FieldID != nil {
				top = max(top, *f.FieldID)
			}
			walk(f.Fields)
		}
	}
	walk(m)
	return top + 1
}
