package main

import (
	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
)

// requireCatalog refuses a local catalog that does not exist: a command
// that only reads would otherwise create an empty one at a mistyped
// --warehouse instead of reporting it.
func requireCatalog(c config.Catalog) error {
	what, flag, missing := catalogs.Missing(c)
	if !missing {
		return nil
	}
	if flag == "--warehouse" {
		return usagef("no %s; check --warehouse or $%s", what, floe.WarehouseEnv)
	}
	return usagef("no %s; check %s", what, flag)
}
