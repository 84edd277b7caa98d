// Package debezium decodes Debezium change events as Kafka Connect's
// JsonConverter writes them, with or without the {"schema", "payload"}
// wrapper, into flat rows: the row image's columns and the three columns
// Debezium's ExtractNewRecordState transform adds with
// add.fields=op,source.lsn,ts_ms. It serves every source of such events
// (files, Kafka's debezium-json; its op and row image rules also Kafka's
// debezium-avro), so it knows nothing of where the bytes come from.
package debezium

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// The columns a flat row holds besides the row image, named as
// ExtractNewRecordState names them.
const (
	OpColumn  = "__op"         // c, r, u or d
	LSNColumn = "__source_lsn" // the source's lsn, null when it has none
	TsColumn  = "__ts_ms"      // the envelope's ts_ms
)

// MetaFields are the Arrow fields of OpColumn, LSNColumn and TsColumn, in
// the order they follow the row image's columns.
func MetaFields() []arrow.Field {
	return []arrow.Field{
		{Name: OpColumn, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: LSNColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: TsColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}
}

// Event is one decoded change event.
type Event struct {
	// Op is c (create), r (snapshot read), u (update) or d (delete).
	Op string
	// Row is the row image, after for c, r and u and before for d, as a
	// JSON object whose values arrow's JSON builders read as the types of
	// Fields (a Connect decimal is its decimal text, a zoned timestamp its
	// microseconds since the epoch).
	Row json.RawMessage
	// Fields are the row image's columns with the Arrow types of their
	// Connect schema, or nil when the event came without one.
	Fields []arrow.Field
	// LSN is source.lsn, nil when the source has none.
	LSN *int64
	// TsMs is the envelope's ts_ms, nil when absent.
	TsMs *int64
}

// Flat is the event as one JSON object: the row image's columns and the
// three metadata columns.
func (e Event) Flat() []byte {
	row := bytes.TrimSpace(e.Row)
	out := make([]byte, 0, len(row)+64)
	out = append(out, row[:len(row)-1]...)
	if len(bytes.TrimSpace(row[1:len(row)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"`+OpColumn+`":"`...)
	out = append(out, e.Op...)
	out = append(out, `","`+LSNColumn+`":`...)
	out = appendInt(out, e.LSN)
	out = append(out, `,"`+TsColumn+`":`...)
	out = appendInt(out, e.TsMs)
	return append(out, '}')
}

func appendInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *v, 10)
}

// Decoder decodes events, keeping the row schemas it has parsed: every
// event of a table carries the same Connect schema, so each is parsed once.
type Decoder struct {
	schemas map[string]*rowSchema
}

// maxSchemas bounds the schemas a Decoder keeps; a stream whose schema
// changes that often just parses it again.
const maxSchemas = 64

// NewDecoder returns a decoder with no schema parsed yet.
func NewDecoder() *Decoder { return &Decoder{schemas: map[string]*rowSchema{}} }

// ErrTombstone is Decode's answer for a tombstone (null, an empty line, or
// a wrapper whose payload is null): Kafka's marker that a key's earlier
// messages may be compacted away. It carries no row.
var ErrTombstone = errors.New("tombstone")

// Decode decodes one event. Its errors say what is wrong with the event and
// how to fix it, without naming where it came from: the caller adds that.
func (d *Decoder) Decode(b []byte) (Event, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return Event{}, ErrTombstone
	}
	var top map[string]json.RawMessage
	if err := unmarshal(b, &top); err != nil {
		return Event{}, err
	}
	var schema json.RawMessage
	if payload, ok := top["payload"]; ok && (hasKey(top, "schema") || !hasKey(top, "op")) {
		schema = top["schema"]
		if isNull(payload) {
			return Event{}, ErrTombstone
		}
		top = nil
		if err := unmarshal(payload, &top); err != nil {
			return Event{}, fmt.Errorf("payload: %w", err)
		}
	}
	op, err := opOf(top)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Op: op}
	image := Image(op)
	row := bytes.TrimSpace(top[image])
	switch {
	case isNull(row):
		return Event{}, NoImage(op)
	case row[0] != '{':
		return Event{}, fmt.Errorf("%q is %s, not an object holding the row's columns; fix or remove the line", image, row)
	}
	if ev.LSN, err = lsnOf(top["source"]); err != nil {
		return Event{}, err
	}
	if ev.TsMs, err = intOf(top["ts_ms"]); err != nil {
		return Event{}, fmt.Errorf("ts_ms %s is not an integer (milliseconds since the epoch); fix or remove the line", top["ts_ms"])
	}
	if isNull(schema) {
		if err := checkNames(row); err != nil {
			return Event{}, err
		}
		ev.Row = row
		return ev, nil
	}
	rs, err := d.rowSchema(schema, image)
	if err != nil {
		return Event{}, err
	}
	ev.Fields = rs.fields
	if ev.Row, err = rs.convert(row); err != nil {
		return Event{}, err
	}
	return ev, nil
}

