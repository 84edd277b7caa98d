package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at release build time with -ldflags "-X main.version=...".
var version = "dev"

func init() {
	helps["version"] = commandHelp{
		usage: "version",
		about: "Print floe's version, the iceberg-go version it was built with, and Go's.",
		examples: []example{
			{"The versions, e.g. for a bug report.", "floe version"},
		},
	}
}

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	// The catalog flags are accepted, unlisted, for scripts that pass them
	// to every command.
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	fs.hide(catalogFlagNames()...)
	if _, err := fs.parse(args); err != nil {
		return err
	}
	iceberg := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/apache/iceberg-go" {
				iceberg = d.Version
			}
		}
	}
	fmt.Fprintf(stdout, "floe %s (iceberg-go %s, %s)\n", version, iceberg, runtime.Version())
	return nil
}
