package filter

import (
	"fmt"

	"github.com/apache/iceberg-go"
)

// Bound is a filter resolved against a table schema.
type Bound struct {
	// Pushed is implied by the filter, so a scan with
	// table.WithRowFilter(Pushed) never loses a matching row. It is exact
	// (equivalent to the filter) when Residual is nil.
	Pushed iceberg.BooleanExpression
	// Residual is what rows a Pushed scan returns must still be checked
	// against, or nil when Pushed is exact: LIKE patterns other than
	// 'abc%' and 'abc', null tests on decimals (IS NULL, and the NOT NULL
	// that <, <=, != and NOT IN need), and anything on fields inside
	// structs; under an OR, the whole OR.
	Residual Expr

	// Filter is the whole filter with NOT pushed down to the leaves,
	// BETWEEN expanded and columns spelt as in the schema.
	Filter Expr

	root, residual node
}

// node is the bound form: and, or, a constant or a leaf predicate.
type node interface{ expr() Expr }

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type constNode bool

func (n andNode) expr() Expr   { return And{n.l.expr(), n.r.expr()} }
func (n orNode) expr() Expr    { return Or{n.l.expr(), n.r.expr()} }
func (n constNode) expr() Expr { return Bool{bool(n)} }

// Bind resolves e's columns in sc and converts its literals to the
// columns' types. Errors wrap ErrBind and name the column, its type and the
// offending literal.
func Bind(e Expr, sc *iceberg.Schema) (*Bound, error) {
	root, err := bind(e, sc, false)
	if err != nil {
		return nil, err
	}
	pushed, residual := split(root)
	b := &Bound{Pushed: pushed, Filter: root.expr(), root: root, residual: residual}
	if residual != nil {
		b.Residual = residual.expr()
	}
	return b, nil
}

// bind builds the node for e, or for NOT e when neg is set. NOT goes down
// to the leaves by De Morgan, which holds in three-valued logic, so every
// leaf can be pushed down as it stands.
func bind(e Expr, sc *iceberg.Schema, neg bool) (node, error) {
	switch e := e.(type) {
	case And:
		return binary(e.L, e.R, sc, neg, neg)
	case Or:
		return binary(e.L, e.R, sc, neg, !neg)
	case Not:
		return bind(e.X, sc, !neg)
	case Bool:
		return constNode(e.Value != neg), nil
	case Compare:
		op := e.Op
		if neg {
			op = op.negate()
		}
		return newCmpLeaf(e.Col, op, e.Lit, sc)
	case Between:
		lo, hi := Compare{e.Col, OpGe, e.Lo}, Compare{e.Col, OpLe, e.Hi}
		if e.Negated != neg {
			return bind(Or{Compare{e.Col, OpLt, e.Lo}, Compare{e.Col, OpGt, e.Hi}}, sc, false)
		}
		return bind(And{lo, hi}, sc, false)
	case In:
		c, err := resolve(sc, e.Col)
		if err != nil {
			return nil, err
		}
		l := &inLeaf{col: c, negated: e.Negated != neg}
		for _, lit := range e.Lits {
			v, err := convert(lit, c)
			if err != nil {
				return nil, err
			}
			l.vals = append(l.vals, v)
		}
		return l, nil
	case IsNull:
		c, err := resolve(sc, e.Col)
		return &nullLeaf{col: c, negated: e.Negated != neg}, err
	case Like:
		return newLikeLeaf(e, sc, neg)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrBind, e)
}

// binary binds l and r, joined by OR when or is set and by AND otherwise.
func binary(l, r Expr, sc *iceberg.Schema, neg, or bool) (node, error) {
	ln, err := bind(l, sc, neg)
	if err != nil {
		return nil, err
	}
	rn, err := bind(r, sc, neg)
	if err != nil {
		return nil, err
	}
	if or {
		return orNode{ln, rn}, nil
	}
	return andNode{ln, rn}, nil
}

// split returns the iceberg expression for n and the part of n that it
// does not express exactly (nil when none). Under AND only the inexact side
// remains; under OR an inexact side makes the whole OR residual.
func split(n node) (iceberg.BooleanExpression, node) {
	switch n := n.(type) {
	case andNode:
		lp, lr := split(n.l)
		rp, rr := split(n.r)
		return iceberg.NewAnd(lp, rp), andOf(lr, rr)
	case orNode:
		lp, lr := split(n.l)
		rp, rr := split(n.r)
		if lr == nil && rr == nil {
			return iceberg.NewOr(lp, rp), nil
		}
		return iceberg.NewOr(lp, rp), n
	case constNode:
		if n {
			return iceberg.AlwaysTrue{}, nil
		}
		return iceberg.AlwaysFalse{}, nil
	case leaf:
		if len(n.column().names) > 1 {
			// arrow-go v18.8.0 crashes filtering rows on fields inside
			// structs (is_null breaks the take kernel; a string range
			// panics in structTake), and a scan filters rows with
			// Pushed: such predicates are only checked as Residual.
			return iceberg.AlwaysTrue{}, n
		}
		p, exact := n.push()
		if exact {
			return p, nil
		}
		return p, n
	}
	panic(fmt.Sprintf("filter: unknown node %T", n))
}

func andOf(l, r node) node {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	}
	return andNode{l, r}
}

// Unpushed is b with nothing pushed down: every row is checked against the
// whole filter. It is for tables whose statistics cannot be trusted to
// prune.
func (b *Bound) Unpushed() *Bound {
	return &Bound{Pushed: iceberg.AlwaysTrue{}, Residual: b.Filter, Filter: b.Filter, root: b.root, residual: b.root}
}
