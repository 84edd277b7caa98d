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
	return retryCommit(ctx, cat, ident, nil, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		tx, err := change(tbl)
		if err != nil || tx == nil {
			return tbl, commit.Final(err)
		}
		return tx.Commit(ctx)
	})
}

// markedCommit is Commit of a change whose snapshot carries id under
// summaryCommitID, for a change that adds files (a rewrite): its first
// attempt runs change on base, a table loaded moments ago, instead of
// loading it again (a table of many snapshots takes longer to load than a
// small compaction to commit; a base another writer has moved past fails
// the catalog's check, and the retry loads the table). Every attempt
// first looks for id among the table's recent snapshots: a commit whose
// answer was lost (a 5xx, a timeout, a dropped connection) may be there,
// and is then done; staged again, it would find its input files gone and
// fail. unknown reports that a failed commit may yet have landed, so that
// its files must stay.
func markedCommit(ctx context.Context, cat catalog.Catalog, ident table.Identifier, base *table.Table, id string, change func(*table.Table) (*table.Transaction, error)) (committed *table.Table, unknown bool, err error) {
	committed, err = retryCommit(ctx, cat, ident, base, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		if landed(tbl, id) {
			return tbl, nil
		}
		tx, err := change(tbl)
		if err != nil || tx == nil {
			return tbl, commit.Final(err)
		}
		out, err := tx.Commit(ctx)
		if err != nil && !commit.IsConflict(err) {
			unknown = true
		}
		return out, err
	})
	return committed, unknown && err != nil, err
}

// summaryCommitID marks the snapshot of one maintenance commit.
const summaryCommitID = "floe.commit-id"

// landed tells whether one of the table's last snapshots is the commit
// marked id. A commit is looked for moments after it was sent, so the
// last few snapshots are enough.
func landed(tbl *table.Table, id string) bool {
	s := tbl.CurrentSnapshot()
	for range 100 {
		if s == nil {
			return false
		}
		if s.Summary != nil && s.Summary.Properties[summaryCommitID] == id {
			return true
		}
		if s.ParentSnapshotID == nil {
			return false
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return false
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
