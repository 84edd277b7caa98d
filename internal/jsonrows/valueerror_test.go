package jsonrows_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/jsonrows"
)

// A long value is quoted in part, cut between characters, and the zone
// mismatches are told apart from other values in either direction.
func TestValueErrorWording(t *testing.T) {
	long := `"` + strings.Repeat("é", 100) + `"`
	msg := (&jsonrows.ValueError{Column: "s", Value: long, Type: arrow.PrimitiveTypes.Int64}).Error()
	if !utf8.ValidString(msg) || strings.Contains(msg, long) || !strings.Contains(msg, "…") {
		t.Errorf("long value: %q", msg)
	}
	ntz := &arrow.TimestampType{Unit: arrow.Microsecond}
	tz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	for _, c := range []struct {
		e    jsonrows.ValueError
		want string
	}{
		{jsonrows.ValueError{Column: "ts", Value: `"2026-09-01T00:00:00+02:00"`, Type: ntz}, "carries a zone; declare the column timestamptz"},
		{jsonrows.ValueError{Column: "ts", Value: `"2026-09-01T00:00:00Z"`, Type: ntz, Table: true}, "carries a zone; remove the zone from the values, or write to a table whose column is timestamptz"},
		{jsonrows.ValueError{Column: "ts", Value: `"2026-09-01 00:00:00"`, Type: tz}, "names no zone; add a zone to the values (Z or ±HH:MM), or declare the column timestamp"},
		{jsonrows.ValueError{Column: "ts", Value: `"yesterday"`, Type: ntz}, `the value "yesterday" cannot be read as timestamp`},
	} {
		if msg := c.e.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, `"ts"`) {
			t.Errorf("%+v: %q, want it to name the column and say %q", c.e, msg, c.want)
		}
	}
}
