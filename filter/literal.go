package filter

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// A converted literal carries the Go value the matcher compares with
// (int64 for integers, dates in days, timestamps and times in
// microseconds; UUID, binary and fixed bytes as a string;
// float64; decimal128.Num at the column's scale; string; bool), the
// iceberg literal for pushdown and the literal as written, for printing.
type value struct {
	v   any
	lit iceberg.Literal
	src Literal
}

// convert turns l into a value of c's type. SQL would cast; we only accept
// literals that denote a value of the type exactly, so a filter never
// silently means something else (12.505 against decimal(10,2) is an error,
// not a rounding).
func convert(l Literal, c column) (value, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: column %s is %s; %s %s", ErrBind, c, c.typ, l, why)
	}
	notA := func() error { return bad("is not " + article(c.typ.String())) }
	switch t := c.typ.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		if l.Kind != LitInt {
			return value{}, notA()
		}
		n, err := strconv.ParseInt(l.Text, 10, 64)
		if _, is32 := t.(iceberg.Int32Type); err != nil || is32 && (n < math.MinInt32 || n > math.MaxInt32) {
			return value{}, bad("is out of range")
		}
		if _, is32 := t.(iceberg.Int32Type); is32 {
			return value{n, iceberg.Int32Literal(int32(n)), l}, nil
		}
		return value{n, iceberg.Int64Literal(n), l}, nil
	case iceberg.Float32Type, iceberg.Float64Type:
		var f float64
		switch l.Kind {
		case LitInt, LitDecimal, LitFloat:
			var err error
			if f, err = strconv.ParseFloat(l.Text, 64); err != nil {
				return value{}, bad("is out of range")
			}
		case LitString:
			// Spark's spellings of the values no number literal writes,
			// as in CAST('NaN' AS DOUBLE).
			var ok bool
			if f, ok = specialFloat(l.Text); !ok {
				return value{}, bad("is not a number; the strings a float column compares with are 'NaN', 'Infinity' and '-Infinity'")
			}
		default:
			return value{}, notA()
		}
		if _, is32 := t.(iceberg.Float32Type); is32 {
			// The column holds float32 values: compare with the literal as
			// the column would store it, as iceberg-go does.
			return value{float64(float32(f)), iceberg.Float32Literal(float32(f)), l}, nil
		}
		return value{f, iceberg.Float64Literal(f), l}, nil
	case iceberg.DecimalType:
		if l.Kind != LitInt && l.Kind != LitDecimal {
			return value{}, notA()
		}
		n, err := parseDecimal(l.Text, t.Precision(), t.Scale())
		if err != nil {
			return value{}, bad(err.Error())
		}
		return value{n, iceberg.DecimalLiteral(iceberg.Decimal{Val: n, Scale: t.Scale()}), l}, nil
	case iceberg.StringType:
		if l.Kind != LitString {
			return value{}, notA()
		}
		return value{l.Text, iceberg.StringLiteral(l.Text), l}, nil
	case iceberg.BooleanType:
		if l.Kind != LitBool {
			return value{}, notA()
		}
		b := l.Text == "TRUE"
		return value{b, iceberg.BoolLiteral(b), l}, nil
	case iceberg.DateType:
		if l.Kind != LitDate && l.Kind != LitString {
			return value{}, notA()
		}
		d, err := time.Parse(time.DateOnly, l.Text)
		if err != nil {
			return value{}, notA()
		}
		days := d.Unix() / 86400
		return value{days, iceberg.DateLiteral(days), l}, nil
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if l.Kind != LitTimestamp && l.Kind != LitDate && l.Kind != LitString {
			return value{}, notA()
		}
		_, tz := t.(iceberg.TimestampTzType)
		ts, ok := parseTimestamp(l.Text, tz)
		if !ok {
			return value{}, notA()
		}
		if ts.Nanosecond()%1000 != 0 {
			return value{}, bad("is finer than the microseconds the column holds")
		}
		us := ts.UnixMicro()
		return value{us, iceberg.TimestampLiteral(us), l}, nil
	case iceberg.TimeType:
		if l.Kind != LitTime && l.Kind != LitString {
			return value{}, notA()
		}
		tod, ok := parseTime(l.Text)
		if !ok {
			return value{}, notA()
		}
		if tod%1000 != 0 {
			return value{}, bad("is finer than the microseconds the column holds")
		}
		us := tod / 1000
		return value{us, iceberg.TimeLiteral(us), l}, nil
	case iceberg.BinaryType, iceberg.FixedType:
		if l.Kind != LitBinary {
			return value{}, bad("is not a binary value; write bytes in hex, as X'0102'")
		}
		b, err := hex.DecodeString(l.Text)
		if err != nil {
			return value{}, bad("is not hex")
		}
		if f, ok := t.(iceberg.FixedType); ok {
			if len(b) != f.Len() {
				return value{}, bad(fmt.Sprintf("is %s; the column holds exactly %s", bytesText(len(b)), bytesText(f.Len())))
			}
			// Bytes as a string compare as Iceberg orders binary values.
			return value{string(b), iceberg.FixedLiteral(b), l}, nil
		}
		return value{string(b), iceberg.BinaryLiteral(b), l}, nil
	case iceberg.UUIDType:
		if l.Kind != LitString {
			return value{}, notA()
		}
		u, err := uuid.Parse(l.Text)
		if err != nil {
			return value{}, notA()
		}
		// Bytes as a string compare as Iceberg orders UUIDs.
		return value{string(u[:]), iceberg.UUIDLiteral(u), l}, nil
	}
	return value{}, fmt.Errorf("%w: column %s is %s; filters on %s columns are not supported", ErrBind, c, c.typ, c.typ)
}

