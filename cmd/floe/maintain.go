package main

import (
	"context"
	"io"
	"maps"
	"slices"
	"strings"
)

// maintainCommand is one `floe maintain` subcommand; each lives in its own
// maintain_*.go file and registers itself.
type maintainCommand struct {
	usage string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var maintainCommands = map[string]maintainCommand{}

func cmdMaintain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || maintainCommands[args[0]].run == nil {
		names := slices.Sorted(maps.Keys(maintainCommands))
		return usagef("maintain needs a subcommand: %s (each with --json; see floe maintain SUBCOMMAND --help)", strings.Join(names, ", "))
	}
	return maintainCommands[args[0]].run(ctx, args[1:], stdout, stderr)
}