func (d *Decoder) rowSchema(schema json.RawMessage, image string) (*rowSchema, error) {
	key := image + string(schema)
	if rs, ok := d.schemas[key]; ok {
		return rs, nil
	}
	rs, err := parseRowSchema(schema, image)
	if err != nil {
		return nil, err
	}
	if len(d.schemas) >= maxSchemas {
		clear(d.schemas)
	}
	d.schemas[key] = rs
	return rs, nil
}

func unmarshal(b []byte, v *map[string]json.RawMessage) error {
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errors.New("malformed JSON (a line must hold one change event, a JSON object)")
		}
		return fmt.Errorf("malformed JSON (%v)", err)
	}
	if *v == nil {
		return errors.New("malformed JSON (a line must hold one change event, a JSON object)")
	}
	return nil
}

func hasKey(m map[string]json.RawMessage, k string) bool {
	_, ok := m[k]
	return ok
}

func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// opOf reads and checks the event's op.
func opOf(top map[string]json.RawMessage) (string, error) {
	raw, ok := top["op"]
	if !ok {
		return "", errors.New(`no "op" field, so not a Debezium change event; ` +
			"rows without the envelope (after ExtractNewRecordState, say) are read with format json")
	}
	var op string
	if err := json.Unmarshal(raw, &op); err != nil {
		return "", fmt.Errorf("op %s is not a string; %s", raw, validOps)
	}
	return op, CheckOp(op)
}

// CheckOp refuses an op floe does not apply: a truncate, or an unknown
// one. Its error says how to go on, for any serialization of the events.
func CheckOp(op string) error {
	switch op {
	case "c", "r", "u", "d":
		return nil
	case "t":
		return errors.New(`op "t" truncates the source table, and floe does not apply truncates; ` +
			"empty the Iceberg table yourself if that is meant, then remove the line or quarantine the file (on-bad-file: quarantine)")
	}
	return fmt.Errorf("unknown op %q; %s", op, validOps)
}

// Image is the envelope field holding the row of an event of op: before
// for a delete, after for the others.
func Image(op string) string {
	if op == "d" {
		return "before"
	}
	return "after"
}

// NoImage is the error of an event of op whose row image (Image) is null.
func NoImage(op string) error {
	if op == "d" {
		return errors.New(`op "d" has no "before" row image, so the deleted row is unknown; ` +
			"give the source table a replica identity that includes its key (PostgreSQL: REPLICA IDENTITY DEFAULT or FULL), " +
			"then remove the line or quarantine the file (on-bad-file: quarantine)")
	}
	return fmt.Errorf(`op %q has no "after" row image, which every create, read and update event has; `+
		"fix or remove the line, or quarantine the file (on-bad-file: quarantine)", op)
}

const validOps = "a Debezium change event's op is c (create), r (read), u (update), d (delete) or t (truncate, which floe refuses); " +
	"fix or remove the line, or quarantine the file (on-bad-file: quarantine)"

// lsnOf reads source.lsn: PostgreSQL's log sequence number, an integer.
// Sources without one (MySQL, MongoDB) give null.
func lsnOf(source json.RawMessage) (*int64, error) {
	if isNull(source) {
		return nil, nil
	}
	var s struct {
		LSN json.RawMessage `json:"lsn"`
	}
	if err := json.Unmarshal(source, &s); err != nil {
		return nil, fmt.Errorf("source is %s, not an object; fix or remove the line", source)
	}
	v, err := intOf(s.LSN)
	if err != nil {
		return nil, fmt.Errorf("source.lsn %s is not an integer; floe reads it as PostgreSQL's 64-bit log sequence number: fix or remove the line", s.LSN)
	}
	return v, nil
}

// intOf reads an integer written as a number or a string of digits, or
// null.
func intOf(raw json.RawMessage) (*int64, error) {
	if isNull(raw) {
		return nil, nil
	}
	s := string(bytes.TrimSpace(raw))
	if s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// checkNames refuses a row image holding a column of the name a metadata
// column has: one of the two would be lost.
func checkNames(row json.RawMessage) error {
	if !bytes.Contains(row, []byte(`"__`)) {
		return nil
	}
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(row, &cols); err != nil {
		return fmt.Errorf("malformed JSON (%v)", err)
	}
	for _, f := range MetaFields() {
		if _, ok := cols[f.Name]; ok {
			return nameClash(f.Name)
		}
	}
	return nil
}

func nameClash(name string) error {
	return fmt.Errorf("the row has a column %q, the name of a column floe adds to every change; rename the column at the source", name)
}
