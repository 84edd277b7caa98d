package upsert

import (
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ordKind is the family of an order-by value: values of one column
// compare within their family, whatever their width in each file.
type ordKind uint8

const (
	ordNull ordKind = iota
	ordInt
	ordFloat
	ordString
)

// ordVal is one order-by value of a change.
type ordVal struct {
	kind ordKind
	i    int64
	f    float64
	s    string
}

// ordColumn reads the order-by value of row i.
type ordColumn func(i int) ordVal

func newOrdColumn(a arrow.Array) (ordColumn, error) {
	if ints := asInts(a); ints != nil {
		return func(i int) ordVal {
			if a.IsNull(i) {
				return ordVal{}
			}
			return ordVal{kind: ordInt, i: ints(i)}
		}, nil
	}
	switch t := a.(type) {
	case *array.Float64:
		return func(i int) ordVal {
			if a.IsNull(i) {
				return ordVal{}
			}
			return ordVal{kind: ordFloat, f: t.Value(i)}
		}, nil
	case *array.Float32:
		return func(i int) ordVal {
			if a.IsNull(i) {
				return ordVal{}
			}
			return ordVal{kind: ordFloat, f: float64(t.Value(i))}
		}, nil
	case *array.String, *array.LargeString:
		str := t.(interface{ Value(int) string })
		return func(i int) ordVal {
			if a.IsNull(i) {
				return ordVal{}
			}
			return ordVal{kind: ordString, s: str.Value(i)}
		}, nil
	}
	return nil, fmt.Errorf("is %s; order by an integer, floating-point, timestamp or string column", a.DataType())
}

// compareOrder compares two changes' order-by values column by column: a
// null sorts first; values of different families cannot be compared.
func compareOrder(a, b []ordVal) (int, error) {
	for j := range a {
		x, y := a[j], b[j]
		if x.kind == ordNull || y.kind == ordNull {
			if c := boolCmp(x.kind != ordNull, y.kind != ordNull); c != 0 {
				return c, nil
			}
			continue
		}
		if x.kind != y.kind {
			return 0, fmt.Errorf("order-by values of one column differ in type across the batch (a number and a string); give the column one type")
		}
		var c int
		switch x.kind {
		case ordInt:
			c = cmp.Compare(x.i, y.i)
		case ordFloat:
			c = cmp.Compare(x.f, y.f)
		case ordString:
			c = cmp.Compare(x.s, y.s)
		}
		if c != 0 {
			return c, nil
		}
	}
	return 0, nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
