package kafka

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/avro"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

// errUnknownSchema is a schema id the registry does not hold (404).
var errUnknownSchema = errors.New("schema id unknown to the schema registry")

// Registry is a Confluent Schema Registry client that fetches value
// schemas by id, each once.
type Registry struct {
	url        string
	user, pass string
	hc         *http.Client

	mu   sync.Mutex
	byID map[uint32]*AvroSchema
}

// NewRegistry reads schema.registry.url and
// schema.registry.basic.auth.user.info (user:password) from the source's
// options.
func NewRegistry(opts map[string]string) (*Registry, error) {
	u := strings.TrimRight(strings.TrimSpace(opts["schema.registry.url"]), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("%w: source.format avro needs source.options.schema.registry.url, the registry's http:// or https:// address; got %q", source.ErrConfig, u)
	}
	r := &Registry{url: u, hc: &http.Client{Timeout: 30 * time.Second}, byID: map[uint32]*AvroSchema{}}
	if info := opts["schema.registry.basic.auth.user.info"]; info != "" {
		var ok bool
		if r.user, r.pass, ok = strings.Cut(info, ":"); !ok {
			return nil, fmt.Errorf("%w: source.options.schema.registry.basic.auth.user.info must be user:password", source.ErrConfig)
		}
	}
	return r, nil
}

// Schema is the schema registered under id; a 404 is errUnknownSchema.
func (r *Registry) Schema(ctx context.Context, id uint32) (*AvroSchema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.byID[id]; ok {
		return s, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/schemas/ids/%d", r.url, id), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if r.user != "" {
		req.SetBasicAuth(r.user, r.pass)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: %w", r.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: %w", r.url, id, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: schema id %d (registry %s)", errUnknownSchema, id, r.url)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w: schema registry %s refused the request (%s); check source.options.schema.registry.basic.auth.user.info", source.ErrConfig, r.url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: %s %s", r.url, id, resp.Status, strings.TrimSpace(string(body)))
	}
	var got struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: the answer is not JSON with a \"schema\": %v", r.url, id, err)
	}
	if got.SchemaType != "" && !strings.EqualFold(got.SchemaType, "AVRO") {
		return nil, fmt.Errorf("%w: schema id %d is a %s schema, not Avro", source.ErrBadInput, id, got.SchemaType)
	}
	s, err := ParseAvro(got.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", source.ErrBadInput, id, err)
	}
	r.byID[id] = s
	return s, nil
}

// rawLogical are the logical types read as their carrier's value and
// converted here, exactly, instead of through time.Time or big.Rat; those
// typeOf does not map (nanoseconds, duration) stay their carrier's value.
var rawLogical = []string{"date", "timestamp-millis", "timestamp-micros", "local-timestamp-millis",
	"local-timestamp-micros", "time-millis", "time-micros", "decimal", "uuid",
	"timestamp-nanos", "local-timestamp-nanos", "duration"}

// AvroSchema is one writer schema and the Arrow columns its records
// become.
type AvroSchema struct {
	avro  *avro.Schema
	arrow *arrow.Schema
	root  *avroType
}

// avroType is an Avro type with the Arrow type it is read as.
type avroType struct {
	kind    string // the Avro type, or the logical type where one applies
	arrow   arrow.DataType
	null    bool // a union with null
	fields  []avroField
	elem    *avroType // array items, map values
	wrapped bool      // a record made of a schema that is not one, as column "value"
}

type avroField struct {
	name string
	typ  *avroType
}

// ParseAvro maps an Avro schema onto Arrow as Spark's from_avro does: a
// record's fields become columns, any other schema one column "value".
func ParseAvro(schema string) (*AvroSchema, error) {
	opts := make([]avro.SchemaOpt, len(rawLogical))
	for i, l := range rawLogical {
		opts[i] = avro.WithCustomType(avro.CustomType{LogicalType: l})
	}
	s, err := avro.Parse(schema, opts...)
	if err != nil {
		return nil, fmt.Errorf("the Avro schema does not parse: %w", err)
	}
	root := s.Root()
	m := avroMapper{named: map[string]*avro.SchemaNode{}}
	t, err := m.typeOf(root, "")
	if err != nil {
		return nil, err
	}
	if t.kind != "record" {
		t = &avroType{kind: "record", arrow: arrow.StructOf(arrow.Field{Name: "value", Type: t.arrow, Nullable: t.null}),
			fields: []avroField{{name: "value", typ: t}}, wrapped: true}
	}
	st := t.arrow.(*arrow.StructType)
	return &AvroSchema{avro: s, arrow: arrow.NewSchema(st.Fields(), nil), root: t}, nil
}

