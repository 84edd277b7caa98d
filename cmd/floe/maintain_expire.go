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
		usage: "maintain expire-snapshots NS.TABLE [--older-than 5d] [--retain-last N] [--release-query ID] [--dry-run] [--json]",
		run:   maintainExpire,
	}
	examples["maintain expire-snapshots"] = []string{
		"floe maintain expire-snapshots db.events --dry-run",
		"floe maintain expire-snapshots db.events --older-than 1d --retain-last 10 --json",
	}
}

type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func maintainExpire(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("maintain expire-snapshots", maintainCommands["expire-snapshots"].usage, stderr)
	var cf catalogFlags
	cf.register(fs)
	opts := maintenance.NewExpireOptions()
	fs.Var(durationFlag{&opts.OlderThan}, "older-than", "expire only snapshots older than this (Iceberg's history.expire.max-snapshot-age-ms default)")
	fs.IntVar(&opts.RetainLast, "retain-last", opts.RetainLast, "keep the newest N snapshots of every branch whatever their age")
	var release stringsFlag
	fs.Var(&release, "release-query", "a floe query id whose checkpoint is gone: stop protecting its newest snapshot (repeatable)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "report what would be expired and deleted, change nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterleaved(fs, args)
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
	fmt.Fprintf(stdout, "%s: %s %d snapshots older than %s, kept %d\n", res.Table, verb, res.ExpiredCount, time.UnixMilli(res.CutoffMs).UTC().Format(time.RFC3339), res.KeptCount)
	for _, k := range res.Kept {
		fmt.Fprintf(stdout, "  kept %d  %s  %s\n", k.SnapshotID, msTime(k.TimestampMs), strings.Join(k.Reasons, "; "))
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
