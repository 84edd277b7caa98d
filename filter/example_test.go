package filter_test

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/floe-io/floe/filter"
)

func Example() {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
	)
	e, err := filter.Parse("id > 5 AND status LIKE 'ACT%E'")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := filter.Bind(e, sc)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Scan with table.WithRowFilter(b.Pushed), then keep the rows
	// b.ResidualMatcher matches.
	fmt.Println("pushed:  ", b.Pushed)
	fmt.Println("residual:", b.Residual)

	_, err = filter.Parse("id > AND x = 1")
	fmt.Println(err)
	// Output:
	// pushed:   And(left=GreaterThan(term=Reference(name='id'), literal=5), right=And(left=GreaterThanEqual(term=Reference(name='status'), literal=ACT), right=LessThan(term=Reference(name='status'), literal=ACU)))
	// residual: status LIKE 'ACT%E'
	// filter: expected a value after '>', found 'AND' at position 6
	//   id > AND x = 1
	//        ^
}
