package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/catalogs"
)

func init() {
	helps["table register"] = commandHelp{
		usage: "table register NS.TABLE (METADATA_FILE | TABLE_DIR) [flags]",
		about: "Add a table to the catalog by an existing metadata file, as Spark's register_table procedure does: " +
			"nothing is copied or rewritten. It brings back a table a catalog lost (a deleted catalog.db, a dropped " +
			"catalog entry whose files remain). Give the metadata file, or the table's directory (the one holding " +
			"metadata/), which stands for the newest metadata file in its metadata directory. " +
			"A name the catalog already has is refused.",
		examples: []example{
			{"Bring back db.events after catalog.db was lost, by its directory.", "floe table register db.events warehouse/db.db/events"},
			{"The same, by a metadata file.", "floe table register db.events warehouse/db.db/events/metadata/00012-3f1c….metadata.json"},
		},
	}
}

func tableRegister(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table register", stderr)
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("table register takes a table name and a metadata file or table directory (its newest metadata file), e.g. floe table register db.events warehouse/db.db/events")
	}
	ident, err := floe.ParseIdent(pos[0])
	if err != nil {
		return err
	}
	cfg, err := cf.config()
	if err != nil {
		return err
	}
	// Read the file first: a catalog must never point at something that is
	// not table metadata.
	tbl, err := catalogs.LoadTableAt(ctx, pos[1], iceberg.Properties(cfg.Properties), cf.prefixes)
	if err != nil {
		return fmt.Errorf("%w: %s is not a readable table metadata file, nor a table directory holding one: %v", floe.ErrConfig, pos[1], err)
	}
	loc := tbl.MetadataLocation()
	if !strings.Contains(loc, "://") {
		abs, err := filepath.Abs(loc)
		if err != nil {
			return err
		}
		loc = "file://" + abs
	}
	if _, err := catalogs.Register(ctx, cfg, ident, loc); err != nil {
		return err
	}
	snap := "no snapshot"
	if s := tbl.CurrentSnapshot(); s != nil {
		snap = fmt.Sprintf("snapshot %d", s.SnapshotID)
	}
	fmt.Fprintf(stdout, "registered %s at %s (%s)\n", pos[0], loc, snap)
	return nil
}
