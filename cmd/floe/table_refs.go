package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/commit"
)

func init() {
	for name, h := range map[string]commandHelp{
		"refs": {usage: "table refs NS.TABLE [--json] [flags]",
			about:    "Print a table's branches and tags: name, type and the snapshot each points at.",
			examples: []example{{"The refs of db.events.", "floe table refs db.events"}}},
		"create-branch": {usage: "table create-branch NS.TABLE NAME [--snapshot ID] [flags]",
			about:    "Make a branch at the current snapshot, or at --snapshot. A stream can then write to it (write-audit-publish) and `table fast-forward` publish it.",
			examples: []example{{"A branch for audited writes.", "floe table create-branch db.events audit"}}},
		"create-tag": {usage: "table create-tag NS.TABLE NAME [--snapshot ID] [flags]",
			about:    "Make a tag: a name for the current snapshot, or for --snapshot, that time travel reads with --tag.",
			examples: []example{{"Name today's state.", "floe table create-tag db.events eod-2026-12-03"}}},
		"rollback": {usage: "table rollback NS.TABLE SNAPSHOT_ID [--branch NAME] [flags]",
			about:    "Point the main branch (or --branch) back at one of its ancestors, as Spark's rollback_to_snapshot: the snapshots after it stay in the table's history until expired.",
			examples: []example{{"Undo the last batches of a misbehaving stream.", "floe table rollback db.events 5388940297406819296"}}},
		"set-current": {usage: "table set-current NS.TABLE SNAPSHOT_ID [--branch NAME] [flags]",
			about:    "Point the main branch (or --branch) at any snapshot of the table, ancestor or not, as Spark's set_current_snapshot.",
			examples: []example{{"Return to a snapshot after a rollback.", "floe table set-current db.events 7215448690871290124"}}},
		"fast-forward": {usage: "table fast-forward NS.TABLE BRANCH FROM [flags]",
			about:    "Move BRANCH to FROM's snapshot when BRANCH's is one of its ancestors, as Spark's fast_forward: publishes what was written to an audit branch.",
			examples: []example{{"Publish the audited writes.", "floe table fast-forward db.events main audit"}}},
		"cherrypick": {usage: "table cherrypick NS.TABLE SNAPSHOT_ID [flags]",
			about:    "Commit to the main branch the data files an append snapshot added (from another branch, or one a rollback left out), as Spark's cherrypick_snapshot; the new snapshot's summary names it in source-snapshot-id.",
			examples: []example{{"Bring back one batch.", "floe table cherrypick db.events 7215448690871290124"}}},
	} {
		helps["table "+name] = h
	}
}

// refArgs parses a ref command: its table (in the catalog) and want more
// positional arguments, with --snapshot and --branch where asked for.
type refArgs struct {
	cat      catalog.Catalog
	tbl      *table.Table
	name     string // NS.TABLE as given
	pos      []string
	snapshot int64
	branch   string
	asJSON   bool
}

func parseRefArgs(ctx context.Context, sub string, args []string, stderr io.Writer, want int, usage string, flags ...string) (*refArgs, error) {
	fs := newFlagSet("table "+sub, stderr)
	var cf catalogFlags
	cf.register(fs)
	var r refArgs
	for _, f := range flags {
		switch f {
		case "snapshot":
			fs.Int64Var(&r.snapshot, "snapshot", 0, "The snapshot `ID` to point at; the current one by default.")
		case "branch":
			fs.StringVar(&r.branch, "branch", table.MainBranch, "The branch to move, as `NAME`.")
		case "json":
			fs.BoolVar(&r.asJSON, "json", false, "Print JSON.")
		}
	}
	pos, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	if len(pos) != want+1 {
		return nil, usagef("table %s takes %s", sub, usage)
	}
	ident, err := floe.ParseIdent(pos[0])
	if err != nil {
		return nil, err
	}
	if r.cat, err = openCatalog(ctx, cf); err != nil {
		return nil, err
	}
	if r.tbl, err = r.cat.LoadTable(ctx, ident); errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, noSuchTable(ctx, r.cat, cf, ident)
	} else if err != nil {
		return nil, fmt.Errorf("load table %s: %w", pos[0], err)
	}
	r.name, r.pos = pos[0], pos[1:]
	return &r, nil
}

