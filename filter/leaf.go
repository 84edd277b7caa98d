package filter

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// leaf is a predicate on one column. push returns the iceberg expression
// for it and whether that is exact; match evaluates it on a non-null value
// (null is unknown for every leaf but IS NULL, which handles nulls itself).
type leaf interface {
	node
	column() column
	push() (iceberg.BooleanExpression, bool)
	match(v any) bool
	matchNull() tri
}

type cmpLeaf struct {
	col column
	op  Op
	val value
}

type inLeaf struct {
	col     column
	vals    []value
	negated bool
}

type nullLeaf struct {
	col     column
	negated bool
}

// likeLeaf keeps the Like it came from (column spelt as in the schema, NOT
// folded into Negated) to print in Residual.
type likeLeaf struct {
	col   column
	src   Like
	parts []likePart
	re    *regexp.Regexp
}

func newCmpLeaf(col Column, op Op, lit Literal, sc *iceberg.Schema) (node, error) {
	c, err := resolve(sc, col)
	if err != nil {
		return nil, err
	}
	v, err := convert(lit, c)
	if err != nil {
		return nil, err
	}
	return &cmpLeaf{c, op, v}, nil
}

func newLikeLeaf(e Like, sc *iceberg.Schema, neg bool) (node, error) {
	c, err := resolve(sc, e.Col)
	if err != nil {
		return nil, err
	}
	if _, ok := c.typ.(iceberg.StringType); !ok {
		return nil, fmt.Errorf("%w: column %s is %s; LIKE applies to string columns", ErrBind, c, c.typ)
	}
	parts, err := likeParts(e.Pattern, e.Escape)
	if err != nil {
		return nil, fmt.Errorf("%w: LIKE %s: %v", ErrBind, quote(e.Pattern, '\''), err)
	}
	e.Col, e.Negated = Column{c.names}, e.Negated != neg
	return &likeLeaf{col: c, src: e, parts: parts, re: likeRegexp(parts)}, nil
}

func (l *cmpLeaf) column() column  { return l.col }
func (l *inLeaf) column() column   { return l.col }
func (l *nullLeaf) column() column { return l.col }
func (l *likeLeaf) column() column { return l.col }

func (l *cmpLeaf) expr() Expr {
	return Compare{Column{l.col.names}, l.op, l.val.src}
}
func (l *inLeaf) expr() Expr {
	e := In{Col: Column{l.col.names}, Negated: l.negated}
	for _, v := range l.vals {
		e.Lits = append(e.Lits, v.src)
	}
	return e
}
func (l *nullLeaf) expr() Expr { return IsNull{Column{l.col.names}, l.negated} }
func (l *likeLeaf) expr() Expr { return l.src }

var icebergOp = [...]iceberg.Operation{OpEq: iceberg.OpEQ, OpNe: iceberg.OpNEQ, OpLt: iceberg.OpLT, OpLe: iceberg.OpLTEQ, OpGt: iceberg.OpGT, OpGe: iceberg.OpGTEQ}

// iceberg-go's row evaluator (iceberg.ExpressionEvaluator) compares with
// nulls first, so null < 5, null != 5 and null NOT IN (5) hold there while
// they are unknown in SQL and in the Arrow kernels a scan filters rows
// with; NOT NULL makes all of them agree. guardNulls returns e with that
// guard and whether the result is exact.
func guardNulls(c column, e iceberg.BooleanExpression) (iceberg.BooleanExpression, bool) {
	if !nullTestable(c) {
		return e, false
	}
	return iceberg.NewAnd(iceberg.NotNull(c.ref()), e), true
}

// nullTestable says whether IS [NOT] NULL on c may be pushed: arrow-go
// v18.8.0's is_null panics on decimals (its dispatch treats it as a binary
// comparison), which crashes a scan that filters rows with it. Those null
// tests stay in the Residual.
func nullTestable(c column) bool {
	_, isDecimal := c.typ.(iceberg.DecimalType)
	return !isDecimal
}

// notNull is IS NOT NULL on c where that may be pushed, and otherwise
// AlwaysTrue, inexact.
func notNull(c column) (iceberg.BooleanExpression, bool) {
	if !nullTestable(c) {
		return iceberg.AlwaysTrue{}, false
	}
	return iceberg.NotNull(c.ref()), true
}

