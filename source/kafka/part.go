package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

// part is one range of one partition.
type part struct {
	src         *Source
	tableSchema *arrow.Schema
	r           Range

	mu      sync.Mutex
	records []*kgo.Record // the range's messages, fetched once
	schema  *arrow.Schema
	asText  []string
	rows    []arrow.RecordBatch // json: the rows, built once
	lines   []byte              // debezium-json: one compact value a line
	offsets []int64             // the offset of each line
	wire    []wireMessage       // registry formats: the messages' schemas and bodies
	tomb    *tombstones         // mode upsert of a topic of rows: its deletes

	asideMu sync.Mutex
	aside   ingest.BadRecords // on-bad-record: dead-letter
	// checkJSON checks each value is whole JSON before it is inferred
	// from, once a value failed the inference (errInferAgain).
	checkJSON bool
}

func (p *part) Name() string {
	return fmt.Sprintf("kafka:%s/%d@%d-%d", p.r.Topic, p.r.Partition, p.r.From, p.r.Until)
}

// SizeBytes is unknown until the messages are fetched.
func (p *part) SizeBytes() int64 { return -1 }

func (p *part) bad(at int64, err error) error {
	if ve, ok := errors.AsType[*jsonrows.ValueError](err); ok {
		// Without source.schema, a column whose values are read as a type
		// rather than inferred has the table's type.
		ve.Table = p.src.schema == nil
	}
	return &ingest.BadMessageError{Topic: p.r.Topic, Partition: p.r.Partition, Offset: at, Err: err}
}

// fetch reads the range's messages once: the offsets [From, Until),
// without transaction markers and, on a compacted topic, without the
// offsets compaction removed.
func (p *part) fetch(ctx context.Context) error {
	if p.records != nil {
		return nil
	}
	opts := append(p.src.kopts[:len(p.src.kopts):len(p.src.kopts)],
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{p.r.Topic: {p.r.Partition: kgo.NewOffset().At(p.r.From)}}),
		kgo.KeepControlRecords())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, p.r.Size())
	next := p.r.From
	for next < p.r.Until {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fs.EachError(func(t string, pt int32, err error) {
			ferr = fmt.Errorf("kafka source: fetch %s/%d from offset %d: %w", t, pt, next, err)
		})
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < next || r.Offset >= p.r.Until {
				return
			}
			next = r.Offset + 1
			if !r.Attrs.IsControl() {
				recs = append(recs, r)
			}
		})
	}
	p.records = recs
	p.src.sizes.note(recs)
	p.src.fetched.add(p.r.TopicPartition, len(recs))
	return nil
}

// derive fetches the messages and works out the rows' schema.
func (p *part) derive(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.schema != nil {
		return nil
	}
	if err := p.fetch(ctx); err != nil {
		return err
	}
	if n := len(p.records); n > 0 {
		p.src.sawTimestamp(p.records[n-1].Timestamp.UnixMilli())
	}
	if p.src.upsert != nil {
		p.tomb = &tombstones{up: p.src.upsert}
	}
	switch p.src.format {
	case "kafka":
		p.schema = rawSchema(p.src.includeHeaders)
		return nil
	case "json":
		return p.deriveJSON(ctx)
	case "debezium-json":
		return p.deriveDebezium()
	case "avro", "debezium-avro", "protobuf", "json-schema":
		return p.deriveRegistry(ctx)
	}
	return fmt.Errorf("%w: kafka source: format %q is not supported; use kafka, json, debezium-json, avro, debezium-avro, protobuf or json-schema", source.ErrConfig, p.src.format)
}

// errInferAgain stops a pass that infers the columns at the first value
// that fails, under on-bad-record: dead-letter.
var errInferAgain = errors.New("infer the columns again, values checked")

