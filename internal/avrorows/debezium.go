package avrorows

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/avro"

	"github.com/floe-io/floe/internal/debezium"
)

// Envelope is the schema of Debezium change events written with
// Confluent's Avro converter, read as source.format debezium-json reads
// the same events in JSON: each event is its row image (after, or before
// for a delete) plus debezium.MetaFields.
type Envelope struct {
	avro  *avro.Schema
	arrow *arrow.Schema
	row   *avroType
}

// ParseDebezium maps an envelope's schema, whose named types may be
// defined in refs (as ParseWithReferences). Every row column is nullable:
// a delete's before image may hold only the key. Debezium's time types,
// which the converter names in connect.name, are mapped as debezium-json
// maps them: Date a date, Time and MicroTime a time, Timestamp and
// MicroTimestamp a timestamp, ZonedTimestamp a timestamptz.
func ParseDebezium(schema string, refs []string) (*Envelope, error) {
	s, err := parseAvro(schema, refs)
	if err != nil {
		return nil, err
	}
	root := s.Root()
	m := avroMapper{named: map[string]*avro.SchemaNode{}, connect: true}
	env, err := m.typeOf(root, "")
	if err != nil {
		return nil, err
	}
	var row *avroType
	has := map[string]bool{}
	for _, f := range env.fields {
		has[f.name] = true
		if f.name == "after" || f.name == "before" {
			row = f.typ
		}
	}
	if env.kind != "record" || !has["op"] || row == nil || row.kind != "record" {
		return nil, errors.New(`the schema is not a Debezium envelope (a record with "before", "after" and "op"); a topic of plain rows is read with source.format avro`)
	}
	fields := make([]arrow.Field, 0, len(row.fields)+3)
	for _, f := range row.fields {
		for _, meta := range debezium.MetaFields() {
			if f.name == meta.Name {
				return nil, fmt.Errorf("the row has a column %q, the name of a column floe adds to every change; rename the column at the source", f.name)
			}
		}
		fields = append(fields, arrow.Field{Name: f.name, Type: f.typ.arrow, Nullable: true})
	}
	fields = append(fields, debezium.MetaFields()...)
	return &Envelope{avro: s, arrow: arrow.NewSchema(fields, nil), row: row}, nil
}

// Arrow is the rows' schema: the row image's columns, then the metadata
// columns.
func (e *Envelope) Arrow() *arrow.Schema { return e.arrow }

// Append decodes one event into b's next row.
func (e *Envelope) Append(b *array.RecordBuilder, body []byte) error {
	var v any
	rest, err := e.avro.Decode(body, &v)
	if err != nil {
		return fmt.Errorf("the Avro body does not match its schema: %w", err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("%d bytes are left after the Avro record; the body was not written with its schema id's schema", len(rest))
	}
	ev, _ := v.(map[string]any)
	op, _ := ev["op"].(string)
	if err := debezium.CheckOp(op); err != nil {
		return err
	}
	row, _ := ev[debezium.Image(op)].(map[string]any)
	if row == nil {
		return debezium.NoImage(op)
	}
	var lsn, ts any
	if src, ok := ev["source"].(map[string]any); ok {
		lsn = src["lsn"]
	}
	ts = ev["ts_ms"]
	for i, f := range e.row.fields {
		t := *f.typ
		t.null = true
		if err := appendAvro(b.Field(i), &t, row[f.name]); err != nil {
			return fmt.Errorf("field %s: %w", f.name, err)
		}
	}
	n := len(e.row.fields)
	b.Field(n).(*array.StringBuilder).Append(op)
	for i, v := range []any{lsn, ts} {
		lb := b.Field(n + 1 + i).(*array.Int64Builder)
		switch x := v.(type) {
		case int64:
			lb.Append(x)
		case int32:
			lb.Append(int64(x))
		default:
			lb.AppendNull()
		}
	}
	return nil
}
