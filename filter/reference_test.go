package filter_test

import (
	"encoding/hex"
	"math/big"
	"strings"
	"time"

	"github.com/floe-io/floe/filter"
	"github.com/google/uuid"
)

// The reference evaluator works on the AST and Go values with its own
// literal conversions and LIKE matching, so the Arrow matcher is checked
// against code that shares nothing with it.

type truth int

const (
	isFalse truth = iota
	isTrue
	isUnknown
)

var colTypes = map[string]string{
	"id": "num", "n": "num", "status": "string", "price": "num", "score": "num",
	"ts": "ts", "tz": "ts", "d": "date", "flag": "bool", "a.b": "num", "a.c": "string", "odd name": "string", "t": "time", "u": "uuid",
	"bin": "bytes", "fx": "bytes",
}

func refEval(e filter.Expr, r row) truth {
	switch e := e.(type) {
	case filter.And:
		l, rr := refEval(e.L, r), refEval(e.R, r)
		switch {
		case l == isFalse || rr == isFalse:
			return isFalse
		case l == isUnknown || rr == isUnknown:
			return isUnknown
		}
		return isTrue
	case filter.Or:
		l, rr := refEval(e.L, r), refEval(e.R, r)
		switch {
		case l == isTrue || rr == isTrue:
			return isTrue
		case l == isUnknown || rr == isUnknown:
			return isUnknown
		}
		return isFalse
	case filter.Not:
		switch refEval(e.X, r) {
		case isTrue:
			return isFalse
		case isFalse:
			return isTrue
		}
		return isUnknown
	case filter.Bool:
		return truthOf(e.Value)
	case filter.Compare:
		v, typ := refColumn(e.Col, r)
		if v == nil {
			return isUnknown
		}
		return truthOf(refCompare(e.Op, refCmp(v, refLit(e.Lit, typ))))
	case filter.In:
		v, typ := refColumn(e.Col, r)
		if v == nil {
			return isUnknown
		}
		for _, l := range e.Lits {
			if refCmp(v, refLit(l, typ)) == 0 {
				return truthOf(!e.Negated)
			}
		}
		return truthOf(e.Negated)
	case filter.Between:
		v, typ := refColumn(e.Col, r)
		if v == nil {
			return isUnknown
		}
		in := refCmp(v, refLit(e.Lo, typ)) >= 0 && refCmp(v, refLit(e.Hi, typ)) <= 0
		return truthOf(in != e.Negated)
	case filter.IsNull:
		v, _ := refColumn(e.Col, r)
		return truthOf((v == nil) != e.Negated)
	case filter.Like:
		v, _ := refColumn(e.Col, r)
		if v == nil {
			return isUnknown
		}
		return truthOf(refLike([]rune(v.(string)), []rune(e.Pattern), e.Escape) != e.Negated)
	}
	panic("unknown expression")
}

func truthOf(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// refColumn looks the column up ignoring case and returns its value in the
// reference domain: *big.Rat for numbers, time.Time, string (also for
// bytes) or bool.
func refColumn(c filter.Column, r row) (any, string) {
	name := lower(strings.Join(c.Path, "."))
	typ := colTypes[name]
	var v any
	if strings.HasPrefix(name, "a.") {
		if a, _ := r["a"].(map[string]any); a != nil {
			v = a[strings.TrimPrefix(name, "a.")]
		}
	} else {
		v = r[name]
	}
	switch x := v.(type) {
	case int64:
		v = new(big.Rat).SetInt64(x)
	case int32:
		v = new(big.Rat).SetInt64(int64(x))
	case float64:
		v = new(big.Rat).SetFloat64(x)
	case time.Duration:
		v = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(x)
	case uuid.UUID:
		v = x.String()
	case []byte:
		v = string(x)
	}
	return v, typ
}

func refLit(l filter.Literal, typ string) any {
	switch typ {
	case "num":
		v, ok := new(big.Rat).SetString(l.Text)
		if !ok {
			panic("bad number " + l.Text)
		}
		return v
	case "bool":
		return l.Text == "TRUE"
	case "bytes":
		b, err := hex.DecodeString(l.Text)
		if err != nil {
			panic("bad hex " + l.Text)
		}
		return string(b)
	case "uuid":
		u, err := uuid.Parse(l.Text)
		if err != nil {
			panic("bad uuid " + l.Text)
		}
		return u.String()
	case "time":
		for _, layout := range []string{"15:04:05.999999", "15:04"} {
			if t, err := time.Parse(layout, l.Text); err == nil {
				return t
			}
		}
		panic("bad time " + l.Text)
	case "date", "ts":
		s := strings.TrimSuffix(strings.Replace(l.Text, "T", " ", 1), "Z")
		for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02 15:04", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t
			}
		}
		panic("bad time " + l.Text)
	}
	return l.Text
}

func refCmp(a, b any) int {
	switch a := a.(type) {
	case *big.Rat:
		return a.Cmp(b.(*big.Rat))
	case time.Time:
		return a.Compare(b.(time.Time))
	case string:
		return strings.Compare(a, b.(string))
	case bool:
		if a == b.(bool) {
			return 0
		}
		if a {
			return 1
		}
		return -1
	}
	panic("uncomparable")
}

func refCompare(op filter.Op, c int) bool {
	switch op {
	case filter.OpEq:
		return c == 0
	case filter.OpNe:
		return c != 0
	case filter.OpLt:
		return c < 0
	case filter.OpLe:
		return c <= 0
	case filter.OpGt:
		return c > 0
	}
	return c >= 0
}

// refLike matches by backtracking over the pattern, the textbook way.
func refLike(s, p []rune, esc rune) bool {
	if len(p) == 0 {
		return len(s) == 0
	}
	switch {
	case esc != 0 && p[0] == esc:
		return len(s) > 0 && s[0] == p[1] && refLike(s[1:], p[2:], esc)
	case p[0] == '%':
		for i := 0; i <= len(s); i++ {
			if refLike(s[i:], p[1:], esc) {
				return true
			}
		}
		return false
	case p[0] == '_':
		return len(s) > 0 && refLike(s[1:], p[1:], esc)
	}
	return len(s) > 0 && s[0] == p[0] && refLike(s[1:], p[1:], esc)
}
