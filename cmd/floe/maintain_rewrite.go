package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands["rewrite-data-files"] = maintainCommand{
		usage: "rewrite-data-files NS.TABLE [--target-file-size-bytes N] [--min-input-files 5] [--where FILTER] [--strategy binpack|sort --sort-by COLS] [--partial-progress] [--dry-run] [--json]",
		run:   maintainRewriteData,
	}
	maintainCommands["rewrite-manifests"] = maintainCommand{
		usage: "rewrite-manifests NS.TABLE [--target-size-bytes N] [--json]",
		run:   maintainRewriteManifests,
	}
}

// maintainTable parses a maintain subcommand's flags and opens the one
// table it names, by catalog name (maintenance commits through the
// catalog).
func maintainTable(ctx context.Context, sub string, args []string, stderr io.Writer, flags func(*flag.FlagSet)) (catalog.Catalog, table.Identifier, bool, error) {
	fs := newFlagSet("maintain "+sub, "maintain "+maintainCommands[sub].usage, stderr)
	var cf catalogFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	flags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, false, err
	}
	if len(pos) != 1 {
		return nil, nil, false, usagef("maintain %s takes one table, e.g. floe maintain %s db.events", sub, sub)
	}
	ident, err := floe.ParseIdent(pos[0])
	if err != nil {
		return nil, nil, false, usagef("maintain %s: %v", sub, err)
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return nil, nil, false, err
	}
	return cat, ident, *asJSON, nil
}

func maintainRewriteData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o maintenance.RewriteOptions
	var sortBy string
	cat, ident, asJSON, err := maintainTable(ctx, "rewrite-data-files", args, stderr, func(fs *flag.FlagSet) {
		fs.Int64Var(&o.TargetFileSize, "target-file-size-bytes", 0, "size to write files at (default: the table's write.target-file-size-bytes, else 512 MiB); files from 75% to 180% of it are left alone")
		fs.IntVar(&o.MinInputFiles, "min-input-files", 5, "fewest small files in a partition worth rewriting together")
		fs.StringVar(&o.Where, "where", "", "only rewrite files that may hold rows matching this filter, e.g. \"ts >= TIMESTAMP '2024-01-01 00:00:00'\"")
		fs.StringVar(&o.Strategy, "strategy", maintenance.StrategyBinpack, "binpack (concatenate small files) or sort (order each partition's rows by --sort-by)")
		fs.StringVar(&sortBy, "sort-by", "", "with --strategy sort: comma-separated columns to order rows by")
		fs.BoolVar(&o.PartialProgress, "partial-progress", false, "commit each partition's rewrite on its own, so that one failing group keeps the others")
		fs.BoolVar(&o.DryRun, "dry-run", false, "print what would be rewritten, changing nothing")
	})
	if err != nil {
		return err
	}
	o.SortBy = splitList(sortBy)
	res, err := maintenance.RewriteDataFiles(ctx, cat, ident, o)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	verb := "rewrote"
	if res.DryRun {
		verb = "would rewrite"
	}
	switch {
	case res.Groups == 0 && res.SkippedFiles > 0:
		fmt.Fprintf(stdout, "nothing to rewrite in %s (%d files already of a good size)\n", strings.Join(ident, "."), res.SkippedFiles)
	case res.Groups == 0:
		fmt.Fprintf(stdout, "nothing to rewrite in %s\n", strings.Join(ident, "."))
	case res.DryRun:
		fmt.Fprintf(stdout, "%s %d data files (%s) in %d groups\n", verb, res.RewrittenDataFiles, maintenance.Bytes(res.RewrittenBytes), res.Groups)
	default:
		fmt.Fprintf(stdout, "%s %d data files (%s) into %d (%s) in %d groups, %d snapshots; removed %d delete files\n",
			verb, res.RewrittenDataFiles, maintenance.Bytes(res.RewrittenBytes), res.AddedDataFiles, maintenance.Bytes(res.AddedBytes), res.Groups, len(res.Snapshots), res.RemovedDeleteFiles)
		if res.FailedGroups > 0 {
			fmt.Fprintf(stdout, "%d groups failed and were left as they were\n", res.FailedGroups)
		}
	}
	return nil
}

func maintainRewriteManifests(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var target int64
	cat, ident, asJSON, err := maintainTable(ctx, "rewrite-manifests", args, stderr, func(fs *flag.FlagSet) {
		fs.Int64Var(&target, "target-size-bytes", 0, "manifest size to merge to (default: the table's commit.manifest.target-size-bytes, else 8 MiB)")
	})
	if err != nil {
		return err
	}
	res, err := maintenance.RewriteManifests(ctx, cat, ident, target)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	if res.AlreadyOptimal {
		fmt.Fprintf(stdout, "manifests of %s need no rewrite (%d)\n", strings.Join(ident, "."), res.ManifestsAfter)
		return nil
	}
	fmt.Fprintf(stdout, "rewrote %d manifests into %d; %d manifests now (%d before)\n", res.RewrittenManifests, res.AddedManifests, res.ManifestsAfter, res.ManifestsBefore)
	return nil
}
