package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/serve"
)

func init() {
	helps["table drop"] = commandHelp{
		usage: "table drop NS.TABLE [--purge] [flags]",
		about: "Drop a table from the catalog. Its files stay, and the line printed names the metadata file that " +
			"floe table register brings the table back from. With --purge its files go too: those its metadata names " +
			"(every snapshot's data and delete files, manifests and manifest lists, statistics, the metadata files), " +
			"as Iceberg's own catalogs purge, and only inside the table's own location within the warehouse (or an " +
			"--allow-location-prefix) and no other table's; the directories that leaves empty on a local disk are removed. " +
			"A file no metadata names (one a killed commit left) is kept: floe maintain remove-orphan-files finds those first. " +
			"A REST catalog purges its own tables. Nothing is asked: the command is the confirmation.",
		examples: []example{
			{"Drop db.events from the catalog, keeping its files.", "floe table drop db.events"},
			{"Drop db.events and delete its files.", "floe table drop db.events --purge"},
		},
	}
}

func tableDrop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table drop", stderr)
	var cf catalogFlags
	cf.register(fs)
	purge := fs.Bool("purge", false, "Also delete the files the table's metadata names, inside its own location.")
	var prefixes stringsFlag
	fs.Var(&prefixes, "allow-location-prefix", "With --purge, also delete the table's files under `PREFIX` (repeatable), e.g. s3://lake/tables; by default only inside the warehouse.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("table drop takes one table name, e.g. floe table drop db.events [--purge]")
	}
	name := pos[0]
	if catalogs.IsTablePath(name) {
		return usagef("table drop takes a table of the catalog, NS.TABLE, not %s: a table read by its location is in no catalog to drop it from", name)
	}
	ident, err := floe.ParseIdent(name)
	if err != nil {
		return err
	}
	cfg, err := cf.config()
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return err
	}
	defer func() {
		if cl, ok := cat.(catalog.Closer); ok {
			_ = cl.Close()
		}
	}()
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		wh, _ := floe.ResolveWarehouse(cfg.Warehouse)
		return usagef("table %s does not exist in the catalog of warehouse %s, so nothing was dropped; `floe table list` shows the tables there (use --warehouse to pick another)", name, wh)
	}
	if err != nil {
		return fmt.Errorf("load table %s: %w", name, err)
	}

	if !*purge {
		if err := cat.DropTable(ctx, ident); err != nil {
			return fmt.Errorf("drop table %s: %w", name, err)
		}
		fmt.Fprintf(stdout, "dropped %s from the catalog; its files remain at %s (floe table register %s %s brings it back)\n",
			name, tbl.Location(), name, tbl.MetadataLocation())
		return nil
	}
	// The purge is floe serve's, so that the command and the server delete
	// the same files of a table and spare the same others.
	srv, err := serve.New(serve.Config{
		Catalog:                 cat,
		Warehouse:               catalogs.Warehouse(cfg),
		AllowedLocationPrefixes: prefixes,
		Properties:              cfg.Properties,
		Log:                     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return fmt.Errorf("%w: %v", floe.ErrConfig, err)
	}
	res, err := srv.Purge(ctx, ident)
	if errors.Is(err, serve.ErrUnreadableMetadata) {
		return fmt.Errorf("table %s was not dropped: %w; drop it without --purge and delete its files yourself", name, err)
	}
	if err != nil {
		return fmt.Errorf("purge table %s: %w", name, err)
	}
	if res.ByCatalog {
		fmt.Fprintf(stdout, "dropped %s; its REST catalog purges its files\n", name)
		return nil
	}
	removeEmptyDirs(res.Location)
	fmt.Fprintf(stdout, "dropped %s and deleted %d files its metadata named under %s", name, res.Deleted, res.Location)
	if res.Kept > 0 {
		fmt.Fprintf(stdout, "; kept %d outside its location within the warehouse, inside another table's, or data files under gc.enabled=false", res.Kept)
	}
	fmt.Fprintln(stdout)
	if res.Failed > 0 {
		return fmt.Errorf("table %s was dropped but %d of its files could not be deleted; floe maintain remove-orphan-files cannot find them now that no table names them: delete what is left under %s yourself", name, res.Failed, res.Location)
	}
	return nil
}

// removeEmptyDirs removes the directories under a local table location,
// and the location itself, that a purge left empty; a directory that
// still holds a file stays, and so does every object store's location,
// which has no directories.
func removeEmptyDirs(location string) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "" && u.Scheme != "file") || !filepath.IsAbs(u.Path) {
		return
	}
	var dirs []string
	_ = filepath.WalkDir(u.Path, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	// Deepest first: a parent empties only once its children are gone.
	for _, d := range slices.Backward(dirs) {
		_ = os.Remove(d)
	}
}