func (l *cmpLeaf) push() (iceberg.BooleanExpression, bool) {
	switch {
	case isFloat(l.col):
		return pushFloat(l.col, l.op, l.val)
	case isBool(l.col):
		return pushBool(l.col, l.op, l.val)
	}
	p := iceberg.LiteralPredicate(icebergOp[l.op], l.col.ref(), l.val.lit)
	if l.op == OpNe || l.op == OpLt || l.op == OpLe {
		return guardNulls(l.col, p)
	}
	return p, true
}

// IN on a float or boolean column is pushed as the OR of its equalities,
// NOT IN as the AND of its inequalities: Arrow's is_in hashes the bits of
// a double, so -0.0 IN (0.0) is false there, a NaN in the list needs
// is_nan, and is_in on booleans (arrow-go v18.8.0) loses rows when the
// list repeats a value.
func (l *inLeaf) push() (iceberg.BooleanExpression, bool) {
	if isFloat(l.col) || isBool(l.col) {
		op, join := OpEq, iceberg.NewOr
		if l.negated {
			op, join = OpNe, iceberg.NewAnd
		}
		var out iceberg.BooleanExpression
		exact := true
		for _, v := range l.vals {
			leaf := cmpLeaf{col: l.col, op: op, val: v}
			p, ok := leaf.push()
			exact = exact && ok
			if out == nil {
				out = p
			} else {
				out = join(out, p)
			}
		}
		return out, exact
	}
	lits := make([]iceberg.Literal, len(l.vals))
	for i, v := range l.vals {
		lits[i] = v.lit
	}
	if l.negated {
		return guardNulls(l.col, iceberg.SetPredicate(iceberg.OpNotIn, l.col.ref(), lits))
	}
	return iceberg.SetPredicate(iceberg.OpIn, l.col.ref(), lits), true
}

func isBool(c column) bool {
	_, ok := c.typ.(iceberg.BooleanType)
	return ok
}

// pushBool is c op v on a boolean column with = and != alone: Arrow has
// no ordering kernel for booleans ("greater_equal" has no kernel matching
// (bool, bool)). FALSE < TRUE, as in SQL.
func pushBool(c column, op Op, v value) (iceberg.BooleanExpression, bool) {
	ref := c.ref()
	is := func(b bool) iceberg.BooleanExpression { return iceberg.EqualTo(ref, b) }
	lit := v.v.(bool)
	switch {
	case op == OpEq:
		return is(lit), true
	case op == OpNe:
		return is(!lit), true
	case op == OpLt && lit, op == OpLe && !lit:
		return is(false), true
	case op == OpGt && !lit, op == OpGe && lit:
		return is(true), true
	case op == OpLe, op == OpGe:
		return notNull(c)
	}
	return iceberg.AlwaysFalse{}, true // < FALSE, > TRUE
}

func isFloat(c column) bool {
	switch c.typ.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return true
	}
	return false
}

// pushFloat is c op v on a float column in iceberg-go's terms, exactly
// under floe's order of floats (compareFloat): NaN is above every other
// value and equal to itself, -0.0 equals 0.0. Arrow's kernels compare as
// IEEE 754 does (NaN is unordered) and iceberg-go's metrics say nothing
// of NaN but in NaN counts, so NaN is spelt out with is_nan, and no NaN
// literal is ever compared (iceberg-go orders NaN below every bound and
// would prune the files holding it).
func pushFloat(c column, op Op, v value) (iceberg.BooleanExpression, bool) {
	ref := c.ref()
	notNaN := func() (iceberg.BooleanExpression, bool) {
		return guardNulls(c, iceberg.NotNaN(ref))
	}
	// arrow-go v18.8.0's is_nan reads the value slot of a NULL as if it
	// held a value, so it may say NaN for a NULL: NOT NULL goes first.
	isNaN := iceberg.NewAnd(iceberg.NotNull(ref), iceberg.IsNaN(ref))
	if math.IsNaN(v.v.(float64)) {
		switch op {
		case OpEq, OpGe:
			return isNaN, true
		case OpNe, OpLt:
			return notNaN()
		case OpLe:
			return notNull(c)
		}
		return iceberg.AlwaysFalse{}, true
	}
	p := iceberg.LiteralPredicate(icebergOp[op], ref, v.lit)
	switch op {
	case OpGt, OpGe:
		return iceberg.NewOr(p, isNaN), true
	case OpNe, OpLt, OpLe:
		return guardNulls(c, p)
	}
	return p, true
}

