package commit

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// The snapshot procedures of Spark's CALL system.* on a table's branches
// and tags. Each works the change out from the table as it is at each
// attempt, and commits it with the requirement that the ref it moves has
// not moved since, so that a concurrent commit is never undone silently.

// ErrRef marks a procedure the table's state refuses: a ref that exists or
// does not, a snapshot that is not an ancestor.
var ErrRef = errors.New("refused by the table's branches and snapshots")

// refusal is an ErrRef that tells why in its own words.
type refusal struct{ msg string }

func (r refusal) Error() string        { return r.msg }
func (r refusal) Is(target error) bool { return target == ErrRef }

func refused(format string, a ...any) error { return refusal{fmt.Sprintf(format, a...)} }

// refMove is one procedure: the ref to set and where, or why not.
type refMove func(tbl *table.Table) (name string, snap int64, typ table.RefType, err error)

func moveRef(ctx context.Context, cat catalog.Catalog, tbl *table.Table, what string, move refMove) (*table.Table, error) {
	ident := tbl.Identifier()
	out, _, err := Retry(ctx, loader(cat, ident), tbl, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		name, snap, typ, err := move(tbl)
		if err != nil {
			return nil, Final(err)
		}
		// The ref keeps its retention settings; a new one has none.
		var cur *int64
		old, ok := Ref(tbl, name)
		if ok {
			cur = &old.SnapshotID
		}
		deref := func(p *int64) int64 {
			if p == nil {
				return 0
			}
			return *p
		}
		minKeep := 0
		if old.MinSnapshotsToKeep != nil {
			minKeep = *old.MinSnapshotsToKeep
		}
		if _, _, err := cat.CommitTable(ctx, ident, []table.Requirement{table.AssertRefSnapshotID(name, cur)},
			[]table.Update{table.NewSetSnapshotRefUpdate(name, snap, typ, deref(old.MaxRefAgeMs), deref(old.MaxSnapshotAgeMs), minKeep)}); err != nil {
			return nil, err
		}
		return cat.LoadTable(ctx, ident)
	})
	if err != nil {
		return nil, fmt.Errorf("%s of table %s: %w", what, ingest.JoinIdent(ident), err)
	}
	return out, nil
}

// Ref is the branch or tag name of tbl, if it has one.
func Ref(tbl *table.Table, name string) (table.SnapshotRef, bool) {
	r, ok := maps.Collect(tbl.Metadata().Refs())[name]
	return r, ok
}

// head is the snapshot a branch points at.
func head(tbl *table.Table, branch string) (int64, error) {
	r, ok := Ref(tbl, branch)
	if !ok {
		return 0, refused("the table has no branch %s; floe table refs lists its branches and tags", branch)
	}
	if r.SnapshotRefType != table.BranchRef {
		return 0, refused("%s is a tag, not a branch", branch)
	}
	return r.SnapshotID, nil
}

func snapshotOf(tbl *table.Table, id int64) (*table.Snapshot, error) {
	s := tbl.SnapshotByID(id)
	if s == nil {
		return nil, refused("the table has no snapshot %d (expired, or of another table); floe table snapshots lists them", id)
	}
	return s, nil
}

// isAncestor tells whether snapshot a is b or one of b's ancestors.
func isAncestor(tbl *table.Table, a, b int64) bool {
	return table.IsAncestorOf(b, a, tbl.Metadata().SnapshotByID)
}

// CreateRef makes a new branch or tag at snapshot snap (the current
// snapshot when 0); an existing name is refused.
func CreateRef(ctx context.Context, cat catalog.Catalog, tbl *table.Table, name string, typ table.RefType, snap int64) (*table.Table, error) {
	return moveRef(ctx, cat, tbl, "create "+string(typ)+" "+name, func(tbl *table.Table) (string, int64, table.RefType, error) {
		if _, ok := Ref(tbl, name); ok {
			return "", 0, "", refused("%s already exists; floe table refs lists the table's branches and tags", name)
		}
		id := snap
		if id == 0 {
			cur := tbl.CurrentSnapshot()
			if cur == nil {
				return "", 0, "", refused("the table has no snapshot to point %s at", name)
			}
			id = cur.SnapshotID
		}
		if _, err := snapshotOf(tbl, id); err != nil {
			return "", 0, "", err
		}
		return name, id, typ, nil
	})
}

