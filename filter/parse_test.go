package filter_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/floe-io/floe/filter"
)

// TestParseString pins the tree Parse builds by its canonical text.
func TestParseString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"id>5", "id > 5"},
		{"5 < id", "id > 5"},
		{"'a' = status", "status = 'a'"},
		{"id <> 5", "id != 5"},
		{"id = - 5", "id = -5"},
		{"x = .5", "x = .5"},
		{"x = 1.5E-3", "x = 1.5E-3"},
		{"a AND b = 1 OR c = 2", ""},
		{"x = 1 AND y = 2 OR z = 3", "x = 1 AND y = 2 OR z = 3"},
		{"x = 1 AND (y = 2 OR z = 3)", "x = 1 AND (y = 2 OR z = 3)"},
		{"x = 1 AND (y = 2 AND z = 3)", "x = 1 AND (y = 2 AND z = 3)"},
		{"not x = 1", "NOT (x = 1)"},
		{"x not in (1,2)", "x NOT IN (1, 2)"},
		{"x between 1 and 2 and y = 3", "x BETWEEN 1 AND 2 AND y = 3"},
		{"x is not null", "x IS NOT NULL"},
		{`x like 'a\%' escape '\'`, `x LIKE 'a\%' ESCAPE '\'`},
		{"x = 'it''s'", "x = 'it''s'"},
		{`"odd ""name""".b = true`, `"odd ""name""".b = TRUE`},
		{`"and" = 1`, `"and" = 1`},
		{"date = DATE '2024-01-01'", "date = DATE '2024-01-01'"},
		{"ts >= timestamp '2024-01-01T10:00:00.5'", "ts >= TIMESTAMP '2024-01-01T10:00:00.5'"},
		{"t = time '10:00'", "t = TIME '10:00'"},
		{"time = 1", "time = 1"},
		{"true", "TRUE"},
		{"false = flag", "flag = FALSE"},
		{"ünïcode = 'ö'", "ünïcode = 'ö'"},
		{"b = x'0aFF'", "b = X'0aFF'"},
		{"X'01' < b", "b > X'01'"},
		{"b IN (X'', X'00')", "b IN (X'', X'00')"},
		{"x = X'00'", "x = X'00'"},
	} {
		e, err := filter.Parse(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %s, want an error", tc.in, e)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := filter.Parse(e.String())
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Errorf("%q does not round-trip: %#v, %v", tc.in, again, err)
		}
	}
}

// TestSyntaxErrors pins messages and carets of the errors people will see.
func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"id > AND x = 1", `
filter: expected a value after '>', found 'AND' at position 6
  id > AND x = 1
       ^`},
		{"", `
filter: expected a condition, found the end of the filter at position 1
  
  ^`},
		{"id > 5 status = 1", `
filter: expected AND, OR or the end of the filter, found 'status' at position 8
  id > 5 status = 1
         ^`},
		{"(id > 5", `
filter: expected ')' to close the '(' at position 1, found end of filter at position 8
  (id > 5
         ^`},
		{"status = 'open", `
filter: unterminated string at position 10
  status = 'open
           ^`},
		{"id = NULL", `
filter: NULL is never equal to, less or greater than anything; use IS NULL or IS NOT NULL at position 6
  id = NULL
       ^`},
		{"id IS 5", `
filter: expected NULL after IS, found '5' at position 7
  id IS 5
        ^`},
		{"id IN 1, 2", `
filter: expected '(' after 'IN', found '1' at position 7
  id IN 1, 2
        ^`},
		{"id IN (1 2)", `
filter: expected ',' or ')' in the IN list, found '2' at position 10
  id IN (1 2)
           ^`},
		{"id BETWEEN 1 OR 2", `
filter: expected AND after '1', found 'OR' at position 14
  id BETWEEN 1 OR 2
               ^`},
		{"id NOT = 3", `
filter: expected IN, BETWEEN or LIKE after NOT after column id, found '=' at position 8
  id NOT = 3
         ^`},
		{"id ~ 3", `
filter: unexpected character '~' at position 4
  id ~ 3
     ^`},
		{"and = 1", `
filter: expected a condition, found keyword AND (quote a column of that name: "and") at position 1
  and = 1
  ^`},
		{"x = 12abc", `
filter: malformed number at position 5
  x = 12abc
      ^`},
		{"x = 1e", `
filter: malformed number: exponent without digits at position 5
  x = 1e
      ^`},
		{`x LIKE 'a\b' ESCAPE '\'`, `
filter: the escape character must be followed by %, _ or itself at position 8
  x LIKE 'a\b' ESCAPE '\'` + "\n  " + `       ^`},
		{"5 < 6", `
filter: expected a column after '<', found '6' at position 5
  5 < 6
      ^`},
		{"b = X'012'", `
filter: binary literal X'012' has an odd number of hex digits; each byte takes two at position 5
  b = X'012'
      ^`},
		{"b = X'0G'", `
filter: binary literal X'0G' has 'G', which is not a hex digit (0-9, A-F) at position 5
  b = X'0G'
      ^`},
		{"b = X'01", `
filter: unterminated binary literal at position 5
  b = X'01
      ^`},
		{`"" = 1`, `
filter: empty quoted name at position 1
  "" = 1
  ^`},
		{"é = ", `
filter: expected a value after '=', found end of filter at position 5
  é = 
      ^`},
	} {
		_, err := filter.Parse(tc.in)
		var se *filter.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if want := strings.TrimPrefix(tc.want, "\n"); err.Error() != want {
			t.Errorf("Parse(%q):\n%s\nwant\n%s", tc.in, err, want)
		}
	}
}

