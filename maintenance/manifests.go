package maintenance

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ManifestsResult reports a manifest rewrite.
type ManifestsResult struct {
	ManifestsBefore    int   `json:"manifests_before"`
	ManifestsAfter     int   `json:"manifests_after"`
	RewrittenManifests int   `json:"rewritten_manifests"`
	AddedManifests     int   `json:"added_manifests"`
	SnapshotID         int64 `json:"snapshot_id,omitempty"`
	// AlreadyOptimal is set when nothing needed merging.
	AlreadyOptimal bool `json:"already_optimal"`
}

// RewriteManifests merges the current snapshot's small manifests (one per
// append, for a streaming table) into manifests of
// commit.manifest.target-size-bytes (8 MiB), clustered by partition, in a
// replace snapshot that changes no data. targetSize > 0 overrides the
// property. The commit is retried on fresh metadata if a writer commits
// meanwhile.
func RewriteManifests(ctx context.Context, cat catalog.Catalog, ident table.Identifier, targetSize int64) (ManifestsResult, error) {
	var res ManifestsResult
	var last *table.RewriteManifestsResult
	committed, err := Commit(ctx, cat, ident, func(tbl *table.Table) (*table.Transaction, error) {
		n, err := manifestCount(ctx, tbl)
		if err != nil {
			return nil, err
		}
		res.ManifestsBefore, res.ManifestsAfter = n, n
		tx := tbl.NewTransaction()
		r, err := tx.RewriteManifests(ctx, table.WithManifestTargetSize(targetSize))
		if err != nil {
			return nil, fmt.Errorf("rewrite manifests: %w", err)
		}
		if r.IsNoOp() {
			last = nil
			return nil, nil
		}
		last = r
		return tx, nil
	})
	if err != nil {
		return res, err
	}
	if last == nil {
		res.AlreadyOptimal = true
		return res, nil
	}
	res.RewrittenManifests, res.AddedManifests = len(last.RewrittenManifests), len(last.AddedManifests)
	res.SnapshotID = committed.CurrentSnapshot().SnapshotID
	if res.ManifestsAfter, err = manifestCount(ctx, committed); err != nil {
		return res, err
	}
	return res, nil
}

// manifestCount counts the current snapshot's manifests.
func manifestCount(ctx context.Context, tbl *table.Table) (int, error) {
	s := tbl.CurrentSnapshot()
	if s == nil {
		return 0, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	ms, err := s.Manifests(fs)
	if err != nil {
		return 0, fmt.Errorf("read manifest list %s: %w", s.ManifestList, err)
	}
	return len(ms), nil
}
