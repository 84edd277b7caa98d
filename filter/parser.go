package filter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse parses a filter. Errors are *SyntaxError, which render as
//
//	filter: expected a value after '>' at position 6
//	  id > AND x = 1
//	       ^
func Parse(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{in: s, toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errAt(t, "expected AND, OR or the end of the filter, found "+t.describe())
	}
	return e, nil
}

type parser struct {
	in   string
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) errAt(t token, msg string) error { return &SyntaxError{p.in, t.pos, msg} }

// isWord reports whether t is the keyword w, in any case.
func isWord(t token, w string) bool { return t.kind == tokIdent && strings.EqualFold(t.text, w) }

func (p *parser) accept(w string) bool {
	if isWord(p.peek(), w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(w string, after token) error {
	if !p.accept(w) {
		return p.errAt(p.peek(), "expected "+w+" after "+after.describe()+", found "+p.peek().describe())
	}
	return nil
}

func (p *parser) or() (Expr, error) {
	l, err := p.and()
	for err == nil && p.accept("OR") {
		var r Expr
		if r, err = p.and(); err == nil {
			l = Or{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (Expr, error) {
	l, err := p.unary()
	for err == nil && p.accept("AND") {
		var r Expr
		if r, err = p.unary(); err == nil {
			l = And{l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (Expr, error) {
	if p.accept("NOT") {
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return Not{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch {
	case t.kind == tokLParen:
		p.next()
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek().kind != tokRParen {
			return nil, p.errAt(p.peek(), "expected ')' to close the '(' at position "+p.position(t)+", found "+p.peek().describe())
		}
		p.next()
		return e, nil
	case (isWord(t, "TRUE") || isWord(t, "FALSE")) && p.peekAt(1).kind != tokOp:
		p.next()
		return Bool{isWord(t, "TRUE")}, nil
	case t.kind == tokIdent && !isKeyword(t.text) && !p.startsLiteral() || t.kind == tokQuotedIdent:
		col, err := p.column()
		if err != nil {
			return nil, err
		}
		return p.predicate(col)
	case p.startsLiteral() || isWord(t, "TRUE") || isWord(t, "FALSE"):
		return p.literalFirst()
	case t.kind == tokEOF:
		return nil, p.errAt(t, "expected a condition, found the end of the filter")
	}
	if t.kind == tokIdent && isKeyword(t.text) {
		return nil, p.errAt(t, "expected a condition, found keyword "+strings.ToUpper(t.text)+" (quote a column of that name: \""+t.text+"\")")
	}
	return nil, p.errAt(t, "expected a condition, found "+t.describe())
}

// position renders t's position as Error does, for messages that point
// back at an earlier token.
func (p *parser) position(t token) string {
	return strconv.Itoa(utf8.RuneCountInString(p.in[:t.pos]) + 1)
}

// startsLiteral reports whether a literal starts here: a number, a string,
// a binary literal, a minus sign, or DATE, TIMESTAMP or TIME followed by a string.
func (p *parser) startsLiteral() bool {
	t := p.peek()
	switch t.kind {
	case tokNumber, tokString, tokBinary, tokMinus:
		return true
	}
	return (isWord(t, "DATE") || isWord(t, "TIMESTAMP") || isWord(t, "TIME")) && p.peekAt(1).kind == tokString
}

// literalFirst parses Lit op Col and stores it as Col flip(op) Lit.
func (p *parser) literalFirst() (Expr, error) {
	lit, err := p.literal(p.peek())
	if err != nil {
		return nil, err
	}
	opTok := p.peek()
	if opTok.kind != tokOp {
		return nil, p.errAt(opTok, "expected a comparison after the value "+lit.String()+", found "+opTok.describe())
	}
	p.next()
	t := p.peek()
	if !(t.kind == tokIdent && !isKeyword(t.text) || t.kind == tokQuotedIdent) {
		return nil, p.errAt(t, "expected a column after "+opTok.describe()+", found "+t.describe())
	}
	col, err := p.column()
	if err != nil {
		return nil, err
	}
	return Compare{col, parseOp(opTok.text).flip(), lit}, nil
}

func (p *parser) column() (Column, error) {
	var c Column
	for {
		t := p.next()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			return c, p.errAt(t, "expected a field name after '.', found "+t.describe())
		}
		c.Path = append(c.Path, t.text)
		if p.peek().kind != tokDot {
			return c, nil
		}
		p.next()
	}
}

func parseOp(s string) Op {
	switch s {
	case "=":
		return OpEq
	case "<":
		return OpLt
	case "<=":
		return OpLe
	case ">":
		return OpGt
	case ">=":
		return OpGe
	}
	return OpNe // != and <>
}

// predicate parses what follows a column.
func (p *parser) predicate(col Column) (Expr, error) {
	t := p.next()
	if t.kind == tokOp {
		lit, err := p.literal(t)
		if err != nil {
			return nil, err
		}
		return Compare{col, parseOp(t.text), lit}, nil
	}
	if isWord(t, "IS") {
		negated := p.accept("NOT")
		if !p.accept("NULL") {
			return nil, p.errAt(p.peek(), "expected NULL after IS"+not(negated)+", found "+p.peek().describe())
		}
		return IsNull{col, negated}, nil
	}
	negated := isWord(t, "NOT")
	if negated {
		t = p.next()
	}
	switch {
	case isWord(t, "IN"):
		lits, err := p.list(t)
		return In{col, lits, negated}, err
	case isWord(t, "BETWEEN"):
		lo, err := p.literal(t)
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND", p.toks[p.i-1]); err != nil {
			return nil, err
		}
		hi, err := p.literal(p.toks[p.i-1])
		return Between{col, lo, hi, negated}, err
	case isWord(t, "LIKE"):
		return p.like(col, t, negated)
	}
	want := "a comparison, IN, BETWEEN, LIKE or IS"
	if negated {
		want = "IN, BETWEEN or LIKE after NOT"
	}
	return nil, p.errAt(t, "expected "+want+" after column "+col.String()+", found "+t.describe())
}

func (p *parser) list(in token) ([]Literal, error) {
	if t := p.next(); t.kind != tokLParen {
		return nil, p.errAt(t, "expected '(' after "+in.describe()+", found "+t.describe())
	}
	var lits []Literal
	for {
		lit, err := p.literal(p.toks[p.i-1])
		if err != nil {
			return nil, err
		}
		lits = append(lits, lit)
		switch t := p.next(); t.kind {
		case tokComma:
		case tokRParen:
			return lits, nil
		default:
			return nil, p.errAt(t, "expected ',' or ')' in the IN list, found "+t.describe())
		}
	}
}

func (p *parser) like(col Column, like token, negated bool) (Expr, error) {
	pat := p.next()
	if pat.kind != tokString {
		return nil, p.errAt(pat, "expected a pattern string after LIKE, found "+pat.describe())
	}
	e := Like{Col: col, Pattern: pat.text, Negated: negated}
	if isWord(p.peek(), "ESCAPE") && p.peekAt(1).kind == tokString {
		p.next()
		esc := p.next()
		if utf8.RuneCountInString(esc.text) != 1 {
			return nil, p.errAt(esc, "ESCAPE takes a single character")
		}
		e.Escape, _ = utf8.DecodeRuneInString(esc.text)
	}
	if err := checkPattern(e.Pattern, e.Escape); err != nil {
		return nil, p.errAt(pat, err.Error())
	}
	return e, nil
}

// literal parses a constant that follows the token after.
func (p *parser) literal(after token) (Literal, error) {
	t := p.next()
	switch {
	case t.kind == tokNumber:
		return numberLit(t.text), nil
	case t.kind == tokMinus && p.peek().kind == tokNumber:
		return numberLit("-" + p.next().text), nil
	case t.kind == tokString:
		return Literal{LitString, t.text}, nil
	case t.kind == tokBinary:
		return Literal{LitBinary, t.text}, nil
	case isWord(t, "TRUE"), isWord(t, "FALSE"):
		return Literal{LitBool, strings.ToUpper(t.text)}, nil
	case isWord(t, "DATE") && p.peek().kind == tokString:
		return Literal{LitDate, p.next().text}, nil
	case isWord(t, "TIMESTAMP") && p.peek().kind == tokString:
		return Literal{LitTimestamp, p.next().text}, nil
	case isWord(t, "TIME") && p.peek().kind == tokString:
		return Literal{LitTime, p.next().text}, nil
	case isWord(t, "NULL"):
		return Literal{}, p.errAt(t, "NULL is never equal to, less or greater than anything; use IS NULL or IS NOT NULL")
	}
	return Literal{}, p.errAt(t, "expected a value after "+after.describe()+", found "+t.describe())
}

func numberLit(s string) Literal {
	switch {
	case strings.ContainsAny(s, "eE"):
		return Literal{LitFloat, s}
	case strings.Contains(s, "."):
		return Literal{LitDecimal, s}
	}
	return Literal{LitInt, s}
}
