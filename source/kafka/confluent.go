package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

// rowDecoder is a registered schema that decodes message bodies into rows.
type rowDecoder interface {
	Arrow() *arrow.Schema
	Append(b *array.RecordBuilder, body []byte) error
}

// wireMessage is one message's place in a part: its offset, and either
// its decoder and body, or, for a tombstone that deletes its key, the
// key's columns as a JSON object.
type wireMessage struct {
	offset int64
	dec    rowDecoder
	body   []byte
	key    []byte
}

// wireNames are the formats' names in the Confluent wire format's errors.
var wireNames = map[string]string{"avro": "Avro", "debezium-avro": "Avro", "protobuf": "Protobuf", "json-schema": "JSON Schema"}

// splitConfluent reads the Confluent wire format: magic byte 0, the
// schema id as 4 big-endian bytes, the body (for Protobuf, its message
// index first).
func splitConfluent(v []byte, format string) (int, []byte, error) {
	if len(v) < 5 || v[0] != 0 {
		return 0, nil, fmt.Errorf("the value is not in the Confluent %s wire format (magic byte 0, a 4-byte schema id, the body); "+
			"was it written by a schema-registry serializer?", wireNames[format])
	}
	return int(binary.BigEndian.Uint32(v[1:5])), v[5:], nil
}

// badValue is a value that is not in its format, whatever the registry
// holds.
type badValue struct{ error }

func (b badValue) Unwrap() error { return b.error }

// isBad tells whether err is the message's fault (bad input named by its
// offset) rather than the registry's or the configuration's.
func isBad(err error) bool {
	var bv badValue
	return errors.As(err, &bv) || errors.Is(err, errUnknownSchema) || errors.Is(err, source.ErrBadInput)
}

// decoder is the decoder of a value in the source's format, and its body.
func (s *Source) decoder(ctx context.Context, v []byte) (rowDecoder, []byte, error) {
	id, body, err := splitConfluent(v, s.format)
	if err != nil {
		return nil, nil, badValue{err}
	}
	switch s.format {
	case "avro":
		d, err := s.registry.Schema(ctx, uint32(id))
		return d, body, err
	case "debezium-avro":
		d, err := s.registry.envelope(ctx, id)
		return d, body, err
	case "json-schema":
		d, err := s.registry.jsonSchema(ctx, id)
		return d, body, err
	}
	index, body, err := (&sr.ConfluentHeader{}).DecodeIndex(body, 0)
	if err != nil {
		return nil, nil, badValue{fmt.Errorf("the value's Protobuf message index does not decode (%v); was it written by Confluent's Protobuf serializer?", err)}
	}
	f, err := s.registry.protobuf(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	d, err := f.message(index)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: schema id %d: %w", source.ErrBadInput, id, err)
	}
	return d, body, nil
}

// jsonSchema is the JSON Schema registered under id.
func (r *Registry) jsonSchema(ctx context.Context, id int) (*jsonrows.JSONSchema, error) {
	d, err := r.built(ctx, id, "json-schema", "", func(reg registered) (any, error) {
		if err := wantType(reg.schema, sr.TypeJSON); err != nil {
			return nil, err
		}
		refs := map[string]string{}
		for _, r := range reg.refs {
			refs[r.name] = r.schema.Schema
		}
		return jsonrows.ParseJSONSchema(reg.schema.Schema, refs)
	})
	if err != nil {
		return nil, err
	}
	return d.(*jsonrows.JSONSchema), nil
}

// deriveRegistry reads each value's schema id and fetches its schema;
// the part's schema is the union of its messages' schemas. Tombstones
// (null values) hold no row, unless they delete their key (tombstones.go).
func (p *part) deriveRegistry(ctx context.Context) error {
	var schemas []*arrow.Schema
	seen := map[rowDecoder]bool{}
	for _, r := range p.records {
		if p.setAside(r) {
			continue
		}
		var m wireMessage
		var err error
		if r.Value == nil {
			m.key, err = p.tombstoneKey(ctx, r)
		} else {
			m.dec, m.body, err = p.src.decoder(ctx, r.Value)
			if err == nil && p.tomb != nil && p.tomb.up.AddOp && len(m.dec.Arrow().FieldIndices(p.tomb.up.OpColumn)) > 0 {
				err = p.tomb.clash()
			}
		}
		if isBad(err) {
			if err := p.badRecord(r, err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if m.dec == nil && m.key == nil {
			continue // a tombstone that deletes nothing
		}
		if m.dec != nil && !seen[m.dec] {
			seen[m.dec] = true
			schemas = append(schemas, m.dec.Arrow())
		}
		m.offset = r.Offset
		p.wire = append(p.wire, m)
	}
	if p.tomb != nil {
		schemas = append(schemas, p.tombSchema(schemas))
	}
	if len(schemas) == 0 {
		p.schema = arrow.NewSchema(nil, nil)
		return nil
	}
	u, err := conform.Union(schemas)
	if err != nil {
		return p.bad(p.wire[0].offset, fmt.Errorf("the messages' schema versions disagree: %w", err))
	}
	p.schema = u
	return nil
}

// wireReader builds a record per run of messages of one schema, of at
// most jsonrows.BatchRows rows, and one per run of tombstones; the
// reader's schema is the union of the part's.
type wireReader struct {
	p      *part
	msgs   []wireMessage
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (r *wireReader) Retain() { r.refs.Add(1) }

func (r *wireReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *wireReader) Schema() *arrow.Schema          { return r.schema }
func (r *wireReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *wireReader) Record() arrow.RecordBatch      { return r.cur }
func (r *wireReader) Err() error                     { return r.err }

// sameRun tells whether the next message goes into the record of n rows
// being built for d (nil: tombstones).
func (r *wireReader) sameRun(d rowDecoder, n int) bool {
	return n < jsonrows.BatchRows && len(r.msgs) > 0 && r.msgs[0].dec == d
}

func (r *wireReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || len(r.msgs) == 0 {
		return false
	}
	d := r.msgs[0].dec
	var schema *arrow.Schema
	if d != nil {
		schema = d.Arrow()
	} else {
		schema = r.p.tomb.schema
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	var dead []int // rows of messages set aside, completed with nulls
	for n := 0; r.sameRun(d, n); n++ {
		m := r.msgs[0]
		var err error
		if d == nil {
			err = r.p.tomb.append(b, m.key)
		} else {
			err = d.Append(b, m.body)
		}
		if err != nil {
			if !r.p.src.deadLetters {
				r.err = r.p.bad(m.offset, err)
				return false
			}
			_ = r.p.badAt(m.offset, err)
			if completeRow(b, n) {
				dead = append(dead, n)
			} else {
				n--
			}
		}
		r.msgs = r.msgs[1:]
	}
	if r.cur, r.err = ingest.WithoutRows(b.NewRecordBatch(), dead); r.err != nil {
		return false
	}
	if d != nil && r.p.tomb != nil {
		r.cur = r.p.tomb.withUpsertOp(r.cur)
	}
	return true
}
