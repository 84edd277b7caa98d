package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands["remove-orphan-files"] = maintainCommand{
		summary: "delete files under the table that no snapshot references",
		run:     maintainOrphans,
	}
	helps["maintain remove-orphan-files"] = commandHelp{
		usage: "maintain remove-orphan-files NS.TABLE|TABLE_DIR [flags]",
		about: "Delete the files under a table's location that no snapshot or metadata file references, such as " +
			"those a killed writer left, when they are older than --older-than: younger ones may belong to a commit in flight. " +
			"--older-than below 1h is refused unless --writers-stopped says no writer is running. Files of floe batches the " +
			"table has not committed yet, and every file younger than them, are always kept.",
		examples: []example{
			{"List the orphans, deleting nothing.", "floe maintain remove-orphan-files db.events --dry-run"},
			{"Delete orphans older than a day; print JSON.", "floe maintain remove-orphan-files db.events --older-than 1d --json"},
			{"Delete every orphan, every writer of the table being stopped.", "floe maintain remove-orphan-files db.events --older-than 0s --writers-stopped"},
		},
	}
}

func maintainOrphans(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("maintain remove-orphan-files", stderr)
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	opts := maintenance.NewOrphanOptions()
	fs.Var(durationFlag{&opts.OlderThan}, "older-than", "Remove only files last modified longer ago than this (3d, 12h); younger ones may belong to a commit in flight.")
	fs.StringVar(&opts.Location, "location", "", "The `DIR` to list. Default: the table's location.")
	fs.BoolVar(&opts.WritersStopped, "writers-stopped", false, "No writer of the table is running: allow --older-than below "+config.Duration(maintenance.MinOrphanOlderThan).String()+".")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "List the orphan files, deleting nothing.")
	asJSON := fs.Bool("json", false, "Print the result as JSON.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("maintain remove-orphan-files takes one table, e.g. floe maintain remove-orphan-files db.events")
	}
	if err := opts.Validate(); err != nil {
		return usagef("%v", err)
	}
	tbl, err := loadTable(ctx, cf, pos[0])
	if err != nil {
		return err
	}
	res, err := maintenance.RemoveOrphanFiles(ctx, tbl, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	verb := "removed"
	if res.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "%s: %s %d orphan files (%d bytes) older than %s under %s\n", res.Table, verb, res.Count, res.Bytes,
		time.UnixMilli(res.CutoffMs).UTC().Format(time.RFC3339), res.Location)
	for _, p := range res.Paths {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	if len(res.InFlight) > 0 {
		fmt.Fprintf(stdout, "kept %d data files of floe batches the table has not committed (in flight, or left by a writer that died) and every file younger than them:\n", len(res.InFlight))
		for _, p := range res.InFlight {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	return nil
}
