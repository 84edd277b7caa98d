package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// requireCatalog refuses a local catalog that does not exist. Opening the
// embedded catalog creates the warehouse directory and catalog.db, which
// `run` and `stream` want and a command that only reads does not: there a
// missing catalog is a mistyped --warehouse, to be reported, not filled
// with an empty catalog. Catalogs that are not local files are left to
// the catalog to judge.
func requireCatalog(c config.Catalog) error {
	wh, err := floe.ResolveWarehouse(c.Warehouse)
	if err != nil {
		return nil // OpenCatalog reports it
	}
	// ResolveWarehouse makes local paths absolute and leaves URLs be.
	local := filepath.IsAbs(wh)
	switch c.Type {
	case "", "sql":
		if c.URI == "" {
			if local && !exists(filepath.Join(wh, "catalog.db")) {
				return usagef("no warehouse at %s (no catalog.db); check --warehouse or $%s", wh, floe.WarehouseEnv)
			}
			return nil
		}
		if driver := c.Properties["sql.driver"]; driver != "" && driver != "sqlite" {
			return nil
		}
		path := strings.TrimPrefix(c.URI, "file:")
		if q := strings.IndexByte(path, '?'); q >= 0 {
			path = path[:q]
		}
		if path != "" && path != ":memory:" && !strings.Contains(c.URI, "mode=memory") && !exists(path) {
			return usagef("no catalog database at %s; check --catalog-uri", path)
		}
	case "hadoop":
		if local && !exists(wh) {
			return usagef("no warehouse at %s; check --warehouse or $%s", wh, floe.WarehouseEnv)
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
