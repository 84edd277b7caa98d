package commit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// Override commits to tbl the properties of overrides (Iceberg's
// table-override.KEY catalog properties) whose value it lacks, so that
// every file floe writes follows them; it returns tbl and the keys it
// changed, none when the table already agrees.
func Override(ctx context.Context, cat catalog.Catalog, tbl *table.Table, overrides map[string]string) (*table.Table, []string, error) {
	differ := func(tbl *table.Table) iceberg.Properties {
		out := iceberg.Properties{}
		for k, v := range overrides {
			if cur, ok := tbl.Properties()[k]; !ok || cur != v {
				out[k] = v
			}
		}
		return out
	}
	if len(differ(tbl)) == 0 {
		return tbl, nil, nil
	}
	var changed []string
	ident := tbl.Identifier()
	out, _, err := Retry(ctx, loader(cat, ident), tbl, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		props := differ(tbl)
		changed = slices.Sorted(maps.Keys(props))
		if len(props) == 0 {
			return tbl, nil
		}
		txn := tbl.NewTransaction()
		if err := txn.SetProperties(props); err != nil {
			return nil, Final(err)
		}
		return txn.Commit(ctx)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("set table-override properties %s on table %s: %w", strings.Join(slices.Sorted(maps.Keys(overrides)), ", "), ingest.JoinIdent(ident), err)
	}
	return out, changed, nil
}