// specialFloat reads 'NaN', 'Infinity', '-Infinity' (also 'Inf', with a
// + sign, in any case), as Spark casts strings to doubles.
func specialFloat(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), true
	case "infinity", "+infinity", "inf", "+inf":
		return math.Inf(1), true
	case "-infinity", "-inf":
		return math.Inf(-1), true
	}
	return 0, false
}

func bytesText(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.Itoa(n) + " bytes"
}

func article(s string) string {
	// No type name starts with a vowel sound but these (uuid takes "a").
	if strings.ContainsRune("aeio", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// timestampLayouts accept a space or T between date and time and an
// optional fraction; a bare date means midnight.
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04", "2006-01-02T15:04", time.DateOnly,
}

// parseTimestamp reads a timestamp in UTC. Only timestamptz columns accept
// an offset (Z or ±hh:mm), since a timestamp without zone has no instant
// to convert to.
func parseTimestamp(s string, tz bool) (time.Time, bool) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
		if tz && layout != time.DateOnly {
			if t, err := time.Parse(layout+"Z07:00", s); err == nil {
				return t.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// parseTime reads a time of day, with optional seconds and fraction, as
// nanoseconds since midnight.
func parseTime(s string) (int64, bool) {
	for _, layout := range []string{"15:04:05.999999999", "15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return int64(t.Hour())*int64(time.Hour) + int64(t.Minute())*int64(time.Minute) +
				int64(t.Second())*int64(time.Second) + int64(t.Nanosecond()), true
		}
	}
	return 0, false
}

// parseDecimal reads a decimal number at the given scale, refusing digits
// the scale would drop and values the precision cannot hold.
func parseDecimal(s string, prec, scale int) (decimal128.Num, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if extra := strings.TrimRight(frac, "0"); len(extra) > scale {
		return decimal128.Num{}, fmt.Errorf("has more than %d decimal places", scale)
	}
	if len(frac) > scale {
		frac = frac[:scale]
	}
	digits := strings.TrimLeft(intPart+frac+strings.Repeat("0", scale-len(frac)), "0")
	if len(digits) > prec {
		return decimal128.Num{}, fmt.Errorf("has more than the %d digits the column holds", prec)
	}
	n, ok := new(big.Int).SetString("0"+digits, 10)
	if !ok {
		return decimal128.Num{}, fmt.Errorf("is not a number")
	}
	if neg {
		n.Neg(n)
	}
	return decimal128.FromBigInt(n), nil
}
