package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

// tombstones are a part's deletes by key in mode upsert: a message of a
// topic of rows whose value is null and whose key is not deletes the key,
// as in a compacted topic. The key's fields (a JSON object, a record in
// the Confluent wire format, or a plain key for a single key column) fill
// the key columns by name; the op column says delete.
type tombstones struct {
	up   *source.Upsert
	keys [][]byte // the part's tombstones' keys as JSON objects
	// schema is a tombstone row's: the key fields, then the op column.
	schema *arrow.Schema
}

// tombstoneKey is the key of a tombstone r as a JSON object of the key
// columns, or nil when r deletes nothing: outside mode upsert, or
// without a key (a tombstone is then skipped, as Debezium's after its
// delete event always are). A key that cannot be read is bad input
// (isBad), for the caller to name or set aside.
func (p *part) tombstoneKey(ctx context.Context, r *kgo.Record) ([]byte, error) {
	if p.tomb == nil || r.Key == nil {
		return nil, nil
	}
	key, err := p.src.keyObject(ctx, r.Key)
	if isBad(err) {
		return nil, badValue{fmt.Errorf("a tombstone (null value) deletes its key in mode upsert, but %w", err)}
	}
	if err != nil {
		return nil, err
	}
	p.tomb.keys = append(p.tomb.keys, key)
	return key, nil
}

// keyObject reads a Kafka key as a JSON object of key columns: a record
// (Avro or JSON Schema) in the Confluent wire format, a JSON object (or
// JsonConverter's {"schema", "payload"} of one), or else a plain key, the
// value of the one key column.
func (s *Source) keyObject(ctx context.Context, k []byte) ([]byte, error) {
	if len(k) >= 5 && k[0] == 0 && s.registry != nil {
		id, body, _ := splitConfluent(k, s.format)
		d, err := s.registry.keyDecoder(ctx, id)
		if err != nil {
			return nil, err
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, d.Arrow())
		defer b.Release()
		if err := d.Append(b, body); err != nil {
			return nil, badValue{fmt.Errorf("the key does not decode with its schema id %d: %w", id, err)}
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		var buf bytes.Buffer
		if err := array.RecordToJSON(rec, &buf); err != nil {
			return nil, badValue{fmt.Errorf("the key of schema id %d: %w", id, err)}
		}
		return bytes.TrimSpace(buf.Bytes()), nil
	}
	if t := bytes.TrimSpace(k); len(t) > 0 && t[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t, &obj); err != nil {
			return nil, badValue{fmt.Errorf("the key %q is not a JSON object: %v", k, err)}
		}
		if p, ok := obj["payload"]; ok && len(obj) == 2 && obj["schema"] != nil {
			t = bytes.TrimSpace(p)
			if len(t) == 0 || t[0] != '{' {
				return nil, badValue{fmt.Errorf("the key's payload %s is not a JSON object of the key's columns", p)}
			}
		}
		return t, nil
	}
	cols := s.keyColumns()
	if len(cols) != 1 {
		return nil, badValue{fmt.Errorf("the key %q is neither a JSON object nor in the Confluent wire format, and a plain key fills one key column, not the %d of %v; "+
			"write the key as a JSON object of the key's columns", k, len(cols), cols)}
	}
	v := strconv.Quote(string(k))
	if _, err := strconv.ParseInt(string(k), 10, 64); err == nil && !s.stringColumn(cols[0]) {
		v = string(k)
	}
	return fmt.Appendf(nil, "{%s:%s}", strconv.Quote(cols[0]), v), nil
}

