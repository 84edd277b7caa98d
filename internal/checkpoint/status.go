package checkpoint

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/floe-io/floe/internal/ingest"
)

// Status is what a checkpoint records of its query's progress.
type Status struct {
	Dir      string
	Metadata Metadata
	// LatestOffsets is the newest batch planned, LatestCommit the newest
	// committed; nil before the first.
	LatestOffsets *OffsetEntry
	LatestCommit  *CommitEntry
	// PendingBatch is a batch planned and not committed: the next run
	// re-runs it with the same offsets.
	PendingBatch *int64
	// QuarantinedFiles counts the input files set aside in QuarantineDir.
	QuarantinedFiles int
}

// Read reads what the checkpoint in dir records, without locking or
// changing it, so that it can inspect the checkpoint of a running query.
// A directory without a metadata file is an error that wraps
// fs.ErrNotExist.
func Read(fsys FS, dir string) (Status, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Status{}, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	st := Status{Dir: dir}
	data, err := fsys.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		return st, fmt.Errorf("%s is not a floe checkpoint (no readable metadata file): %w", dir, err)
	}
	if err := json.Unmarshal(data, &st.Metadata); err != nil {
		return st, fmt.Errorf("%w: checkpoint %s: metadata is not valid JSON (%v)", ingest.ErrCheckpointMismatch, dir, err)
	}
	r := &Checkpoint{Dir: dir, fs: fsys}
	lastOff, err := r.LatestOffsets()
	if err != nil {
		return st, err
	}
	if lastOff >= 0 {
		e, err := r.Offsets(lastOff)
		if err != nil {
			return st, err
		}
		st.LatestOffsets = &e
	}
	lastCommit, err := r.LatestCommit()
	if err != nil {
		return st, err
	}
	if lastCommit >= 0 {
		e, err := r.Commit(lastCommit)
		if err != nil {
			return st, err
		}
		st.LatestCommit = &e
	}
	if lastOff > lastCommit {
		st.PendingBatch = &lastOff
	}
	if q, err := fsys.ReadDir(QuarantineDir(dir)); err == nil {
		st.QuarantinedFiles = len(q)
	}
	return st, nil
}
