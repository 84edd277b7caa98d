package filter_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/floe-io/floe/filter"
)

// FuzzParse checks that Parse never panics, that its errors point inside
// the input, and that every filter it accepts prints as text that parses
// back to the same tree. Bind and Match must not panic on it either. The
// seeds run under plain go test.
func FuzzParse(f *testing.F) {
	for _, tc := range evalCases {
		f.Add(tc.filter)
	}
	for _, s := range []string{
		"", "(", "id >", "'", `"`, `""`, "x = -", "x IN ()", "NOT", "x LIKE 'a' ESCAPE 'ab'",
		"x = 1e", ".5 = x", "a.b.c IS NOT NULL", `"a"."b" = 'c'`, "x = 'é'", "\xff = 1",
		"date = DATE '2024-01-01'", "TRUE AND FALSE OR NOT TRUE",
	} {
		f.Add(s)
	}
	rec := record(f, testRows())
	f.Cleanup(rec.Release)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := filter.Parse(s)
		if err != nil {
			var se *filter.SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("Parse(%q) = %v", s, err)
			}
			_ = err.Error()
			return
		}
		text := e.String()
		again, err := filter.Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", s, text, err)
		}
		if !reflect.DeepEqual(again, e) {
			t.Fatalf("Parse(%q) = %#v; its text %s parses as %#v", s, e, text, again)
		}
		b, err := filter.Bind(e, testSchema)
		if err != nil {
			return
		}
		m, err := b.Matcher(rec.Schema())
		if err != nil {
			t.Fatalf("Matcher(%s): %v", text, err)
		}
		if _, err := m.Match(rec); err != nil {
			t.Fatalf("Match(%s): %v", text, err)
		}
	})
}