func (l *nullLeaf) push() (iceberg.BooleanExpression, bool) {
	switch {
	case !nullTestable(l.col):
		return iceberg.AlwaysTrue{}, false
	case l.negated:
		return notNull(l.col)
	}
	return iceberg.IsNull(l.col.ref()), true
}

// LIKE without wildcards is equality, and 'abc%' is the range
// 'abc' <= s < 'abd'. That range stands in for iceberg.StartsWith, which
// iceberg-go v0.7.0 prunes with but cannot filter rows with (Arrow has no
// starts_with kernel: the scan fails with "not implemented"). Patterns
// with more wildcards push the range of their literal prefix, or NOT NULL
// when they have none, and stay residual.
func (l *likeLeaf) push() (iceberg.BooleanExpression, bool) {
	exact, noWild, prefix, prefixOnly := likeShape(l.parts)
	ref := l.col.ref()
	switch {
	case noWild && !l.src.Negated:
		return iceberg.EqualTo(ref, exact), true
	case noWild:
		return guardNulls(l.col, iceberg.NotEqualTo(ref, exact))
	case prefix == "":
		// '%' alone matches every string: exact NOT NULL, or for NOT LIKE
		// nothing at all.
		if prefixOnly && l.src.Negated {
			return iceberg.AlwaysFalse{}, true
		}
		p, exact := notNull(l.col)
		return p, exact && prefixOnly
	}
	next, bounded := prefixEnd(prefix)
	switch {
	case l.src.Negated && bounded && prefixOnly:
		return guardNulls(l.col, iceberg.NewOr(iceberg.LessThan(ref, prefix), iceberg.GreaterThanEqual(ref, next)))
	case l.src.Negated:
		// NOT LIKE 'a%b' may hold for strings starting with a: only
		// nulls are ruled out.
		p, _ := notNull(l.col)
		return p, false
	case !bounded:
		// No valid UTF-8 string bounds the prefix from above; the lower
		// bound alone still prunes.
		return iceberg.GreaterThanEqual(ref, prefix), false
	}
	return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, prefix), iceberg.LessThan(ref, next)), prefixOnly
}

// prefixEnd returns the least string greater than every string starting
// with p, comparing bytes as Iceberg and Arrow do: p with its last byte
// incremented. It reports false when that is not valid UTF-8, which an
// Iceberg string literal must be.
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), utf8.Valid(b)
}

func (l *cmpLeaf) match(v any) bool { return compare(l.op, v, l.val.v) }
func (l *inLeaf) match(v any) bool {
	for _, x := range l.vals {
		if compare(OpEq, v, x.v) {
			return !l.negated
		}
	}
	return l.negated
}
func (l *nullLeaf) match(any) bool   { return l.negated }
func (l *likeLeaf) match(v any) bool { return l.re.MatchString(v.(string)) != l.src.Negated }

func (*cmpLeaf) matchNull() tri    { return unknown }
func (*inLeaf) matchNull() tri     { return unknown }
func (*likeLeaf) matchNull() tri   { return unknown }
func (l *nullLeaf) matchNull() tri { return triOf(!l.negated) }

// compare applies op to two values of the same column type.
func compare(op Op, a, b any) bool {
	var c int
	switch a := a.(type) {
	case float64:
		c = compareFloat(a, b.(float64))
	case int64:
		c = cmp.Compare(a, b.(int64))
	case string:
		c = strings.Compare(a, b.(string))
	case bool:
		c = cmp.Compare(boolInt(a), boolInt(b.(bool)))
	case decimal128.Num:
		c = a.Cmp(b.(decimal128.Num))
	}
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	}
	return c >= 0
}

// compareFloat orders floats as Spark SQL does: -0.0 equals 0.0, and NaN
// equals itself and is above every other value, +Inf included. It is a
// total order, so NOT (d < x) is d >= x for every non-null d.
func compareFloat(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