type avroMapper struct {
	named    map[string]*avro.SchemaNode
	visiting []string
}

func fullName(n *avro.SchemaNode) string {
	if n.Namespace == "" || strings.Contains(n.Name, ".") {
		return n.Name
	}
	return n.Namespace + "." + n.Name
}

// typeOf maps n, at path (for errors).
func (m *avroMapper) typeOf(n *avro.SchemaNode, path string) (*avroType, error) {
	at := path
	if at == "" {
		at = "the schema"
	}
	switch n.Type {
	case "record", "error", "enum", "fixed":
		m.named[fullName(n)] = n
		m.named[n.Name] = n
	}
	switch n.LogicalType {
	case "date":
		if n.Type == "int" {
			return &avroType{kind: "date", arrow: arrow.FixedWidthTypes.Date32}, nil
		}
	case "timestamp-millis", "timestamp-micros":
		if n.Type == "long" {
			return &avroType{kind: n.LogicalType, arrow: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}, nil
		}
	case "local-timestamp-millis", "local-timestamp-micros":
		if n.Type == "long" {
			return &avroType{kind: strings.TrimPrefix(n.LogicalType, "local-"), arrow: &arrow.TimestampType{Unit: arrow.Microsecond}}, nil
		}
	case "time-millis", "time-micros":
		if n.Type == "int" || n.Type == "long" {
			return &avroType{kind: n.LogicalType, arrow: arrow.FixedWidthTypes.Time64us}, nil
		}
	case "decimal":
		if n.Type == "bytes" || n.Type == "fixed" {
			if n.Precision < 1 || n.Precision > 38 {
				return nil, fmt.Errorf("%s: decimal precision %d is not supported (1 to 38)", at, n.Precision)
			}
			return &avroType{kind: "decimal", arrow: &arrow.Decimal128Type{Precision: int32(n.Precision), Scale: int32(n.Scale)}}, nil
		}
	}
	switch n.Type {
	case "boolean":
		return &avroType{kind: n.Type, arrow: arrow.FixedWidthTypes.Boolean}, nil
	case "int":
		return &avroType{kind: n.Type, arrow: arrow.PrimitiveTypes.Int32}, nil
	case "long":
		return &avroType{kind: n.Type, arrow: arrow.PrimitiveTypes.Int64}, nil
	case "float":
		return &avroType{kind: n.Type, arrow: arrow.PrimitiveTypes.Float32}, nil
	case "double":
		return &avroType{kind: n.Type, arrow: arrow.PrimitiveTypes.Float64}, nil
	case "bytes", "fixed":
		return &avroType{kind: "bytes", arrow: arrow.BinaryTypes.Binary}, nil
	case "string":
		return &avroType{kind: n.Type, arrow: arrow.BinaryTypes.String}, nil
	case "enum":
		return &avroType{kind: n.Type, arrow: arrow.BinaryTypes.String}, nil
	case "array":
		e, err := m.typeOf(n.Items, path+"[]")
		if err != nil {
			return nil, err
		}
		return &avroType{kind: n.Type, arrow: arrow.ListOfField(arrow.Field{Name: "element", Type: e.arrow, Nullable: e.null}), elem: e}, nil
	case "map":
		v, err := m.typeOf(n.Values, path+"{}")
		if err != nil {
			return nil, err
		}
		mt := arrow.MapOfWithMetadata(arrow.BinaryTypes.String, arrow.Metadata{}, v.arrow, arrow.Metadata{})
		mt.SetItemNullable(v.null)
		return &avroType{kind: n.Type, arrow: mt, elem: v}, nil
	case "record", "error":
		name := fullName(n)
		for _, v := range m.visiting {
			if v == name {
				return nil, fmt.Errorf("%s: record %s contains itself, which a table cannot hold", at, name)
			}
		}
		m.visiting = append(m.visiting, name)
		defer func() { m.visiting = m.visiting[:len(m.visiting)-1] }()
		t := &avroType{kind: "record"}
		fields := make([]arrow.Field, len(n.Fields))
		for i := range n.Fields {
			f := &n.Fields[i]
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			ft, err := m.typeOf(&f.Type, p)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, avroField{name: f.Name, typ: ft})
			fields[i] = arrow.Field{Name: f.Name, Type: ft.arrow, Nullable: ft.null}
		}
		t.arrow = arrow.StructOf(fields...)
		return t, nil
	case "union":
		var other []*avro.SchemaNode
		hasNull := false
		for i := range n.Branches {
			if n.Branches[i].Type == "null" {
				hasNull = true
			} else {
				other = append(other, &n.Branches[i])
			}
		}
		if len(other) != 1 {
			return nil, fmt.Errorf("%s: a union of %d types besides null is not supported; only a type or null", at, len(other))
		}
		t, err := m.typeOf(other[0], path)
		if err != nil {
			return nil, err
		}
		c := *t
		c.null = hasNull
		return &c, nil
	case "null":
		return nil, fmt.Errorf("%s: a column of type null holds nothing; only a union with null is supported", at)
	}
	if d, ok := m.named[n.Type]; ok {
		return m.typeOf(d, path)
	}
	if d, ok := m.named[n.Namespace+"."+n.Type]; ok {
		return m.typeOf(d, path)
	}
	return nil, fmt.Errorf("%s: Avro type %q is not supported", at, n.Type)
}

