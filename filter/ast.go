package filter

import (
	"strings"
)

// Expr is a parsed filter. String renders it back as filter text that
// Parse accepts and that parses to an equal Expr.
type Expr interface {
	String() string
	isExpr()
}

// And holds when both sides hold.
type And struct{ L, R Expr }

// Or holds when either side holds.
type Or struct{ L, R Expr }

// Not negates X; NOT of unknown stays unknown.
type Not struct{ X Expr }

// Bool is the constant TRUE or FALSE used as a whole predicate.
type Bool struct{ Value bool }

// Compare is Col Op Lit. A literal written on the left (5 < id) is stored
// with the operator flipped (id > 5).
type Compare struct {
	Col Column
	Op  Op
	Lit Literal
}

// In is Col [NOT] IN (Lits...).
type In struct {
	Col     Column
	Lits    []Literal
	Negated bool
}

// Between is Col [NOT] BETWEEN Lo AND Hi, both ends included.
type Between struct {
	Col     Column
	Lo, Hi  Literal
	Negated bool
}

// IsNull is Col IS [NOT] NULL.
type IsNull struct {
	Col     Column
	Negated bool
}

// Like is Col [NOT] LIKE Pattern [ESCAPE Escape]; % matches any run of
// characters and _ one character. Escape is 0 when the pattern has none.
type Like struct {
	Col     Column
	Pattern string
	Escape  rune
	Negated bool
}

func (And) isExpr()     {}
func (Or) isExpr()      {}
func (Not) isExpr()     {}
func (Bool) isExpr()    {}
func (Compare) isExpr() {}
func (In) isExpr()      {}
func (Between) isExpr() {}
func (IsNull) isExpr()  {}
func (Like) isExpr()    {}

// Operands of AND and OR are parenthesised when they bind looser, so the
// text reparses to the same tree; NOT always parenthesises its operand.
func (e And) String() string { return paren(e.L, 1) + " AND " + paren(e.R, 2) }
func (e Or) String() string  { return paren(e.L, 0) + " OR " + paren(e.R, 1) }
func (e Not) String() string { return "NOT (" + e.X.String() + ")" }
func (e Bool) String() string {
	if e.Value {
		return "TRUE"
	}
	return "FALSE"
}
func (e Compare) String() string { return e.Col.String() + " " + e.Op.String() + " " + e.Lit.String() }
func (e In) String() string {
	lits := make([]string, len(e.Lits))
	for i, l := range e.Lits {
		lits[i] = l.String()
	}
	return e.Col.String() + not(e.Negated) + " IN (" + strings.Join(lits, ", ") + ")"
}
func (e Between) String() string {
	return e.Col.String() + not(e.Negated) + " BETWEEN " + e.Lo.String() + " AND " + e.Hi.String()
}
func (e IsNull) String() string { return e.Col.String() + " IS" + not(e.Negated) + " NULL" }
func (e Like) String() string {
	s := e.Col.String() + not(e.Negated) + " LIKE " + quote(e.Pattern, '\'')
	if e.Escape != 0 {
		s += " ESCAPE " + quote(string(e.Escape), '\'')
	}
	return s
}

func not(negated bool) string {
	if negated {
		return " NOT"
	}
	return ""
}

// paren wraps e when its precedence (OR 0, AND 1, others 2) is below min.
func paren(e Expr, min int) string {
	prec := 2
	switch e.(type) {
	case Or:
		prec = 0
	case And:
		prec = 1
	}
	if prec < min {
		return "(" + e.String() + ")"
	}
	return e.String()
}

// Columns lists the columns e refers to, each once, in the order they
// first appear.
func Columns(e Expr) []Column {
	var out []Column
	seen := map[string]bool{}
	var walk func(Expr)
	walk = func(e Expr) {
		var c Column
		switch e := e.(type) {
		case And:
			walk(e.L)
			walk(e.R)
			return
		case Or:
			walk(e.L)
			walk(e.R)
			return
		case Not:
			walk(e.X)
			return
		case Compare:
			c = e.Col
		case In:
			c = e.Col
		case Between:
			c = e.Col
		case IsNull:
			c = e.Col
		case Like:
			c = e.Col
		default:
			return
		}
		if k := c.String(); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	walk(e)
	return out
}

// Column names a column; Path has one element per level of nesting (a.b is
// {"a", "b"}).
type Column struct{ Path []string }

// String quotes the parts that are not plain identifiers or that are
// keywords, so they read back as the same path.
func (c Column) String() string {
	parts := make([]string, len(c.Path))
	for i, p := range c.Path {
		if isPlainIdent(p) && !isKeyword(p) {
			parts[i] = p
		} else {
			parts[i] = quote(p, '"')
		}
	}
	return strings.Join(parts, ".")
}

// Op is a comparison operator.
type Op int

// Comparison operators.
const (
	OpEq Op = iota
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var opText = [...]string{OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">="}

func (o Op) String() string { return opText[o] }

// flip gives the operator for the operands swapped: 5 < id is id > 5.
func (o Op) flip() Op {
	return [...]Op{OpEq: OpEq, OpNe: OpNe, OpLt: OpGt, OpLe: OpGe, OpGt: OpLt, OpGe: OpLe}[o]
}

// negate gives the operator of NOT (a o b); in three-valued logic both are
// unknown for NULL, so the rewrite is exact.
func (o Op) negate() Op {
	return [...]Op{OpEq: OpNe, OpNe: OpEq, OpLt: OpGe, OpLe: OpGt, OpGt: OpLe, OpGe: OpLt}[o]
}

// LitKind is the lexical kind of a literal; Bind converts it to the
// column's type.
type LitKind int

// Literal kinds.
const (
	LitInt       LitKind = iota // 42, -7
	LitDecimal                  // 12.50
	LitFloat                    // 1.5e3
	LitString                   // 'text'
	LitBool                     // TRUE, FALSE
	LitDate                     // DATE '2024-01-01'
	LitTimestamp                // TIMESTAMP '2024-01-01 10:00:00'
	LitTime                     // TIME '10:00:00'
	LitBinary                   // X'0102'
)

// Literal is a constant as written. Text is the number as written, the
// unquoted string, TRUE or FALSE, the quoted text of DATE, TIMESTAMP
// and TIME, or the hex digits of a binary literal.
type Literal struct {
	Kind LitKind
	Text string
}

func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return quote(l.Text, '\'')
	case LitDate:
		return "DATE " + quote(l.Text, '\'')
	case LitTimestamp:
		return "TIMESTAMP " + quote(l.Text, '\'')
	case LitTime:
		return "TIME " + quote(l.Text, '\'')
	case LitBinary:
		return "X" + quote(l.Text, '\'')
	}
	return l.Text
}

// quote encloses s in q, doubling the q characters inside.
func quote(s string, q byte) string {
	return string(q) + strings.ReplaceAll(s, string(q), string(q)+string(q)) + string(q)
}
