package iceberg

import (
	"context"
	"fmt"
	"slices"

	iceberg "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/source"
)

// unit is one added data file of an append snapshot, or in a changelog
// one snapshot (file nil).
type unit struct {
	snapshot    int64
	timestampMs int64
	pos         int // 1-based position within the snapshot's added files
	file        iceberg.DataFile
}

// addedFiles are the data files a snapshot added, in manifest order, or
// none for a snapshot the stream skips; seq and timestampMs order
// snapshots.
type addedFiles struct {
	seq         int64
	timestampMs int64
	files       []iceberg.DataFile
}

// before tells whether a was committed before b: by sequence number, or by
// commit time in v1 tables, whose snapshots have none. Only the cache
// relies on it, and a wrong answer costs a second read of manifests.
func (a addedFiles) before(b addedFiles) bool {
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	return a.timestampMs < b.timestampMs
}

// walk calls f for each unit after st in commit order, until f returns
// false.
func (s *Source) walk(ctx context.Context, tbl *table.Table, st offset, f func(unit) bool) error {
	snaps, err := s.after(tbl, st)
	if err != nil {
		return err
	}
	var fio icebergio.IO
	for _, snap := range snaps {
		if s.changelog {
			// A snapshot is one unit, read once it is wholly read; a
			// compaction changes no row.
			done := snap.SnapshotID == st.SnapshotID && st.Position > 0
			replace := snap.Summary != nil && snap.Summary.Operation == table.OpReplace
			if !done && !replace && !f(unit{snapshot: snap.SnapshotID, timestampMs: snap.TimestampMs, pos: 1}) {
				return nil
			}
			continue
		}
		files, ok := s.cached(snap.SnapshotID)
		if !ok {
			if fio == nil {
				if fio, err = tbl.FS(ctx); err != nil {
					return fmt.Errorf("iceberg source: table %s: %w", s.name, err)
				}
			}
			if files, err = s.units(fio, snap); err != nil {
				return err
			}
			s.mu.Lock()
			s.added[snap.SnapshotID] = addedFiles{seq: snap.SequenceNumber, timestampMs: snap.TimestampMs, files: files}
			s.mu.Unlock()
		}
		skip := 0
		if snap.SnapshotID == st.SnapshotID {
			skip = st.Position
		}
		for i := skip; i < len(files); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !f(unit{snapshot: snap.SnapshotID, timestampMs: snap.TimestampMs, pos: i + 1, file: files[i]}) {
				return nil
			}
		}
	}
	return nil
}

func (s *Source) cached(id int64) ([]iceberg.DataFile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.added[id]
	return a.files, ok
}

// after returns, oldest first, the snapshots from st (included, since part
// of its files may be left) to the end of the backlog: the current
// snapshot, or the one fixed by an available-now run.
//
// Snapshots after st that were expired before the query read them (the
// start snapshot itself gone, or a gap in the ancestry between it and the
// end) stop the query, as Spark's Iceberg source does: their rows cannot
// be read. With streaming-skip-expired-snapshots the stream goes on from
// the oldest newer snapshot left, with a warning naming what was skipped.
func (s *Source) after(tbl *table.Table, st offset) ([]*table.Snapshot, error) {
	var end *table.Snapshot
	if s.capSnapshot != nil && *s.capSnapshot != noSnapshot {
		if end = tbl.SnapshotByID(*s.capSnapshot); end == nil {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, the end of this available-now run, is gone (expired?)", source.ErrCannotContinue, *s.capSnapshot, s.name)
		}
	} else if s.capSnapshot == nil {
		end = tbl.CurrentSnapshot()
	}
	start := st.SnapshotID
	first := int64(noSnapshot) // where a query with no position starts
	if start == noSnapshot {
		var err error
		if first, err = s.firstSnapshot(end); err != nil {
			return nil, err
		}
	}
	if end == nil {
		if first != noSnapshot && tbl.SnapshotByID(first) == nil {
			return nil, s.missingStart(tbl, first, end)
		}
		return nil, nil
	}
	var (
		chain      []*table.Snapshot
		found      bool
		foundFirst bool
		gone       int64 = noSnapshot // a parent the walk found expired
	)
	for snap := end; snap != nil; {
		if start != noSnapshot && snap.SnapshotID == start {
			chain = append(chain, snap)
			found = true
			break
		}
		if first != noSnapshot && snap.SnapshotID == first {
			chain = append(chain, snap)
			foundFirst = true
			break
		}
		if start == noSnapshot && s.start.fromTimestamp > 0 && snap.TimestampMs < s.start.fromTimestamp {
			break
		}
		chain = append(chain, snap)
		if snap.ParentSnapshotID == nil {
			break
		}
		if snap = tbl.SnapshotByID(*snap.ParentSnapshotID); snap == nil {
			gone = *chain[len(chain)-1].ParentSnapshotID
		}
	}
	if first != noSnapshot && !foundFirst {
		return nil, s.missingStart(tbl, first, end)
	}
	if start != noSnapshot && !found {
		startSnap := tbl.SnapshotByID(start)
		if startSnap != nil && gone == noSnapshot {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, where the query stopped, is not an ancestor of snapshot %d: "+
				"the table was rolled back; the query cannot resume exactly once (start a new checkpoint)", source.ErrCannotContinue, start, s.name, end.SnapshotID)
		}
		if startSnap == nil && st.TimestampMs == 0 {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, where the query stopped, was expired, and the checkpoint does not record "+
				"when it was committed, so the query cannot tell where to go on (start a new checkpoint)", source.ErrCannotContinue, start, s.name)
		}
		var err error
		if chain, err = s.expired(st, startSnap, chain); err != nil {
			return nil, err
		}
	}
	slices.Reverse(chain)
	return chain, nil
}

