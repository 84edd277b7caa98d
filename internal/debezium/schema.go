package debezium

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// connectSchema is a Kafka Connect schema as JsonConverter writes it with
// schemas.enable=true.
type connectSchema struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Parameters map[string]string `json:"parameters"`
	Fields     []connectSchema   `json:"fields"`
}

// Logical type names with a mapping of their own; other names are read as
// their Connect type (see fieldType).
const (
	connectDecimal   = "org.apache.kafka.connect.data.Decimal"
	connectDate      = "org.apache.kafka.connect.data.Date"
	connectTime      = "org.apache.kafka.connect.data.Time"
	connectTimestamp = "org.apache.kafka.connect.data.Timestamp"
	dbzDate          = "io.debezium.time.Date"
	dbzTime          = "io.debezium.time.Time"
	dbzMicroTime     = "io.debezium.time.MicroTime"
	dbzNanoTime      = "io.debezium.time.NanoTime"
	dbzTimestamp     = "io.debezium.time.Timestamp"
	dbzMicroTs       = "io.debezium.time.MicroTimestamp"
	dbzNanoTs        = "io.debezium.time.NanoTimestamp"
	dbzZonedTs       = "io.debezium.time.ZonedTimestamp"
	dbzVarDecimal    = "io.debezium.data.VariableScaleDecimal"
)

// maxDecimalPrecision is the widest decimal an Iceberg table holds.
const maxDecimalPrecision = 38

// conversion turns one value of the event into the form arrow's JSON
// builder reads as the column's Arrow type.
type conversion func(v json.RawMessage) (json.RawMessage, error)

// fieldType maps a Connect field's schema to the Arrow type its values are
// read as, and the conversion its values need (nil for none):
//   - int8, int16 and int32 are int32; int64, float32, float64, boolean,
//     string and bytes are int64, float32, float64, bool, utf8 and binary;
//   - Decimal is decimal128 with the field's scale and its
//     connect.decimal.precision (38 when absent); wider than 38 digits, and
//     VariableScaleDecimal, it is the decimal's text;
//   - Date is date32; Time, MicroTime and NanoTime are time32[ms],
//     time64[us] and time64[ns]; Timestamp, MicroTimestamp and
//     NanoTimestamp are timestamp[ms], [us] and [ns] without a zone;
//     ZonedTimestamp is timestamp[us, UTC];
//   - any other logical name (Uuid, Json, Enum, Year, ...) is read as its
//     Connect type;
//   - struct, array and map values are their JSON text, a string.
func fieldType(s connectSchema) (arrow.DataType, conversion, error) {
	switch {
	case s.Name == connectDecimal && s.Type == "bytes":
		scale, err := strconv.Atoi(s.Parameters["scale"])
		if err != nil {
			return nil, nil, fmt.Errorf("decimal field %q has no valid scale parameter (%q)", s.Field, s.Parameters["scale"])
		}
		prec := maxDecimalPrecision
		if p, ok := s.Parameters["connect.decimal.precision"]; ok {
			if prec, err = strconv.Atoi(p); err != nil || prec < 1 {
				return nil, nil, fmt.Errorf("decimal field %q has an invalid connect.decimal.precision %q", s.Field, p)
			}
		}
		if prec > maxDecimalPrecision || scale > prec || scale < 0 {
			return arrow.BinaryTypes.String, func(v json.RawMessage) (json.RawMessage, error) { return decimalText(v, scale, 0) }, nil
		}
		conv := func(v json.RawMessage) (json.RawMessage, error) { return decimalText(v, scale, prec) }
		return &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}, conv, nil
	case s.Name == dbzVarDecimal && s.Type == "struct":
		return arrow.BinaryTypes.String, variableDecimalText, nil
	case (s.Name == dbzDate || s.Name == connectDate) && s.Type == "int32":
		return arrow.FixedWidthTypes.Date32, nil, nil
	case (s.Name == dbzTime || s.Name == connectTime) && s.Type == "int32":
		return arrow.FixedWidthTypes.Time32ms, nil, nil
	case s.Name == dbzMicroTime && s.Type == "int64":
		return arrow.FixedWidthTypes.Time64us, nil, nil
	case s.Name == dbzNanoTime && s.Type == "int64":
		return arrow.FixedWidthTypes.Time64ns, nil, nil
	case (s.Name == dbzTimestamp || s.Name == connectTimestamp) && s.Type == "int64":
		return &arrow.TimestampType{Unit: arrow.Millisecond}, nil, nil
	case s.Name == dbzMicroTs && s.Type == "int64":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil, nil
	case s.Name == dbzNanoTs && s.Type == "int64":
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, nil, nil
	case s.Name == dbzZonedTs && s.Type == "string":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, zonedMicros, nil
	}
	switch s.Type {
	case "int8", "int16", "int32":
		return arrow.PrimitiveTypes.Int32, nil, nil
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil, nil
	case "float32":
		return arrow.PrimitiveTypes.Float32, nil, nil
	case "float64":
		return arrow.PrimitiveTypes.Float64, nil, nil
	case "boolean":
		return arrow.FixedWidthTypes.Boolean, nil, nil
	case "string":
		return arrow.BinaryTypes.String, nil, nil
	case "bytes":
		return arrow.BinaryTypes.Binary, nil, nil
	case "struct", "array", "map":
		return arrow.BinaryTypes.String, jsonText, nil
	}
	return nil, nil, fmt.Errorf("field %q has Connect type %q, which is none of int8, int16, int32, int64, float32, float64, boolean, string, bytes, struct, array and map", s.Field, s.Type)
}

