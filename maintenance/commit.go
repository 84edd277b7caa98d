package maintenance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
)

// ErrCommit wraps a maintenance commit that failed after its retries.
var ErrCommit = errors.New("maintenance commit failed")

// Commit runs change on a freshly loaded table and commits the transaction
// it returns (nil: nothing to commit), retrying from a new load when
// another writer committed in between, with the table's commit.retry.*
// policy. change may be called several times and must not have effects
// outside the transaction that a retry would repeat. It returns the
// committed table.
func Commit(ctx context.Context, cat catalog.Catalog, ident table.Identifier, change func(*table.Table) (*table.Transaction, error)) (*table.Table, error) {
	return commitFrom(ctx, cat, ident, nil, change)
}

// commitFrom is Commit whose first attempt runs change on base, a table
// loaded moments ago, instead of loading it again: a table of many
// snapshots takes longer to load than a small compaction to commit. A
// base another writer has moved past fails the catalog's check, and the
// retry loads the table.
func commitFrom(ctx context.Context, cat catalog.Catalog, ident table.Identifier, base *table.Table, change func(*table.Table) (*table.Transaction, error)) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, base, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		tx, err := change(tbl)
		if err != nil || tx == nil {
			return tbl, commit.Final(err)
		}
		return tx.Commit(ctx)
	})
}

// CommitUpdates is Commit for changes a Transaction cannot stage (removing
// chosen snapshots): change returns the requirements and updates to send
// to the catalog as they are (no updates: nothing to commit). It returns
// the table reloaded after the commit.
func CommitUpdates(ctx context.Context, cat catalog.Catalog, ident table.Identifier, change func(*table.Table) ([]table.Requirement, []table.Update, error)) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, nil, commit.UpdatesAttempt(cat, ident, change))
}

// retryCommit runs a maintenance change through floe's commit loop, each
// attempt on a freshly loaded table (the first on base when it is given),
// so that the change is planned again against whatever another writer
// committed in between.
func retryCommit(ctx context.Context, cat catalog.Catalog, ident table.Identifier, base *table.Table, attempt commit.Attempt) (*table.Table, error) {
	load := func(ctx context.Context) (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, commit.Final(fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err))
		}
		return tbl, nil
	}
	committed, n, err := commit.Retry(ctx, load, base, attempt)
	if err != nil && ctx.Err() == nil && !commit.IsFinal(err) {
		return nil, fmt.Errorf("%w: table %s after %d attempts: %w", ErrCommit, strings.Join(ident, "."), n, err)
	}
	return committed, err
}
