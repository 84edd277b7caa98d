package iceberg

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
)

// registerPosition sets the query's tag on the table (ReaderRefPrefix and
// the query id) to snapshot id, where its position now is: floe's expiry
// keeps the tagged snapshot and every snapshot after it, so a writer's
// maintenance never expires what the query has yet to read. Other engines'
// expiry keeps the tagged snapshot only; the query then stops when it
// finds the snapshots after it gone (see after). The tag lapses, as any
// ref, max-ref-age-ms after its snapshot was committed: ReaderRefMaxAge
// when the reader creates it, or whatever the tag has been given since.
//
// It is a metadata-only commit on the table read, made once per batch that
// moved to another snapshot; it is retried like any commit, and a failure
// is reported, not fatal: the query's rows are safe either way, since a
// query that finds unread snapshots expired stops.
func (s *Source) registerPosition(ctx context.Context, id int64) error {
	if s.queryID == "" || id == noSnapshot || id == s.registered {
		return nil
	}
	name := commit.ReaderRefPrefix + s.queryID
	load := func(ctx context.Context) (*table.Table, error) {
		tbl, err := s.cat.LoadTable(ctx, s.ident)
		if err != nil {
			return nil, commit.Final(err)
		}
		return tbl, nil
	}
	_, _, err := commit.Retry(ctx, load, nil, commit.UpdatesAttempt(s.cat, s.ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		md := tbl.Metadata()
		maxAge := commit.ReaderRefMaxAge.Milliseconds()
		var at *int64
		for ref, r := range md.Refs() {
			if ref != name {
				continue
			}
			if r.SnapshotID == id {
				return nil, nil, nil
			}
			at = &r.SnapshotID
			if r.MaxRefAgeMs != nil {
				maxAge = *r.MaxRefAgeMs
			}
		}
		if md.SnapshotByID(id) == nil {
			return nil, nil, errors.New("the snapshot was expired meanwhile")
		}
		reqs := []table.Requirement{table.AssertTableUUID(md.TableUUID()), table.AssertRefSnapshotID(name, at)}
		return reqs, []table.Update{table.NewSetSnapshotRefUpdate(name, id, table.TagRef, maxAge, 0, 0)}, nil
	}))
	if err != nil {
		return fmt.Errorf("iceberg source: set tag %s of table %s to snapshot %d, the query's position, which keeps floe's expiry from expiring snapshots the query has not read: %w",
			name, s.name, id, err)
	}
	s.registered = id
	return nil
}
