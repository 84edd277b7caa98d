package floe

import (
	"context"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/ingest"
)

// WarehouseEnv overrides the default warehouse directory.
const WarehouseEnv = catalogs.WarehouseEnv

// ResolveWarehouse applies floe's precedence: an explicit value, then
// $FLOE_WAREHOUSE, then ./warehouse. Local paths are made absolute, since
// table locations recorded in the catalog must not depend on the working
// directory.
func ResolveWarehouse(explicit string) (string, error) { return catalogs.ResolveWarehouse(explicit) }

// OpenCatalog opens the configured catalog. The embedded default is an
// SQLite catalog at <warehouse>/catalog.db with tables under <warehouse>,
// in the standard JDBC catalog schema, so other engines can open it.
func OpenCatalog(ctx context.Context, c config.Catalog) (catalog.Catalog, error) {
	return catalogs.Open(ctx, c)
}

// ParseIdent splits "ns.table" (or "a.b.table") into an identifier.
func ParseIdent(s string) ([]string, error) { return ingest.ParseIdent(s) }