// snapshotArg reads a snapshot id argument.
func snapshotArg(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, usagef("%q is not a snapshot id; floe table snapshots lists them", s)
	}
	return id, nil
}

// refErr makes a refusal of the table's state a configuration error
// (exit 2): the command asked for what cannot be.
func refErr(err error) error {
	if errors.Is(err, commit.ErrRef) {
		return fmt.Errorf("%w: %v", floe.ErrConfig, err)
	}
	return err
}

func tableRefs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	r, err := parseRefArgs(ctx, "refs", args, stderr, 0, "one table, e.g. floe table refs db.events", "json")
	if err != nil {
		return err
	}
	type refJSON struct {
		Name       string `json:"name"`
		Type       string `json:"type"`
		SnapshotID int64  `json:"snapshot_id"`
	}
	refs := maps.Collect(r.tbl.Metadata().Refs())
	var out []refJSON
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		out = append(out, refJSON{name, string(refs[name].SnapshotRefType), refs[name].SnapshotID})
	}
	if r.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if out == nil {
			out = []refJSON{}
		}
		return enc.Encode(out)
	}
	for _, ref := range out {
		fmt.Fprintf(stdout, "%-20s %-7s %d\n", ref.Name, ref.Type, ref.SnapshotID)
	}
	return nil
}

func tableCreateRef(typ table.RefType) func(context.Context, []string, io.Writer, io.Writer) error {
	sub := "create-" + string(typ)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		r, err := parseRefArgs(ctx, sub, args, stderr, 1, "a table and a name, e.g. floe table "+sub+" db.events audit", "snapshot")
		if err != nil {
			return err
		}
		tbl, err := commit.CreateRef(ctx, r.cat, r.tbl, r.pos[0], typ, r.snapshot)
		if err != nil {
			return refErr(err)
		}
		ref, _ := commit.Ref(tbl, r.pos[0])
		fmt.Fprintf(stdout, "%s %s of %s at snapshot %d\n", typ, r.pos[0], r.name, ref.SnapshotID)
		return nil
	}
}

func tableMoveBranch(sub string, move func(context.Context, catalog.Catalog, *table.Table, string, int64) (*table.Table, error)) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		r, err := parseRefArgs(ctx, sub, args, stderr, 1, "a table and a snapshot id, e.g. floe table "+sub+" db.events 5388940297406819296", "branch")
		if err != nil {
			return err
		}
		id, err := snapshotArg(r.pos[0])
		if err != nil {
			return err
		}
		if _, err := move(ctx, r.cat, r.tbl, r.branch, id); err != nil {
			return refErr(err)
		}
		fmt.Fprintf(stdout, "branch %s of %s at snapshot %d\n", r.branch, r.name, id)
		return nil
	}
}

func tableFastForward(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	r, err := parseRefArgs(ctx, "fast-forward", args, stderr, 2, "a table, the branch to move and the branch to move it to, e.g. floe table fast-forward db.events main audit")
	if err != nil {
		return err
	}
	tbl, err := commit.FastForward(ctx, r.cat, r.tbl, r.pos[0], r.pos[1])
	if err != nil {
		return refErr(err)
	}
	ref, _ := commit.Ref(tbl, r.pos[0])
	fmt.Fprintf(stdout, "branch %s of %s fast-forwarded to %s's snapshot %d\n", r.pos[0], r.name, r.pos[1], ref.SnapshotID)
	return nil
}

func tableCherrypick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	r, err := parseRefArgs(ctx, "cherrypick", args, stderr, 1, "a table and a snapshot id, e.g. floe table cherrypick db.events 7215448690871290124")
	if err != nil {
		return err
	}
	id, err := snapshotArg(r.pos[0])
	if err != nil {
		return err
	}
	tbl, err := commit.Cherrypick(ctx, r.cat, r.tbl, id)
	if err != nil {
		return refErr(err)
	}
	fmt.Fprintf(stdout, "snapshot %d of %s cherry-picked as snapshot %d\n", id, r.name, tbl.CurrentSnapshot().SnapshotID)
	return nil
}
