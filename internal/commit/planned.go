package commit

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/ingest"
)

// CommitPlanned commits what plan makes of the table each attempt sees,
// for a commit whose content depends on the table's state: a cluster's
// coordinator chains its workers' events onto the record it finds. Each
// attempt is pinned to the snapshot it was planned on, so that a commit
// landing first sends it back to plan again instead of being replayed on
// top of a state it was not planned for. A nil request commits nothing; a
// plan error ends the commit. It returns the request that was committed.
func (c *Committer) CommitPlanned(ctx context.Context, plan func(tbl *table.Table) (*Request, error)) (Result, *Request, error) {
	var done *Request
	snapshot := false // the last attempt made a snapshot
	out, attempts, err := Retry(ctx, c.load, nil, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		req, err := plan(tbl)
		done = req
		if err != nil || req == nil {
			return tbl, Final(err)
		}
		props, tableProps, err := c.properties(*req)
		if err != nil {
			return nil, Final(err)
		}
		txn := c.transaction(tbl)
		if err := txn.SetProperties(tableProps); err != nil {
			return nil, err
		}
		if err := txn.AssertRefSnapshotID(""); err != nil {
			return nil, err
		}
		var out *table.Table
		switch {
		case req.Deletes != nil:
			// Files or the deletes of rows found make a snapshot.
			out, _, snapshot, err = c.rowDelta(ctx, tbl, txn, *req, icebergFiles(req.Files), props)
		case len(req.Files) == 0 && req.Marker:
			snapshot = true
			if err := txn.Delete(ctx, iceberg.AlwaysTrue{}, props); err != nil {
				return nil, err
			}
			out, err = txn.Commit(ctx)
		case len(req.Files) == 0:
			snapshot = false
			out, err = txn.Commit(ctx)
		default:
			snapshot = true
			out, _, err = c.stage(ctx, tbl, txn, *req, icebergFiles(req.Files), props)
		}
		return out, err
	})
	if err != nil {
		if IsFinal(err) || ctx.Err() != nil {
			return Result{}, nil, err
		}
		return Result{}, nil, fmt.Errorf("%w: table %s after %d attempts: %w", ingest.ErrCommit, c.Name(), attempts, err)
	}
	res := Result{Attempts: attempts, Table: out}
	if done == nil {
		return res, nil, nil
	}
	if err := catalogs.Intact(c.Catalog); err != nil {
		return Result{}, nil, fmt.Errorf("table %s: %w", c.Name(), err)
	}
	if snapshot {
		if s := c.branchHead(out); s != nil {
			res.SnapshotID = s.SnapshotID
		}
	}
	return res, done, nil
}