// Rollback points branch at snap, which must be one of its ancestors
// (Spark's rollback_to_snapshot).
func Rollback(ctx context.Context, cat catalog.Catalog, tbl *table.Table, branch string, snap int64) (*table.Table, error) {
	return moveRef(ctx, cat, tbl, fmt.Sprintf("roll back branch %s to snapshot %d", branch, snap), func(tbl *table.Table) (string, int64, table.RefType, error) {
		h, err := head(tbl, branch)
		if err != nil {
			return "", 0, "", err
		}
		if _, err := snapshotOf(tbl, snap); err != nil {
			return "", 0, "", err
		}
		if !isAncestor(tbl, snap, h) {
			return "", 0, "", refused("snapshot %d is not an ancestor of branch %s's snapshot %d; floe table set-current moves the branch to any snapshot", snap, branch, h)
		}
		return branch, snap, table.BranchRef, nil
	})
}

// SetCurrent points branch at any snapshot of the table (Spark's
// set_current_snapshot).
func SetCurrent(ctx context.Context, cat catalog.Catalog, tbl *table.Table, branch string, snap int64) (*table.Table, error) {
	return moveRef(ctx, cat, tbl, fmt.Sprintf("set branch %s to snapshot %d", branch, snap), func(tbl *table.Table) (string, int64, table.RefType, error) {
		if _, err := head(tbl, branch); err != nil {
			return "", 0, "", err
		}
		if _, err := snapshotOf(tbl, snap); err != nil {
			return "", 0, "", err
		}
		return branch, snap, table.BranchRef, nil
	})
}

// FastForward moves branch to the snapshot of branch from, when branch's
// snapshot is one of its ancestors (Spark's fast_forward): what was
// committed to from, audited, is published.
func FastForward(ctx context.Context, cat catalog.Catalog, tbl *table.Table, branch, from string) (*table.Table, error) {
	return moveRef(ctx, cat, tbl, fmt.Sprintf("fast-forward branch %s to %s", branch, from), func(tbl *table.Table) (string, int64, table.RefType, error) {
		to, err := head(tbl, from)
		if err != nil {
			return "", 0, "", err
		}
		if _, ok := Ref(tbl, branch); !ok && branch == table.MainBranch && tbl.CurrentSnapshot() == nil {
			// A table whose every batch went to a branch has no main yet:
			// its empty state is an ancestor of anything.
			return branch, to, table.BranchRef, nil
		}
		cur, err := head(tbl, branch)
		if err != nil {
			return "", 0, "", err
		}
		if !isAncestor(tbl, cur, to) {
			return "", 0, "", refused("branch %s (snapshot %d) has commits that %s (snapshot %d) lacks, so it cannot be fast-forwarded; cherry-pick %s's snapshots instead", branch, cur, from, to, from)
		}
		return branch, to, table.BranchRef, nil
	})
}

// Cherrypick commits to the main branch the data files an append
// snapshot added, as a new snapshot whose summary names the source
// (Spark's cherrypick_snapshot).
func Cherrypick(ctx context.Context, cat catalog.Catalog, tbl *table.Table, snap int64) (*table.Table, error) {
	ident := tbl.Identifier()
	out, _, err := Retry(ctx, loader(cat, ident), tbl, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		s, err := snapshotOf(tbl, snap)
		if err != nil {
			return nil, Final(err)
		}
		if s.Summary == nil || s.Summary.Operation != table.OpAppend {
			return nil, Final(refused("snapshot %d is not an append; only appends can be cherry-picked", snap))
		}
		if cur := tbl.CurrentSnapshot(); cur != nil && isAncestor(tbl, snap, cur.SnapshotID) {
			return nil, Final(refused("snapshot %d is already in the main branch", snap))
		}
		fs, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		manifests, err := s.Manifests(fs)
		if err != nil {
			return nil, err
		}
		var files []iceberg.DataFile
		for _, m := range manifests {
			if m.ManifestContent() != iceberg.ManifestContentData || m.SnapshotID() != snap {
				continue
			}
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					return nil, err
				}
				if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == snap {
					files = append(files, e.DataFile())
				}
			}
		}
		txn := tbl.NewTransaction()
		if err := txn.AddDataFiles(ctx, files, iceberg.Properties{"source-snapshot-id": fmt.Sprint(snap)}); err != nil {
			return nil, Final(err)
		}
		return txn.Commit(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("cherry-pick snapshot %d into table %s: %w", snap, ingest.JoinIdent(ident), err)
	}
	return out, nil
}