// TestBindErrors pins the messages for filters that do not fit the table.
func TestBindErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"nope = 1", "column nope: no such column (have id, n, status, price, ts, d, flag, score, a, \"odd name\", tz, t, u, bin, fx)"},
		{"a.x = 1", "column a.x: no such column (have b, c)"},
		{"id.x = 1", "column id is long, which has no field \"x\""},
		{"a = 1", "column a is struct<11: b: optional int, 15: c: optional string>; filters compare primitive columns only"},
		{"id = 'x'", "column id is long; 'x' is not a long"},
		{"id = 1.5", "column id is long; 1.5 is not a long"},
		{"n = 3000000000", "column n is int; 3000000000 is out of range"},
		{"id = 99999999999999999999", "column id is long; 99999999999999999999 is out of range"},
		{"price = 1.505", "column price is decimal(10, 2); 1.505 has more than 2 decimal places"},
		{"price = 123456789", "column price is decimal(10, 2); 123456789 has more than the 10 digits the column holds"},
		{"price = 1e3", "column price is decimal(10, 2); 1e3 is not a decimal(10, 2)"},
		{"ts = '2024-13-01'", "column ts is timestamp; '2024-13-01' is not a timestamp"},
		{"ts = TIMESTAMP '2024-01-01 10:00:00Z'", "column ts is timestamp; TIMESTAMP '2024-01-01 10:00:00Z' is not a timestamp"},
		{"ts = TIMESTAMP '2024-01-01 10:00:00.0000001'", "column ts is timestamp; TIMESTAMP '2024-01-01 10:00:00.0000001' is finer than the microseconds the column holds"},
		{"d = DATE '2024-02-30'", "column d is date; DATE '2024-02-30' is not a date"},
		{"flag = 1", "column flag is boolean; 1 is not a boolean"},
		{"status = 5", "column status is string; 5 is not a string"},
		{"t = '25:00'", "column t is time; '25:00' is not a time"},
		{"t = TIME '10:00:00.0000001'", "column t is time; TIME '10:00:00.0000001' is finer than the microseconds the column holds"},
		{"u = 'abc'", "column u is uuid; 'abc' is not a uuid"},
		{"bin = 'a'", "column bin is binary; 'a' is not a binary value; write bytes in hex, as X'0102'"},
		{"fx = X'01'", "column fx is fixed[3]; X'01' is 1 byte; the column holds exactly 3 bytes"},
		{"fx = X'01020304'", "column fx is fixed[3]; X'01020304' is 4 bytes; the column holds exactly 3 bytes"},
		{"id = X'01'", "column id is long; X'01' is not a long"},
		{"bin LIKE 'a%'", "column bin is binary; LIKE applies to string columns"},
		{"id LIKE '1%'", "column id is long; LIKE applies to string columns"},
		{"status IN ('a', 1)", "column status is string; 1 is not a string"},
		{"id BETWEEN 1 AND 'x'", "column id is long; 'x' is not a long"},
	} {
		_, err := filter.Bind(mustParse(t, tc.in), testSchema)
		if !errors.Is(err, filter.ErrBind) {
			t.Errorf("Bind(%q) = %v, want ErrBind", tc.in, err)
			continue
		}
		if want := filter.ErrBind.Error() + ": " + tc.want; err.Error() != want {
			t.Errorf("Bind(%q):\n%s\nwant\n%s", tc.in, err, want)
		}
	}
}

// TestBindCaseInsensitiveAmbiguous checks a name matching two columns
// ignoring case is refused rather than guessed.
func TestBindCaseInsensitiveAmbiguous(t *testing.T) {
	t.Parallel()
	_, err := filter.Bind(mustParse(t, "Id = 1"), icebergSchemaIdAndID())
	if err == nil || !strings.Contains(err.Error(), "ambiguous: id and ID differ only in case") {
		t.Fatalf("got %v, want ambiguous", err)
	}
	for _, exact := range []string{"id = 1", "ID = 1"} {
		if _, err := filter.Bind(mustParse(t, exact), icebergSchemaIdAndID()); err != nil {
			t.Errorf("%s: %v", exact, err)
		}
	}
}

// TestColumns lists each column a filter refers to once, in order.
func TestColumns(t *testing.T) {
	t.Parallel()
	e, err := filter.Parse(`a.b = 1 AND (id > 2 OR NOT ("odd name" LIKE 'x%' AND id IN (1, 2))) AND s BETWEEN 'a' AND 'b' AND t IS NULL AND TRUE`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range filter.Columns(e) {
		got = append(got, strings.Join(c.Path, "."))
	}
	if want := []string{"a.b", "id", "odd name", "s", "t"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Columns = %q, want %q", got, want)
	}
}
