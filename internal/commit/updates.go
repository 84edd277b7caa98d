package commit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ReaderRefPrefix starts the name of the tag a floe query streaming a
// table's appends keeps on that table at the snapshot its position is in,
// ReaderRefPrefix + query id. floe's expiry keeps that snapshot and every
// one after it while the tag lives; the tag's max-ref-age-ms (the reader
// sets ReaderRefMaxAge) ends that for a reader that stopped long ago.
const ReaderRefPrefix = "floe-reader-"

// ReaderRefMaxAge is the max-ref-age-ms a reader gives its tag: a week
// after the snapshot it points at was committed, expiry removes the tag.
const ReaderRefMaxAge = 7 * 24 * time.Hour

// UpdatesAttempt is the Attempt of a change a Transaction cannot stage
// (removing chosen snapshots, moving a tag): change returns the
// requirements and updates to send to the catalog as they are (no updates:
// nothing to commit). The attempt returns the table reloaded after the
// commit.
func UpdatesAttempt(cat catalog.Catalog, ident table.Identifier, change func(*table.Table) ([]table.Requirement, []table.Update, error)) Attempt {
	return func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		reqs, updates, err := change(tbl)
		if err != nil || len(updates) == 0 {
			return tbl, Final(err)
		}
		meta, _, err := cat.CommitTable(ctx, ident, reqs, updates)
		if err != nil {
			return nil, err
		}
		deleteOldMetadata(ctx, tbl, meta)
		committed, err := cat.LoadTable(ctx, ident)
		if err != nil {
			// The commit landed; only the reload failed.
			return nil, Final(fmt.Errorf("reload table %s after commit: %w", strings.Join(ident, "."), err))
		}
		return committed, nil
	}
}

// deleteOldMetadata does for a raw catalog commit what a transaction's
// commit does: with write.metadata.delete-after-commit.enabled, the
// metadata files the commit dropped from the metadata log are deleted.
// Without it each such commit would leave one behind for good.
func deleteOldMetadata(ctx context.Context, base *table.Table, meta table.Metadata) {
	if !meta.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	kept := map[string]bool{}
	for e := range meta.PreviousFiles() {
		kept[e.MetadataFile] = true
	}
	fs, err := base.FS(ctx)
	if err != nil {
		return
	}
	for e := range base.Metadata().PreviousFiles() {
		if !kept[e.MetadataFile] {
			// Already gone is fine: another writer's commit may have
			// deleted it; anything else is left to remove-orphan-files.
			_ = fs.Remove(e.MetadataFile)
		}
	}
}
