package checkpoint

import (
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/commit"
)

// The metadata file a refusal tells the user to register when the catalog
// lost a table the checkpoint wrote.

// NewestMetadata returns the newest metadata file beside a recorded one
// (later commits, maintenance included, write newer ones), or the recorded
// one when its directory cannot be listed; "METADATA_FILE" when none is
// recorded. Files are named <version>-<uuid>.metadata.json; a commit
// killed after writing its file leaves one of a version a later commit
// writes again, so the later written of a version wins.
func NewestMetadata(recorded string) string {
	if recorded == "" {
		return "METADATA_FILE"
	}
	newest, ok := newestMetadataIn(filepath.Dir(strings.TrimPrefix(recorded, "file://")))
	if !ok {
		return recorded
	}
	if strings.HasPrefix(recorded, "file://") {
		newest = "file://" + newest
	}
	return newest
}

// DefaultMetadataFile is the newest metadata file where the embedded
// catalog keeps a table's (<warehouse>/<namespace>.db/<table>/metadata),
// or "METADATA_FILE" when there is none to be found.
func DefaultMetadataFile(cfg *config.Pipeline, ident []string) string {
	wh, err := catalogs.ResolveWarehouse(cfg.Catalog.Warehouse)
	if err != nil || catalogs.IsURL(wh) || (cfg.Catalog.Type != "" && cfg.Catalog.Type != "sql") || len(ident) != 2 {
		return "METADATA_FILE"
	}
	if m, ok := newestMetadataIn(filepath.Join(wh, ident[0]+".db", ident[1], "metadata")); ok {
		return m
	}
	return "METADATA_FILE"
}

// newestMetadataIn is the newest metadata file of a local metadata
// directory, if it holds one.
func newestMetadataIn(dir string) (string, bool) {
	newest, _, ok := commit.NewestMetadata(icebergio.LocalFS{}, dir)
	return newest, ok
}
