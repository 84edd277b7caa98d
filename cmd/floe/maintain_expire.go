package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands["expire-snapshots"] = maintainCommand{
		summary: "remove old snapshots and the files only they use",
		run:     maintainExpire,
	}
	helps["maintain expire-snapshots"] = commandHelp{
		usage: "maintain expire-snapshots NS.TABLE [flags]",
		about: "Expire a table's snapshots older than --older-than, keeping the newest --retain-last of every branch, " +
			"the snapshots tags and branches point at, the newest snapshot of every floe query writing the table " +
			"(its restart needs it) and every snapshot a floe query reading the table has not read yet (its floe-reader-ID tag); " +
			"remove branches and tags past their max-ref-age-ms; then delete the files no snapshot left uses, unless gc.enabled is false.",
		examples: []example{
			{"What the defaults would expire, changing nothing.", "floe maintain expire-snapshots db.events --dry-run"},
			{"Keep a day of history, at least ten snapshots; print JSON.", "floe maintain expire-snapshots db.events --older-than 1d --retain-last 10 --json"},
		},
	}
}

type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func maintainExpire(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("maintain expire-snapshots", stderr)
	var cf catalogFlags
	cf.register(fs)
	opts := maintenance.NewExpireOptions()
	fs.Var(durationFlag{&opts.OlderThan}, "older-than", "Expire only snapshots older than this (7d, 12h); the default is that of Iceberg's history.expire.max-snapshot-age-ms.")
	fs.IntVar(&opts.RetainLast, "retain-last", opts.RetainLast, "Keep the newest `N` snapshots of every branch whatever their age.")
	var release stringsFlag
	fs.Var(&release, "release-query", "A floe query `ID` whose checkpoint is gone: stop protecting its newest snapshot, or, for a query reading the table, remove its tag (repeatable).")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "Report what would be expired and deleted, changing nothing.")
	asJSON := fs.Bool("json", false, "Print the result as JSON.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("maintain expire-snapshots takes one table, e.g. floe maintain expire-snapshots db.events")
	}
	opts.ReleaseQueries = release
	if err := opts.Validate(); err != nil {
		return usagef("%v", err)
	}
	ident, err := floe.ParseIdent(pos[0])
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return err
	}
	if err := requireTable(ctx, cat, cf, ident); err != nil {
		return err
	}
	res, err := maintenance.ExpireSnapshots(ctx, cat, ident, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	verb, del := "expired", "deleted"
	if res.DryRun {
		verb, del = "would expire", "would delete"
	}
	fmt.Fprintf(stdout, "%s: %s %s older than %s, kept %d\n", res.Table, verb, plural(res.ExpiredCount, "snapshot"), time.UnixMilli(res.CutoffMs).UTC().Format(time.RFC3339), res.KeptCount)
	for _, k := range res.Kept {
		fmt.Fprintf(stdout, "  kept %d  %s  %s\n", k.SnapshotID, msTime(k.TimestampMs), strings.Join(k.Reasons, "; "))
	}
	if len(res.ExpiredRefs) > 0 {
		verb := "removed"
		if res.DryRun {
			verb = "would remove"
		}
		fmt.Fprintf(stdout, "  %s refs %s (past their max-ref-age-ms, or tags of released queries)\n", verb, strings.Join(res.ExpiredRefs, ", "))
	}
	if res.FilesKeptGCDisabled {
		del = "left in place (gc.enabled=false)"
	}
	f := res.Files
	for _, k := range []struct {
		name string
		d    maintenance.DeletedFiles
	}{{"manifest lists", f.ManifestLists}, {"manifests", f.Manifests}, {"data files", f.DataFiles}, {"delete files", f.DeleteFiles}, {"statistics files", f.StatisticsFiles}} {
		fmt.Fprintf(stdout, "  %s %d %s (%d bytes)\n", del, k.d.Count, k.name, k.d.Bytes)
	}
	return nil
}
