package filter_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/floe-io/floe/filter"
)

// FuzzParse checks that Parse never panics, that its errors point inside
// the input, and that every filter it accepts prints as text that parses
// back to the same tree. A filter that binds to the test table must match
// the same rows as the reference evaluator. The seeds run under plain go
// test.
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
	rows := testRows()
	rec := record(f, rows)
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
		got, err := m.Match(rec)
		if err != nil {
			t.Fatalf("Match(%s): %v", text, err)
		}
		for i, r := range rows {
			if want, ok := refEvalKnown(e, r); ok && got[i] != (want == isTrue) {
				t.Fatalf("%s: row %d %v: matcher %v, reference %v", text, i, r, got[i], want)
			}
		}
	})
}

// refEvalKnown is refEval, except that it reports false for literals in
// forms the reference does not read (time zone offsets, say) instead of
// panicking.
func refEvalKnown(e filter.Expr, r row) (res truth, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if s, isStr := p.(string); !isStr || !strings.HasPrefix(s, "bad ") {
				panic(p)
			}
			ok = false
		}
	}()
	return refEval(e, r), true
}