// expired handles snapshots after st that were expired unread: it returns
// the part of chain (newest first) to go on with when
// streaming-skip-expired-snapshots is set, else an error naming them.
// startSnap is st's snapshot, nil when it is gone too.
func (s *Source) expired(st offset, startSnap *table.Snapshot, chain []*table.Snapshot) ([]*table.Snapshot, error) {
	// Go on from the start's child, which names it as parent; commit times
	// tell only when that is gone too: a child may share its parent's
	// millisecond, or have an earlier one from a writer whose clock is
	// behind.
	var what string
	if i := slices.IndexFunc(chain, func(snap *table.Snapshot) bool {
		return snap.ParentSnapshotID != nil && *snap.ParentSnapshotID == st.SnapshotID
	}); i >= 0 {
		chain = chain[:i+1]
		what = fmt.Sprintf("snapshot %d, where the query stopped after %d of its added files, was expired before the query read the others, if it had any", st.SnapshotID, st.Position)
	} else {
		since := st.TimestampMs
		if startSnap != nil {
			since = startSnap.TimestampMs
		}
		chain = slices.DeleteFunc(chain, func(snap *table.Snapshot) bool { return snap.TimestampMs <= since })
		first := "snapshot %d, where the query stopped, and the snapshots after it"
		if startSnap != nil {
			first = "the snapshots after snapshot %d, where the query stopped,"
		}
		what = fmt.Sprintf(first, st.SnapshotID)
		if n := len(chain); n > 0 && chain[n-1].ParentSnapshotID != nil {
			what += fmt.Sprintf(" up to snapshot %d (the parent of %d, the oldest newer snapshot left)", *chain[n-1].ParentSnapshotID, chain[n-1].SnapshotID)
		}
		what += " were expired before the query read them"
	}
	if !s.skipExpired {
		return nil, fmt.Errorf("%w: iceberg source: table %s: %s, so their rows cannot be read. Set source.options.%s: \"true\" (-o %s=true) to go on without them, "+
			"or start a new checkpoint to read the table from its oldest snapshot. floe's own expiry keeps what a running floe query has not read (docs/maintenance.md)",
			source.ErrCannotContinue, s.name, what, OptSkipExpiredSnaps, OptSkipExpiredSnaps)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.warned[st.SnapshotID] {
		s.warned[st.SnapshotID] = true
		next := "no newer snapshot is left, so the query waits for the next commit"
		if len(chain) > 0 {
			next = fmt.Sprintf("going on from snapshot %d, the oldest newer one left", chain[len(chain)-1].SnapshotID)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("iceberg source: table %s: %s; their rows are not read (%s is set); %s", s.name, what, OptSkipExpiredSnaps, next))
	}
	return chain, nil
}

// units returns the data files a snapshot added, in manifest order, or
// none for snapshots that are skipped. Overwrite and delete snapshots are
// errors unless their skip option is set.
func (s *Source) units(fio icebergio.IO, snap *table.Snapshot) ([]iceberg.DataFile, error) {
	op := table.OpAppend
	if snap.Summary != nil {
		op = snap.Summary.Operation
	}
	switch op {
	case table.OpAppend:
	case table.OpReplace:
		return nil, nil
	case table.OpOverwrite:
		if s.skipOverwrite {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d is an overwrite, which a stream of appends cannot read; "+
			"set source.options.%s: \"true\" to skip such snapshots", source.ErrCannotContinue, s.name, snap.SnapshotID, OptSkipOverwriteSnaps)
	case table.OpDelete:
		if s.skipDelete {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d is a delete, which a stream of appends cannot read; "+
			"set source.options.%s: \"true\" to skip such snapshots", source.ErrCannotContinue, s.name, snap.SnapshotID, OptSkipDeleteSnapshots)
	default:
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d has operation %q, which the iceberg source does not know", source.ErrCannotContinue, s.name, snap.SnapshotID, op)
	}
	manifests, err := snap.Manifests(fio)
	if err != nil {
		return nil, fmt.Errorf("iceberg source: table %s: manifests of snapshot %d: %w", s.name, snap.SnapshotID, err)
	}
	var files []iceberg.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData || m.SnapshotID() != snap.SnapshotID {
			continue // a manifest written by another snapshot adds nothing here
		}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, fmt.Errorf("iceberg source: table %s: manifest %s of snapshot %d: %w", s.name, m.FilePath(), snap.SnapshotID, err)
			}
			if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == snap.SnapshotID && e.DataFile().ContentType() == iceberg.EntryContentData {
				files = append(files, e.DataFile())
			}
		}
	}
	return files, nil
}
