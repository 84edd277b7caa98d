package commit

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// TrimSnapshots expires all but the newest keep snapshots of a table that
// only records state (a cluster's state table): its snapshots hold no
// files, and one a commit makes is never read again.
func TrimSnapshots(ctx context.Context, tbl *table.Table, keep int) (*table.Table, error) {
	if len(tbl.Metadata().Snapshots()) <= keep {
		return tbl, nil
	}
	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithRetainLast(keep), table.WithOlderThan(0)); err != nil {
		return nil, err
	}
	return txn.Commit(ctx)
}