// rowSchema is the row image's columns from an envelope's Connect schema.
type rowSchema struct {
	fields []arrow.Field
	convs  map[string]conversion // by column, for columns that need one
}

// parseRowSchema finds the schema of the envelope's image field (after or
// before) and maps its columns.
func parseRowSchema(raw json.RawMessage, image string) (*rowSchema, error) {
	var env connectSchema
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("the schema is not a Kafka Connect schema (%v); fix the line, or write the events with schemas.enable=false", err)
	}
	var img *connectSchema
	for i := range env.Fields {
		if env.Fields[i].Field == image {
			img = &env.Fields[i]
		}
	}
	if env.Type != "struct" || img == nil || img.Type != "struct" {
		return nil, fmt.Errorf("the schema has no struct field %q, so it is not a Debezium envelope's schema; fix the line, or write the events with schemas.enable=false", image)
	}
	rs := &rowSchema{convs: map[string]conversion{}}
	for _, f := range img.Fields {
		if isMeta(f.Field) {
			return nil, nameClash(f.Field)
		}
		dt, conv, err := fieldType(f)
		if err != nil {
			return nil, fmt.Errorf("the schema of %q: %w", image, err)
		}
		// Every column is optional: a delete's before image may hold only
		// the key, whatever the columns' constraints.
		rs.fields = append(rs.fields, arrow.Field{Name: f.Field, Type: dt, Nullable: true})
		if conv != nil {
			rs.convs[f.Field] = conv
		}
	}
	return rs, nil
}

func isMeta(name string) bool {
	return name == OpColumn || name == LSNColumn || name == TsColumn
}

// convert rewrites the row's values that need a conversion.
func (rs *rowSchema) convert(row json.RawMessage) (json.RawMessage, error) {
	// A column the schema lacks is not read, but one named like a metadata
	// column would still be taken for it.
	if err := checkNames(row); err != nil {
		return nil, err
	}
	if len(rs.convs) == 0 {
		return row, nil
	}
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(row, &cols); err != nil {
		return nil, fmt.Errorf("malformed JSON (%v)", err)
	}
	for name, conv := range rs.convs {
		v, ok := cols[name]
		if !ok || isNull(v) {
			continue
		}
		out, err := conv(v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", name, err)
		}
		cols[name] = out
	}
	return json.Marshal(cols)
}

// decimalText turns a Connect decimal, the base64 of its unscaled value's
// big-endian two's complement bytes, into its decimal text, refusing one of
// more than prec digits (unless prec is 0).
func decimalText(v json.RawMessage, scale, prec int) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("%s is not a Connect decimal (the base64 of the unscaled value); was the connector's decimal.handling.mode changed without its schema?", v)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%q is not a Connect decimal (the base64 of the unscaled value)", s)
	}
	n := unscaled(b)
	text := formatDecimal(n, scale)
	if digits := len(new(big.Int).Abs(n).String()); prec > 0 && digits > prec {
		return nil, fmt.Errorf("%s has %d digits, more than the column's precision of %d (connect.decimal.precision)", text, digits, prec)
	}
	return json.Marshal(text)
}

// unscaled reads big-endian two's complement bytes.
func unscaled(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return n
}

func formatDecimal(n *big.Int, scale int) string {
	if scale <= 0 {
		return new(big.Int).Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
	}
	digits := new(big.Int).Abs(n).String()
	for len(digits) <= scale {
		digits = "0" + digits
	}
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// variableDecimalText turns Debezium's VariableScaleDecimal, a struct of
// scale and value, into its decimal text.
func variableDecimalText(v json.RawMessage) (json.RawMessage, error) {
	var d struct {
		Scale *int   `json:"scale"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal(v, &d); err != nil || d.Scale == nil {
		return nil, fmt.Errorf("%s is not a VariableScaleDecimal (an object of scale and value)", v)
	}
	return decimalText(strconv.AppendQuote(nil, d.Value), *d.Scale, 0)
}

// zonedMicros turns a ZonedTimestamp, ISO-8601 text with an offset, into
// microseconds since the epoch.
func zonedMicros(v json.RawMessage) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("%s is not a ZonedTimestamp (ISO-8601 text with an offset)", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a ZonedTimestamp (ISO-8601 text with an offset, e.g. 2024-01-02T03:04:05.123456Z)", s)
	}
	if t.Nanosecond()%1000 != 0 {
		return nil, fmt.Errorf("%q is finer than the microseconds an Iceberg timestamptz holds", s)
	}
	return strconv.AppendInt(nil, t.UnixMicro(), 10), nil
}

// jsonText turns a value into a string of its JSON text.
func jsonText(v json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, errors.New("malformed JSON")
	}
	return json.Marshal(buf.String())
}
