// Command floe-configdoc prints the pipeline configuration reference that
// docs/config.md holds. The reference is generated from package config's
// field table so that the docs cannot drift from what floe accepts; a test
// in package config fails when docs/config.md is stale.
//
// Usage:
//
//	go run ./cmd/floe-configdoc > docs/config.md
package main

import (
	"fmt"
	"os"

	"github.com/floe-io/floe/config"
)

func main() {
	if _, err := fmt.Print(config.Reference()); err != nil {
		fmt.Fprintln(os.Stderr, "floe-configdoc:", err)
		os.Exit(1)
	}
}
