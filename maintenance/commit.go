package maintenance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
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
	var pol *floe.CommitRetry
	for attempt := 1; ; attempt++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
		}
		if pol == nil {
			p := floe.CommitRetryOf(tbl)
			pol = &p
		}
		tx, err := change(tbl)
		if err != nil || tx == nil {
			return tbl, err
		}
		committed, err := tx.Commit(ctx)
		if err == nil {
			return committed, nil
		}
		wait, again := pol.Wait(attempt)
		if !floe.IsCommitConflict(err) || !again {
			return nil, fmt.Errorf("%w: table %s after %d attempts: %w", ErrCommit, strings.Join(ident, "."), attempt, err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
