package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands["rewrite-data-files"] = maintainCommand{
		summary: "compact small data files (binpack) or sort them",
		run:     maintainRewriteData,
	}
	helps["maintain rewrite-data-files"] = commandHelp{
		usage: "maintain rewrite-data-files NS.TABLE [flags]",
		about: "Rewrite a table's small data files, partition by partition, into files of the target size (binpack), " +
			"or with each partition's rows in order (sort); the rows stay the same. Files from 75% to 180% of the " +
			"target are left alone, and a partition needs --min-input-files small files to be worth it. Files with " +
			"many rows deleted (--delete-ratio-threshold, --delete-file-threshold) are rewritten whatever their size, " +
			"with their deletes applied; deletes committed while the rewrite runs are kept (docs/maintenance.md).",
		examples: []example{
			{"What would be rewritten, changing nothing.", "floe maintain rewrite-data-files db.events --dry-run"},
			{"Compact only this year's partitions.", "floe maintain rewrite-data-files db.events --filter \"ts >= TIMESTAMP '2026-01-01 00:00:00'\""},
			{"Sort each partition by id, committing partition by partition.", "floe maintain rewrite-data-files db.events --strategy sort --sort-by id --partial-progress"},
			{"Apply every delete of an upsert table: no delete file is left.", "floe maintain rewrite-data-files db.users --rewrite-all"},
		},
	}
	maintainCommands["rewrite-manifests"] = maintainCommand{
		summary: "merge small manifests",
		run:     maintainRewriteManifests,
	}
	helps["maintain rewrite-manifests"] = commandHelp{
		usage: "maintain rewrite-manifests NS.TABLE [flags]",
		about: "Merge a table's manifests (each append adds one) into manifests of the target size, so that planning " +
			"a scan reads a few files instead of hundreds.",
		examples: []example{
			{"Merge to the table's target size.", "floe maintain rewrite-manifests db.events"},
			{"Merge to 4 MiB manifests; print JSON.", "floe maintain rewrite-manifests db.events --target-size-bytes 4194304 --json"},
		},
	}
}

// testMaintainCatalog is set only in binaries built with the floetest
// tag: it wraps the catalog maintenance commits through, so that a test
// can step in while a commit is in flight.
var testMaintainCatalog func(catalog.Catalog) catalog.Catalog

// maintainTable parses a maintain subcommand's flags and opens the one
// table it names, by catalog name (maintenance commits through the
// catalog).
func maintainTable(ctx context.Context, sub string, args []string, stderr io.Writer, flags func(*flagSet)) (catalog.Catalog, table.Identifier, bool, error) {
	fs := newFlagSet("maintain "+sub, stderr)
	var cf catalogFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "Print the result as JSON.")
	flags(fs)
	pos, err := fs.parse(args)
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
	if err := requireTable(ctx, cat, cf, ident); err != nil {
		return nil, nil, false, err
	}
	if testMaintainCatalog != nil {
		cat = testMaintainCatalog(cat)
	}
	return cat, ident, *asJSON, nil
}

func maintainRewriteData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o maintenance.RewriteOptions
	var sortBy string
	cat, ident, asJSON, err := maintainTable(ctx, "rewrite-data-files", args, stderr, func(fs *flagSet) {
		fs.Int64Var(&o.TargetFileSize, "target-file-size-bytes", 0, "Size to write files at, in `BYTES`; files from 75% to 180% of it are left alone. Default: the table's write.target-file-size-bytes, else 512 MiB.")
		fs.IntVar(&o.MinInputFiles, "min-input-files", 5, "Rewrite a partition only when it has at least `N` small files.")
		fs.StringVar(&o.Where, "filter", "", "Only rewrite files that may hold rows matching this `FILTER`, e.g. \"ts >= TIMESTAMP '2024-01-01 00:00:00'\" (syntax in docs/reads.md).")
		fs.StringVar(&o.Strategy, "strategy", maintenance.StrategyBinpack, "How to rewrite, a `STRATEGY`: binpack (concatenate small files) or sort (order each partition's rows by --sort-by).")
		fs.values("strategy", maintenance.StrategyBinpack, maintenance.StrategySort)
		fs.StringVar(&sortBy, "sort-by", "", "With --strategy sort: the comma-separated `COLUMNS` to order rows by.")
		fs.IntVar(&o.DeleteFileThreshold, "delete-file-threshold", 0, "Also rewrite every data file that at least `N` delete files apply to, whatever its size and --min-input-files (0: off, Iceberg's default).")
		fs.Float64Var(&o.DeleteRatioThreshold, "delete-ratio-threshold", maintenance.DefaultDeleteRatioThreshold, "Also rewrite every data file with at least this `FRACTION` of its rows deleted by deletion vectors or position deletes, whatever its size and --min-input-files.")
		fs.BoolVar(&o.RewriteAll, "rewrite-all", false, "Rewrite every data file (that --filter selects), whatever its size and deletes; afterwards no delete file applies to them.")
		fs.BoolVar(&o.PartialProgress, "partial-progress", false, "Commit each partition's rewrite on its own, so that one failing group keeps the others.")
		fs.BoolVar(&o.DryRun, "dry-run", false, "Print what would be rewritten, changing nothing.")
		fs.alias("where", "filter", "--filter", nil)
	})
	if err != nil {
		return err
	}
	o.SortBy = config.SplitList(sortBy)
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
		fmt.Fprintf(stdout, "nothing to rewrite in %s (%s already of a good size)\n", strings.Join(ident, "."), plural(res.SkippedFiles, "file"))
	case res.Groups == 0:
		fmt.Fprintf(stdout, "nothing to rewrite in %s\n", strings.Join(ident, "."))
	case res.DryRun:
		fmt.Fprintf(stdout, "%s %s (%s) in %s\n", verb, plural(res.RewrittenDataFiles, "data file"), maintenance.Bytes(res.RewrittenBytes), plural(res.Groups, "group"))
	default:
		fmt.Fprintf(stdout, "%s %s (%s) into %d (%s) in %s, %s; removed %s\n",
			verb, plural(res.RewrittenDataFiles, "data file"), maintenance.Bytes(res.RewrittenBytes), res.AddedDataFiles, maintenance.Bytes(res.AddedBytes),
			plural(res.Groups, "group"), plural(len(res.Snapshots), "snapshot"), plural(res.RemovedDeleteFiles, "delete file"))
		if res.CarriedDeletes > 0 {
			fmt.Fprintf(stdout, "carried over %s deleted while the rewrite ran\n", plural(res.CarriedDeletes, "row"))
		}
		if res.FailedGroups > 0 {
			fmt.Fprintf(stdout, "%s failed; the files of failed groups were left as they were\n", plural(res.FailedGroups, "group"))
		}
	}
	return nil
}

func maintainRewriteManifests(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var target int64
	cat, ident, asJSON, err := maintainTable(ctx, "rewrite-manifests", args, stderr, func(fs *flagSet) {
		fs.Int64Var(&target, "target-size-bytes", 0, "Manifest size to merge to, in `BYTES`. Default: the table's commit.manifest.target-size-bytes, else 8 MiB.")
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