// deriveJSON reads every value as one JSON object, in one pass that also
// infers the columns unless source.schema gives them.
func (p *part) deriveJSON(ctx context.Context) error {
	given := p.src.schema
	if given != nil && p.tomb != nil && len(given.FieldIndices(p.tomb.up.OpColumn)) == 0 {
		given = arrow.NewSchema(append(given.Fields(), arrow.Field{Name: p.tomb.up.OpColumn, Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	}
	rows := jsonrows.NewRows()
	if given != nil {
		rows = jsonrows.NewRowsOf(given, nil)
	}
	err := p.appendJSON(ctx, rows)
	if errors.Is(err, errInferAgain) {
		// A value failed while the columns were inferred: it may have left
		// keys it reached as columns. Inferred again, every value is
		// checked to be whole JSON first; most batches never pay for that.
		p.checkJSON = true
		rows = jsonrows.NewRows()
		err = p.appendJSON(ctx, rows)
	}
	if err != nil {
		return err
	}
	switch {
	case given != nil:
		p.schema = given
	case rows.Empty():
		// Objects without keys hold nothing to write.
		p.schema = arrow.NewSchema(nil, nil)
		return nil
	default:
		inferred := rows.Schema()
		p.schema, p.asText = jsonrows.AsTable(inferred, p.tableSchema, true)
		if !p.schema.Equal(inferred) {
			// The table's types are not the inferred ones (a long column
			// read as string, say): the values are read again as those.
			rows = jsonrows.NewRowsOf(p.schema, p.asText)
			if err := p.appendJSON(ctx, rows); err != nil {
				return err
			}
		}
	}
	p.rows, err = rows.Records(p.schema)
	return err
}

// appendJSON appends every value; in mode upsert, a tombstone's row
// deletes its key, and every value upserts.
func (p *part) appendJSON(ctx context.Context, rows *jsonrows.Rows) error {
	rows.Reserve(len(p.records))
	if p.tomb != nil {
		p.tomb.keys = p.tomb.keys[:0]
	}
	for _, r := range p.records {
		if p.setAside(r) {
			continue
		}
		v := r.Value
		switch {
		case v == nil && p.tomb != nil && r.Key != nil:
			key, err := p.tombstoneKey(ctx, r)
			if isBad(err) {
				if err := p.badRecord(r, err); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			v = p.tomb.row(key)
		case v == nil:
			if err := p.badRecord(r, errors.New("the value is null (a tombstone), not a JSON object; a topic of change events with tombstones is read with format debezium-json, "+
				"and in sink.mode upsert a tombstone with a key deletes the key")); err != nil {
				return err
			}
			continue
		case p.checkJSON && !rows.Fixed() && !json.Valid(v):
			p.badRecord(r, jsonrows.Malformed(v))
			continue
		case p.tomb != nil:
			var err error
			if v, err = p.tomb.withOp(v); err != nil {
				if err := p.badRecord(r, err); err != nil {
					return err
				}
				continue
			}
		}
		if err := rows.Append(v); err != nil {
			if p.src.deadLetters && !rows.Fixed() && !p.checkJSON {
				return errInferAgain
			}
			if err := p.badRecord(r, err); err != nil {
				return err
			}
			rows.SetAside()
		}
	}
	return nil
}

// deriveDebezium reads the values as Debezium change events; tombstones
// (null values) hold no row.
func (p *part) deriveDebezium() error {
	var buf bytes.Buffer
	for _, r := range p.records {
		if r.Value == nil || p.setAside(r) {
			continue
		}
		if err := json.Compact(&buf, r.Value); err != nil {
			if err := p.badRecord(r, fmt.Errorf("the value is not valid JSON (%v)", err)); err != nil {
				return err
			}
			continue
		}
		buf.WriteByte('\n')
		p.offsets = append(p.offsets, r.Offset)
	}
	p.lines = buf.Bytes()
	events := func(fn func(at int64, b []byte) error) error {
		for i, line := range bytes.Split(bytes.TrimSuffix(p.lines, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if p.setAsideAt(p.offsets[i]) {
				continue
			}
			if err := fn(p.offsets[i], line); err != nil {
				if err := p.badAt(p.offsets[i], err); err != nil {
					return err
				}
			}
		}
		return nil
	}
	schema, asText, err := jsonrows.DebeziumSchema(events, p.tableSchema, "offset")
	if err != nil {
		return err
	}
	p.schema, p.asText = schema, asText
	return nil
}

// Schema is the rows' schema; the messages are fetched for it, once.
func (p *part) Schema(ctx context.Context) (*arrow.Schema, error) {
	if err := p.derive(ctx); err != nil {
		return nil, err
	}
	return p.schema, nil
}

// Open reads the range's messages as rows.
func (p *part) Open(ctx context.Context) (array.RecordReader, error) {
	if err := p.derive(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.src.format == "kafka" {
		return rawReader(p.records, p.schema, p.src.includeHeaders)
	}
	switch p.src.format {
	case "avro", "debezium-avro", "protobuf", "json-schema":
		r := &wireReader{p: p, msgs: p.wire, schema: p.schema}
		r.refs.Store(1)
		return r, nil
	}
	if p.src.format == "json" {
		return array.NewRecordReader(p.schema, p.rows)
	}
	r := jsonrows.NewReader(bytes.NewReader(p.lines), nil, p.schema, p.asText, jsonrows.DebeziumRow())
	if p.src.deadLetters {
		r.SetAside(func(line int, _ []byte, err error) { _ = p.badAt(p.offsets[line-1], err) },
			func(line int) bool { return p.setAsideAt(p.offsets[line-1]) })
	}
	return &offsetReader{Reader: r, p: p}, nil
}

// offsetReader names a bad value by its offset instead of its line.
type offsetReader struct {
	*jsonrows.Reader
	p *part
}

func (r *offsetReader) Err() error {
	err := r.Reader.Err()
	var le *jsonrows.LineError
	if errors.As(err, &le) && le.Line >= 1 && le.Line <= len(r.p.offsets) {
		return r.p.bad(r.p.offsets[le.Line-1], le.Err)
	}
	return err
}

// rawSchema is Spark's Kafka source row.
func rawSchema(headers bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "key", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "offset", Type: arrow.PrimitiveTypes.Int64},
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "timestampType", Type: arrow.PrimitiveTypes.Int32},
	}
	if headers {
		fields = append(fields, arrow.Field{Name: "headers", Nullable: true, Type: arrow.ListOf(arrow.StructOf(
			arrow.Field{Name: "key", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true}))})
	}
	return arrow.NewSchema(fields, nil)
}

// rawReader builds Spark's rows, jsonrows.BatchRows a record.
func rawReader(recs []*kgo.Record, schema *arrow.Schema, headers bool) (array.RecordReader, error) {
	var out []arrow.RecordBatch
	for len(recs) > 0 {
		n := min(len(recs), jsonrows.BatchRows)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for _, r := range recs[:n] {
			appendBytes(b.Field(0).(*array.BinaryBuilder), r.Key)
			appendBytes(b.Field(1).(*array.BinaryBuilder), r.Value)
			b.Field(2).(*array.StringBuilder).Append(r.Topic)
			b.Field(3).(*array.Int32Builder).Append(r.Partition)
			b.Field(4).(*array.Int64Builder).Append(r.Offset)
			b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp.UnixMicro()))
			tt := int32(0)
			if r.Attrs.TimestampType() == 1 {
				tt = 1
			}
			b.Field(6).(*array.Int32Builder).Append(tt)
			if headers {
				lb := b.Field(7).(*array.ListBuilder)
				lb.Append(true)
				sb := lb.ValueBuilder().(*array.StructBuilder)
				for _, h := range r.Headers {
					sb.Append(true)
					sb.FieldBuilder(0).(*array.StringBuilder).Append(h.Key)
					appendBytes(sb.FieldBuilder(1).(*array.BinaryBuilder), h.Value)
				}
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
		recs = recs[n:]
	}
	rr, err := array.NewRecordReader(schema, out)
	for _, r := range out {
		r.Release()
	}
	return rr, err
}

func appendBytes(b *array.BinaryBuilder, v []byte) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(v)
}
