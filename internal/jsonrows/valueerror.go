package jsonrows

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/texttime"
)

// ValueError is a value of a text input (a JSON value, a CSV cell) that
// its column's type cannot hold. It names the column, the value and the
// type, and the fix: a timestamp whose zone the column's type does not
// take is told apart, as Spark refuses a zoned value in a TIMESTAMP_NTZ
// column.
type ValueError struct {
	Column string // the column's path, a nested field's dotted
	Value  string // as written: a JSON value's text, a CSV cell quoted
	Type   arrow.DataType
	// Table is set when the type is the destination table's, not one
	// declared in source.schema: the column then cannot be declared anew.
	Table bool
	Err   error // why the type's parser refused it, when it says more than that
}

// maxValue is the most of a value an error quotes.
const maxValue = 80

func (e *ValueError) Error() string {
	v := e.Value
	if len(v) > maxValue {
		n := maxValue
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		v = v[:n] + "…"
	}
	name := conform.TypeName(e.Type)
	if ts, ok := e.Type.(*arrow.TimestampType); ok {
		if _, zoned, err := texttime.Timestamp(strings.Trim(e.Value, `"`), ts.Unit); err == nil && zoned != (ts.TimeZone != "") {
			return e.zone(v, zoned, name)
		}
	}
	is := e.is(name)
	var why string
	// arrow-go's type errors (of its own JSON package) name only a Go
	// type, which tells the user nothing the sentence does not.
	if e.Err != nil && !strings.HasPrefix(e.Err.Error(), "json: cannot unmarshal") {
		why = fmt.Sprintf(" (%v)", e.Err)
	}
	fix := "fix the value, or declare the column a type that holds it"
	if e.Table {
		fix = "fix the value"
	}
	return fmt.Sprintf("%s, but the value %s cannot be read as %s%s; %s", is, v, name, why, fix)
}

// is says what the column is and where its type comes from.
func (e *ValueError) is(typ string) string {
	if e.Table {
		return fmt.Sprintf("the table's column %q is %s", e.Column, typ)
	}
	return fmt.Sprintf("column %q is declared %s in source.schema", e.Column, typ)
}

// zone words the error of a timestamp with a zone in a column without
// one, or the other way round.
func (e *ValueError) zone(v string, zoned bool, name string) string {
	if zoned {
		is := e.is(name + " (without time zone)")
		other := strings.Replace(name, "timestamp", "timestamptz", 1)
		fix := fmt.Sprintf("declare the column %s (Iceberg's timestamp with time zone), or remove the zone from the values", other)
		if e.Table {
			fix = fmt.Sprintf("remove the zone from the values, or write to a table whose column is %s (Iceberg's timestamp with time zone)", other)
		}
		return fmt.Sprintf("%s, but the value %s carries a zone; %s", is, v, fix)
	}
	is := e.is(name + " (with time zone)")
	other := strings.Replace(name, "timestamptz", "timestamp", 1)
	fix := fmt.Sprintf("add a zone to the values (Z or ±HH:MM), or declare the column %s (Iceberg's timestamp without time zone)", other)
	if e.Table {
		fix = "add a zone to the values (Z or ±HH:MM)"
	}
	return fmt.Sprintf("%s, but the value %s names no zone; %s", is, v, fix)
}

func (e *ValueError) Unwrap() error { return e.Err }