// Arrow is the Arrow schema of the schema's records.
func (s *AvroSchema) Arrow() *arrow.Schema { return s.arrow }

// Append decodes one Avro binary body into b's next row.
func (s *AvroSchema) Append(b *array.RecordBuilder, body []byte) error {
	var v any
	rest, err := s.avro.Decode(body, &v)
	if err != nil {
		return fmt.Errorf("the Avro body does not match its schema: %w", err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("%d bytes are left after the Avro record; the body was not written with its schema id's schema", len(rest))
	}
	if s.root.wrapped {
		v = map[string]any{"value": v}
	}
	row, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("the Avro body decoded to %T, not a record", v)
	}
	for i, f := range s.root.fields {
		if err := appendAvro(b.Field(i), f.typ, row[f.name]); err != nil {
			return fmt.Errorf("field %s: %w", f.name, err)
		}
	}
	return nil
}

func appendAvro(b array.Builder, t *avroType, v any) error {
	if v == nil {
		if !t.null {
			return errors.New("null in a field that is not a union with null")
		}
		b.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("decoded %T for Avro %s", v, t.kind) }
	switch t.kind {
	case "boolean":
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.(*array.BooleanBuilder).Append(x)
	case "int":
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.(*array.Int32Builder).Append(x)
	case "long":
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.(*array.Int64Builder).Append(x)
	case "float":
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		b.(*array.Float32Builder).Append(x)
	case "double":
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.(*array.Float64Builder).Append(x)
	case "bytes":
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		b.(*array.BinaryBuilder).Append(x)
	case "string", "enum":
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.(*array.StringBuilder).Append(x)
	case "date":
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.(*array.Date32Builder).Append(arrow.Date32(x))
	case "timestamp-millis", "timestamp-micros":
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		if t.kind == "timestamp-millis" {
			x *= 1000
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(x))
	case "time-millis", "time-micros":
		var x int64
		switch n := v.(type) {
		case int32:
			x = int64(n)
		case int64:
			x = n
		default:
			return bad()
		}
		if t.kind == "time-millis" {
			x *= 1000
		}
		b.(*array.Time64Builder).Append(arrow.Time64(x))
	case "decimal":
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		n, err := decimalFromTwos(x, t.arrow.(*arrow.Decimal128Type).Precision)
		if err != nil {
			return err
		}
		b.(*array.Decimal128Builder).Append(n)
	case "array":
		x, ok := v.([]any)
		if !ok {
			return bad()
		}
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		for _, e := range x {
			if err := appendAvro(lb.ValueBuilder(), t.elem, e); err != nil {
				return err
			}
		}
	case "map":
		x, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		for k, e := range x {
			mb.KeyBuilder().(*array.StringBuilder).Append(k)
			if err := appendAvro(mb.ItemBuilder(), t.elem, e); err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
		}
	case "record":
		x, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for i, f := range t.fields {
			if err := appendAvro(sb.FieldBuilder(i), f.typ, x[f.name]); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	default:
		return bad()
	}
	return nil
}

// decimalFromTwos reads Avro's decimal: the unscaled value as big-endian
// two's complement.
func decimalFromTwos(b []byte, precision int32) (decimal128.Num, error) {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	d := decimal128.FromBigInt(n)
	if !d.FitsInPrecision(precision) {
		return decimal128.Num{}, fmt.Errorf("decimal %s has more than %d digits", n, precision)
	}
	return d, nil
}

// avroMessage is one message's place in a part: its offset, schema and
// Avro body.
type avroMessage struct {
	offset int64
	schema *AvroSchema
	body   []byte
}

// splitConfluent reads the Confluent wire format: magic byte 0, the
// schema id as 4 big-endian bytes, the Avro body.
func splitConfluent(v []byte) (uint32, []byte, error) {
	if len(v) < 5 || v[0] != 0 {
		return 0, nil, errors.New("the value is not in the Confluent Avro wire format (magic byte 0, a 4-byte schema id, the Avro body); " +
			"was it written by a schema-registry serializer?")
	}
	return binary.BigEndian.Uint32(v[1:5]), v[5:], nil
}

// avroReader builds a record per run of messages of one schema, of at most
// batchRows rows; the reader's schema is the union of the part's.
type avroReader struct {
	p      *part
	msgs   []avroMessage
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (r *avroReader) Retain() { r.refs.Add(1) }

func (r *avroReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *avroReader) Schema() *arrow.Schema          { return r.schema }
func (r *avroReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *avroReader) Record() arrow.RecordBatch      { return r.cur }
func (r *avroReader) Err() error                     { return r.err }
func (r *avroReader) sameRun(s *AvroSchema, n int) bool {
	return n < jsonrows.BatchRows && len(r.msgs) > 0 && r.msgs[0].schema == s
}

func (r *avroReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || len(r.msgs) == 0 {
		return false
	}
	s := r.msgs[0].schema
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.arrow)
	defer b.Release()
	for n := 0; r.sameRun(s, n); n++ {
		m := r.msgs[0]
		if err := s.Append(b, m.body); err != nil {
			r.err = r.p.bad(m.offset, err)
			return false
		}
		r.msgs = r.msgs[1:]
	}
	r.cur = b.NewRecordBatch()
	return true
}

// deriveAvro reads each value's schema id and fetches its schema; the
// part's schema is the union of its messages' schemas. Tombstones (null
// values) hold no row.
func (p *part) deriveAvro(ctx context.Context) error {
	var schemas []*arrow.Schema
	seen := map[*AvroSchema]bool{}
	for _, r := range p.records {
		if r.Value == nil {
			continue
		}
		id, body, err := splitConfluent(r.Value)
		if err != nil {
			return p.bad(r.Offset, err)
		}
		s, err := p.src.registry.Schema(ctx, id)
		if errors.Is(err, errUnknownSchema) || errors.Is(err, source.ErrBadInput) {
			return p.bad(r.Offset, err)
		}
		if err != nil {
			return err
		}
		if !seen[s] {
			seen[s] = true
			schemas = append(schemas, s.arrow)
		}
		p.avro = append(p.avro, avroMessage{offset: r.Offset, schema: s, body: body})
	}
	if len(schemas) == 0 {
		p.schema = arrow.NewSchema(nil, nil)
		return nil
	}
	u, err := conform.Union(schemas)
	if err != nil {
		return p.bad(p.avro[0].offset, fmt.Errorf("the messages' schema versions disagree: %w", err))
	}
	p.schema = u
	return nil
}
