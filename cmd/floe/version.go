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

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", stderr)
	var cf catalogFlags
	cf.register(fs) // accepted like everywhere
	if _, err := parseInterleaved(fs, args); err != nil {
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
