package iceberg

import (
	"context"
	"fmt"
	"slices"

	iceberg "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
)

// unit is one added data file of an append snapshot.
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
// A start snapshot that is no longer in the table was expired while the
// query was stopped or behind. As Spark does since Iceberg 1.5, the stream
// then goes on from the oldest snapshot left that is newer, with a
// warning: the files of snapshots expired in between cannot be read.
func (s *Source) after(tbl *table.Table, st offset) ([]*table.Snapshot, error) {
	var end *table.Snapshot
	if s.capSnapshot != nil {
		if *s.capSnapshot == noSnapshot {
			return nil, nil
		}
		if end = tbl.SnapshotByID(*s.capSnapshot); end == nil {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, the end of this available-now run, is gone (expired?)", floe.ErrSourceCannotContinue, *s.capSnapshot, s.name)
		}
	} else if end = tbl.CurrentSnapshot(); end == nil {
		return nil, nil
	}
	start := st.SnapshotID
	var chain []*table.Snapshot
	found := false
	for snap := end; snap != nil; {
		if start != noSnapshot && snap.SnapshotID == start {
			chain = append(chain, snap)
			found = true
			break
		}
		if start == noSnapshot && s.fromTimestamp > 0 && snap.TimestampMs < s.fromTimestamp {
			found = true
			break
		}
		chain = append(chain, snap)
		if snap.ParentSnapshotID == nil {
			break
		}
		snap = tbl.SnapshotByID(*snap.ParentSnapshotID)
	}
	if start != noSnapshot && !found {
		if tbl.SnapshotByID(start) != nil {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, where the query stopped, is not an ancestor of snapshot %d: "+
				"the table was rolled back; the query cannot resume exactly once (start a new checkpoint)", floe.ErrSourceCannotContinue, start, s.name, end.SnapshotID)
		}
		if st.TimestampMs == 0 {
			return nil, fmt.Errorf("%w: iceberg source: snapshot %d of table %s, where the query stopped, was expired, and the checkpoint does not record "+
				"when it was committed, so the query cannot tell where to go on (start a new checkpoint)", floe.ErrSourceCannotContinue, start, s.name)
		}
		// Expired: go on from its child, which names it as parent. Commit
		// times tell only when that is gone too: a child may share its
		// parent's millisecond, or have an earlier one from a writer whose
		// clock is behind.
		if i := slices.IndexFunc(chain, func(snap *table.Snapshot) bool {
			return snap.ParentSnapshotID != nil && *snap.ParentSnapshotID == start
		}); i >= 0 {
			chain = chain[:i+1]
		} else {
			chain = slices.DeleteFunc(chain, func(snap *table.Snapshot) bool { return snap.TimestampMs <= st.TimestampMs })
		}
		s.warnExpired(st, chain)
	}
	slices.Reverse(chain)
	return chain, nil
}

func (s *Source) warnExpired(st offset, chain []*table.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warned[st.SnapshotID] {
		return
	}
	s.warned[st.SnapshotID] = true
	next := "no newer snapshot is left, so the query waits for the next commit"
	if len(chain) > 0 {
		next = fmt.Sprintf("going on from snapshot %d, the oldest newer one left", chain[len(chain)-1].SnapshotID)
	}
	s.warnings = append(s.warnings, fmt.Sprintf("iceberg source: snapshot %d of table %s, where the query stopped, was expired; %s. "+
		"Rows appended by snapshots expired in between are not read; expire snapshots less eagerly than the query reads them",
		st.SnapshotID, s.name, next))
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
			"set source.options.%s: \"true\" to skip such snapshots", floe.ErrSourceCannotContinue, s.name, snap.SnapshotID, OptSkipOverwriteSnaps)
	case table.OpDelete:
		if s.skipDelete {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d is a delete, which a stream of appends cannot read; "+
			"set source.options.%s: \"true\" to skip such snapshots", floe.ErrSourceCannotContinue, s.name, snap.SnapshotID, OptSkipDeleteSnapshots)
	default:
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d has operation %q, which the iceberg source does not know", floe.ErrSourceCannotContinue, s.name, snap.SnapshotID, op)
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
