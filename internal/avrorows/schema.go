// Package avrorows maps Avro schemas onto Arrow, as Spark's from_avro
// does, and appends Avro records to Arrow rows: the one mapping of the
// Kafka source's registry schemas and the file source's Avro container
// files.
package avrorows

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/twmb/avro"
)

// rawLogical are the logical types read as their carrier's value and
// converted here, exactly, instead of through time.Time or big.Rat; those
// typeOf does not map (nanoseconds, duration) stay their carrier's value.
var rawLogical = []string{"date", "timestamp-millis", "timestamp-micros", "local-timestamp-millis",
	"local-timestamp-micros", "time-millis", "time-micros", "decimal", "uuid",
	"timestamp-nanos", "local-timestamp-nanos", "duration"}

// Schema is one writer schema and the Arrow columns its records
// become.
type Schema struct {
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

// Parse maps an Avro schema onto Arrow as Spark's from_avro does: a
// record's fields become columns, any other schema one column "value".
func Parse(schema string) (*Schema, error) {
	return ParseWithReferences(schema, nil)
}

// ParseWithReferences is Parse of a schema whose named types may be
// defined in refs, the schemas a registry holds as its references, each
// after the ones it uses in turn.
func ParseWithReferences(schema string, refs []string) (*Schema, error) {
	s, err := parseAvro(schema, refs)
	if err != nil {
		return nil, err
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
	return &Schema{avro: s, arrow: arrow.NewSchema(st.Fields(), nil), root: t}, nil
}

// parseAvro parses schema after refs, whose named types it may use.
func parseAvro(schema string, refs []string) (*avro.Schema, error) {
	var cache avro.SchemaCache
	for i, r := range refs {
		if _, err := cache.Parse(r, SchemaOpts()...); err != nil {
			return nil, fmt.Errorf("referenced Avro schema %d of %d does not parse: %w", i+1, len(refs), err)
		}
	}
	s, err := cache.Parse(schema, SchemaOpts()...)
	if err != nil {
		return nil, fmt.Errorf("the Avro schema does not parse: %w", err)
	}
	return s, nil
}

type avroMapper struct {
	named    map[string]*avro.SchemaNode
	visiting []string
	// connect maps the time types Kafka Connect's Avro converter names in
	// connect.name (Debezium's), as debezium-json maps them.
	connect bool
}

// connectType maps a Debezium time type, named by connect.name, onto the
// kind and Arrow type debezium-json gives it; nil for other schemas. The
// nanosecond types stay their long, as timestamp-nanos does.
func connectType(n *avro.SchemaNode) *avroType {
	name, _ := n.Props["connect.name"].(string)
	switch {
	case name == "io.debezium.time.Date" && n.Type == "int":
		return &avroType{kind: "date", arrow: arrow.FixedWidthTypes.Date32}
	case name == "io.debezium.time.Time" && n.Type == "int":
		return &avroType{kind: "time-millis", arrow: arrow.FixedWidthTypes.Time64us}
	case name == "io.debezium.time.MicroTime" && n.Type == "long":
		return &avroType{kind: "time-micros", arrow: arrow.FixedWidthTypes.Time64us}
	case name == "io.debezium.time.Timestamp" && n.Type == "long":
		return &avroType{kind: "timestamp-millis", arrow: &arrow.TimestampType{Unit: arrow.Microsecond}}
	case name == "io.debezium.time.MicroTimestamp" && n.Type == "long":
		return &avroType{kind: "timestamp-micros", arrow: &arrow.TimestampType{Unit: arrow.Microsecond}}
	case name == "io.debezium.time.ZonedTimestamp" && n.Type == "string":
		return &avroType{kind: "zoned-timestamp", arrow: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}
	}
	return nil
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
	if m.connect {
		if t := connectType(n); t != nil {
			return t, nil
		}
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
func (s *Schema) Arrow() *arrow.Schema { return s.arrow }

// Append decodes one Avro binary body into b's next row.
func (s *Schema) Append(b *array.RecordBuilder, body []byte) error {
	var v any
	rest, err := s.avro.Decode(body, &v)
	if err != nil {
		return fmt.Errorf("the Avro body does not match its schema: %w", err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("%d bytes are left after the Avro record; the body was not written with its schema id's schema", len(rest))
	}
	return s.AppendValue(b, v)
}

// AppendValue appends one record, decoded with the schema's options
// (SchemaOpts), to b's next row.
func (s *Schema) AppendValue(b *array.RecordBuilder, v any) error {
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
	case "zoned-timestamp":
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		ts, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return fmt.Errorf("%q is not a ZonedTimestamp (ISO-8601 text with an offset)", x)
		}
		if ts.Nanosecond()%1000 != 0 {
			return fmt.Errorf("%q is finer than the microseconds an Iceberg timestamptz holds", x)
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
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

// SchemaOpts are the options a decoder of the schema's records parses
// the schema with, so that its values are what AppendValue takes: the
// logical types in rawLogical as their carrier's value.
func SchemaOpts() []avro.SchemaOpt {
	opts := make([]avro.SchemaOpt, len(rawLogical))
	for i, l := range rawLogical {
		opts[i] = avro.WithCustomType(avro.CustomType{LogicalType: l})
	}
	return opts
}
