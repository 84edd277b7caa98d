package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/floe-io/floe/maintenance"
)

func init() {
	maintainCommands[maintenance.TaskConvertEqualityDeletes] = maintainCommand{
		summary: "turn a v3 table's equality deletes into deletion vectors",
		run:     maintainConvertEqualityDeletes,
	}
	helps["maintain convert-equality-deletes"] = commandHelp{
		usage: "maintain convert-equality-deletes NS.TABLE [flags]",
		about: "Find the rows each equality delete of a format v3 table deletes, merge their positions into the data files' " +
			"deletion vectors and remove the equality delete files, in one commit (Flink's ConvertEqualityDeletes): reads " +
			"then skip rows by position instead of matching every row against every key. Format v1 and v2 tables are " +
			"refused; rewrite-data-files --delete-file-threshold 1 applies their equality deletes.",
		examples: []example{
			{"Convert, and print what was done as JSON.", "floe maintain convert-equality-deletes db.users --json"},
		},
	}
}

func maintainConvertEqualityDeletes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cat, ident, asJSON, err := maintainTable(ctx, maintenance.TaskConvertEqualityDeletes, args, stderr, func(*flagSet) {})
	if err != nil {
		return err
	}
	res, err := maintenance.ConvertEqualityDeletes(ctx, cat, ident)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	if res.RemovedEqualityDeleteFiles == 0 {
		fmt.Fprintf(stdout, "no equality deletes to convert in %s", strings.Join(ident, "."))
	} else {
		fmt.Fprintf(stdout, "converted %d equality delete files of %s into deletion vectors for %d data files (%d rows)",
			res.RemovedEqualityDeleteFiles, strings.Join(ident, "."), res.DataFiles, res.DeletedRows)
	}
	if res.KeptEqualityDeleteFiles > 0 {
		fmt.Fprintf(stdout, "; kept %d that apply to files without row lineage (rewrite-data-files --delete-file-threshold 1 applies them)", res.KeptEqualityDeleteFiles)
	}
	fmt.Fprintln(stdout)
	return nil
}
