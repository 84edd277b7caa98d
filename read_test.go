package floe

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/apache/iceberg-go"
)

// Initial defaults in the spec's single-value JSON forms, which iceberg-go
// rejects for several types, parse to the values floe fills columns with.
func TestParseDefault(t *testing.T) {
	for _, c := range []struct {
		raw  string
		typ  iceberg.Type
		want string
	}{
		{`342342`, iceberg.PrimitiveTypes.Int32, "342342"},
		{`-9223372036854775808`, iceberg.PrimitiveTypes.Int64, "-9223372036854775808"},
		{`"12345.00"`, iceberg.DecimalTypeOf(16, 2), "1234500"},
		{`"2003-10-20"`, iceberg.PrimitiveTypes.Date, "12345"},
		{`"00:00:00.012345"`, iceberg.PrimitiveTypes.Time, "12345"},
		{`"1970-01-01T00:00:00.012345+00:00"`, iceberg.PrimitiveTypes.TimestampTz, "12345"},
		{`"0102"`, iceberg.PrimitiveTypes.Binary, "[1 2]"},
	} {
		v, err := parseDefault(json.RawMessage(c.raw), c.typ)
		if err != nil {
			t.Errorf("%s as %s: %v", c.raw, c.typ, err)
			continue
		}
		got := ""
		switch x := v.(type) {
		case int64:
			got = jsonNum(x)
		case iceberg.Date:
			got = jsonNum(int64(x))
		case iceberg.Time:
			got = jsonNum(int64(x))
		case iceberg.Timestamp:
			got = jsonNum(int64(x))
		default:
			got = fmtAny(v)
		}
		if got != c.want {
			t.Errorf("%s as %s = %s, want %s", c.raw, c.typ, got, c.want)
		}
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

func fmtAny(v any) string {
	if d, ok := v.(interface{ BigInt() *big.Int }); ok {
		return d.BigInt().String()
	}
	return fmt.Sprint(v)
}
