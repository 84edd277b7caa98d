package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/partition"
)

func init() {
	helps["table set-partition-spec"] = commandHelp{
		usage: "table set-partition-spec NS.TABLE --partition-fields TRANSFORM,... [flags]",
		about: "Replace a table's partition spec in one metadata commit, as Spark's ALTER TABLE ... REPLACE PARTITION FIELD and a pipeline's " +
			"partition-spec-evolution do, without writing data. Files written before keep their spec until `floe maintain rewrite-data-files` " +
			"rewrites them into the new one. A pipeline that writes the table afterwards must name the same partition-fields; " +
			"a running stream whose partition-fields differ stops at its next commit with exit 2, without committing that batch.",
		examples: []example{
			{"Partition a day-partitioned table by month; `floe maintain rewrite-data-files db.events` then moves its files into the new partitions.",
				"floe table set-partition-spec db.events --partition-fields 'month(ts)'"},
			{"Two fields.", "floe table set-partition-spec db.events --partition-fields 'day(ts),bucket(id, 16)'"},
		},
	}
}

func tableSetPartitionSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table set-partition-spec", stderr)
	var cf catalogFlags
	cf.register(fs)
	var list string
	fs.StringVar(&list, "partition-fields", "", "The new spec's fields, as partition-fields takes them: `TRANSFORM,...` such as 'month(ts)' or 'day(ts),bucket(id, 16)'.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("table set-partition-spec takes one table, e.g. floe table set-partition-spec db.events --partition-fields 'month(ts)'")
	}
	exprs := config.SplitList(list)
	if len(exprs) == 0 {
		return usagef("table set-partition-spec needs --partition-fields, the new spec's fields, e.g. --partition-fields 'month(ts)'")
	}
	fields, err := partition.ParseFields(exprs)
	if err != nil {
		return err
	}
	ident, err := floe.ParseIdent(pos[0])
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return noSuchTable(ctx, cat, cf, ident)
	} else if err != nil {
		return fmt.Errorf("load table %s: %w", pos[0], err)
	}
	// The spec a table would be created with checks the columns, the
	// transforms and repeated fields as creation does.
	if _, err := partition.NewSpec(tbl.Schema(), fields); err != nil {
		return fmt.Errorf("table %s: %w", pos[0], err)
	}
	for i, f := range fields {
		if src, ok := tbl.Schema().FindFieldByNameCaseInsensitive(f.Source); ok {
			fields[i].Source, _ = tbl.Schema().FindColumnName(src.ID)
		}
	}
	old := partition.DescribeSpec(tbl.Spec(), tbl.Schema())
	if partition.SpecMatches(tbl.Spec(), tbl.Schema(), fields) {
		fmt.Fprintf(stdout, "table %s is already partitioned by [%s]; nothing changed\n", pos[0], old)
		return nil
	}
	out, err := commit.EvolveSpec(ctx, cat, tbl, fields)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "table %s partitioned by [%s], was [%s]; files written before keep their spec until `floe maintain rewrite-data-files %s` rewrites them\n",
		pos[0], partition.DescribeSpec(out.Spec(), out.Schema()), old, pos[0])
	return nil
}
