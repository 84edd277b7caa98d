// Command mkparquet writes one small Parquet file (id long, v string) with
// ids [first, first+n), the input of bench/callpath/trace.sh.
//
//	go run ./bench/callpath/mkparquet PATH FIRST N
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/floe-io/floe/internal/fixture"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mkparquet PATH FIRST N")
		os.Exit(2)
	}
	first, err1 := strconv.ParseInt(os.Args[2], 10, 64)
	n, err2 := strconv.ParseInt(os.Args[3], 10, 64)
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "mkparquet: FIRST and N must be integers")
		os.Exit(2)
	}
	if err := fixture.WriteIDFile(os.Args[1], first, n); err != nil {
		fmt.Fprintln(os.Stderr, "mkparquet:", err)
		os.Exit(1)
	}
}