// keyColumns are the upsert's key columns: the sink's, else the table's
// identifier fields.
func (s *Source) keyColumns() []string {
	if len(s.upsert.Keys) > 0 {
		return s.upsert.Keys
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tableKeys
}

// stringColumn tells whether the table has col as a string column.
func (s *Source) stringColumn(col string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.table == nil {
		return false
	}
	f, ok := s.table.FieldsByName(col)
	return ok && len(f) == 1 && f[0].Type.ID() == arrow.STRING
}

// keyDecoder is the key schema registered under id: Avro or JSON Schema.
func (r *Registry) keyDecoder(ctx context.Context, id int) (rowDecoder, error) {
	d, err := r.built(ctx, id, "key", "", func(reg registered) (any, error) {
		switch reg.schema.Type {
		case sr.TypeAvro:
			return avrorows.ParseWithReferences(reg.schema.Schema, refTexts(reg))
		case sr.TypeJSON:
			refs := map[string]string{}
			for _, r := range reg.refs {
				refs[r.name] = r.schema.Schema
			}
			return jsonrows.ParseJSONSchema(reg.schema.Schema, refs)
		}
		return nil, errors.New("it is a Protobuf schema, and floe reads keys of Avro or JSON Schema, JSON objects and plain keys")
	})
	if err != nil {
		return nil, err
	}
	return d.(rowDecoder), nil
}

// tombSchema is the tombstone rows' schema: the key fields, typed as the
// values' columns of their name, else as the table's, else as inferred;
// then the op column. Every column is nullable.
func (p *part) tombSchema(values []*arrow.Schema) *arrow.Schema {
	t := p.tomb
	var fields []arrow.Field
	if len(t.keys) > 0 {
		rows := jsonrows.NewRows()
		for _, k := range t.keys {
			// A key that does not infer is refused when its row is read.
			_ = rows.Append(k)
		}
		inferred, _ := jsonrows.AsTable(rows.Schema(), p.tableSchema, true)
		for _, f := range inferred.Fields() {
			for _, v := range values {
				if vf, ok := v.FieldsByName(f.Name); ok && len(vf) == 1 {
					f.Type = vf[0].Type
				}
			}
			if f.Name != t.up.OpColumn {
				f.Nullable = true
				fields = append(fields, f)
			}
		}
	}
	if len(t.keys) > 0 || t.up.AddOp {
		fields = append(fields, arrow.Field{Name: t.up.OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	t.schema = arrow.NewSchema(fields, nil)
	return t.schema
}

// row is a tombstone's row as a JSON object: its key's fields and the
// op column's delete code.
func (t *tombstones) row(key []byte) []byte {
	out := fmt.Appendf(nil, "{%s:%s", strconv.Quote(t.up.OpColumn), strconv.Quote(t.up.Delete))
	if rest := bytes.TrimSpace(key[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, key[1:]...)
}

// clash is the error of a value holding the op column the source adds.
func (t *tombstones) clash() error {
	return badValue{fmt.Errorf("the value has a column %q, which floe adds in mode upsert to say which rows delete; "+
		"if it holds the operation, name it in sink.cdc.op-column, else rename it at the source", t.up.OpColumn)}
}

// withOp is a value's JSON object with the op column's upsert code
// first, when the source adds the op column.
func (t *tombstones) withOp(value []byte) ([]byte, error) {
	v := bytes.TrimSpace(value)
	if !t.up.AddOp || len(v) == 0 || v[0] != '{' {
		return value, nil
	}
	if bytes.Contains(v, []byte(strconv.Quote(t.up.OpColumn))) {
		var cols map[string]json.RawMessage
		if json.Unmarshal(v, &cols) == nil && cols[t.up.OpColumn] != nil {
			return nil, t.clash()
		}
	}
	out := fmt.Appendf(nil, "{%s:%s", strconv.Quote(t.up.OpColumn), strconv.Quote(t.up.Upsert))
	if rest := bytes.TrimSpace(v[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, v[1:]...), nil
}

// append reads a tombstone into b, a builder of t.schema.
func (t *tombstones) append(b *array.RecordBuilder, key []byte) error {
	if err := b.UnmarshalJSON(t.row(key)); err != nil {
		return fmt.Errorf("the key %s does not fill the key columns: %w", key, err)
	}
	return nil
}

// withUpsertOp adds the op column to a record of values, each an upsert,
// when the source adds the op column; it takes over rec.
func (t *tombstones) withUpsertOp(rec arrow.RecordBatch) arrow.RecordBatch {
	if !t.up.AddOp {
		return rec
	}
	defer rec.Release()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.Reserve(int(rec.NumRows()))
	for range rec.NumRows() {
		sb.Append(t.up.Upsert)
	}
	op := sb.NewArray()
	defer op.Release()
	fields := append(rec.Schema().Fields(), arrow.Field{Name: t.up.OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
	cols := append(rec.Columns()[:len(rec.Columns()):len(rec.Columns())], op)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}
