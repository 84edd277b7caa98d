package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands["remove-orphan-files"] = maintainCommand{
		usage: "maintain remove-orphan-files NS.TABLE [--older-than 3d] [--location DIR] [--dry-run] [--json]",
		run:   maintainOrphans,
	}
	examples["maintain remove-orphan-files"] = []string{
		"floe maintain remove-orphan-files db.events --dry-run",
		"floe maintain remove-orphan-files db.events --older-than 1d --json",
	}
}

func maintainOrphans(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("maintain remove-orphan-files", maintainCommands["remove-orphan-files"].usage, stderr)
	var cf catalogFlags
	cf.register(fs)
	opts := maintenance.NewOrphanOptions()
	fs.Var(durationFlag{&opts.OlderThan}, "older-than", "remove only files last modified longer ago than this; younger ones may belong to a commit in flight")
	fs.StringVar(&opts.Location, "location", "", "directory to list (default the table's location)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "list the orphan files, delete nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterleaved(fs, args)
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
	return nil
}
