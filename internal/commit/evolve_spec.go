package commit

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
)

// EvolveSpec replaces the table's partition spec by fields; the files
// already written keep the spec they were written with. The change is
// planned again on every attempt of the commit loop.
func EvolveSpec(ctx context.Context, cat catalog.Catalog, tbl *table.Table, fields []partition.Field) (*table.Table, error) {
	ident := tbl.Identifier()
	out, _, err := Retry(ctx, loader(cat, ident), tbl, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		txn := tbl.NewTransaction()
		us := txn.UpdateSpec(true)
		spec := tbl.Spec()
		kept := make([]bool, len(fields))
		for _, pf := range spec.Fields() {
			i := slices.IndexFunc(fields, func(f partition.Field) bool {
				src, ok := tbl.Schema().FindFieldByName(f.Source)
				return ok && src.ID == pf.SourceID() && f.Transform.Equals(pf.Transform)
			})
			if i >= 0 {
				kept[i] = true
			} else {
				us.RemoveField(pf.Name)
			}
		}
		for i, f := range fields {
			if !kept[i] {
				us.AddField(f.Source, f.Transform, partition.FieldName(f.Source, f.Transform))
			}
		}
		if err := us.Commit(); err != nil {
			return nil, Final(err)
		}
		return txn.Commit(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("evolve the partition spec of table %s to [%s]: %w", ingest.JoinIdent(ident), partition.JoinExprs(fields), err)
	}
	return out, nil
}
