package main

import (
	"context"
	"io"
)

// maintainCommand is one `floe maintain` subcommand; each lives in its own
// maintain_*.go file and registers itself.
type maintainCommand struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var maintainCommands = map[string]maintainCommand{}

// maintainOrder is the order `floe maintain --help` lists the subcommands
// in: the order a table usually needs them.
var maintainOrder = []string{"expire-snapshots", "rewrite-data-files", "convert-equality-deletes", "rewrite-manifests", "remove-orphan-files"}

func maintainSubcommands() []subcommand {
	var subs []subcommand
	for _, name := range maintainOrder {
		c := maintainCommands[name]
		subs = append(subs, subcommand{name, c.summary, c.run})
	}
	return subs
}
