package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// Rebuilt tells what Rebuild restored.
type Rebuilt struct {
	// QueryID is the query the checkpoint belongs to again, BatchID its
	// newest committed batch (-1 when it has committed nothing) and Offset
	// the source offset that batch ended at.
	QueryID string
	BatchID int64
	Offset  source.Offset
	// MovedTo is where the damaged checkpoint was set aside ("" when there
	// was none).
	MovedTo string
}

// ErrNoRecord marks a table without a record of the query; ErrNoTable a
// table the catalog does not have.
var (
	ErrNoRecord = errors.New("no record of the query")
	ErrNoTable  = errors.New("no such table")
)

// Rebuild makes the checkpoint of a pipeline writing one table (cfg, its
// configuration, valid) whole again from the record the table holds of
// the query: the query id, the newest batch and its offset, and the
// source's own state where the source can remake it exactly
// (source.Recorder); otherwise it refuses, saying why, and changes
// nothing. A damaged checkpoint is set aside beside the new one, its
// quarantined files moved over.
func Rebuild(ctx context.Context, fsys FS, cfg *config.Pipeline, cat catalog.Catalog, logger *slog.Logger) (Rebuilt, error) {
	var out Rebuilt
	ident, err := ingest.ParseIdent(cfg.Sink.Table)
	if err != nil {
		return out, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	missing := errors.Is(err, catalog.ErrNoSuchTable)
	if err != nil && !missing {
		return out, fmt.Errorf("load table %s, whose record rebuilds the checkpoint: %w", cfg.Sink.Table, err)
	}
	dir, err := filepath.Abs(cfg.Checkpoint)
	if err != nil {
		return out, fmt.Errorf("checkpoint %s: %w", cfg.Checkpoint, err)
	}
	// A directory holding nothing but the lock (made ahead of a run, or
	// left by one refused at start) holds no damage to keep.
	existed := false
	entries, _ := fsys.ReadDir(dir)
	for _, d := range entries {
		existed = existed || d.Name() != ".lock"
	}
	lock, err := lockDir(fsys, dir)
	if err != nil {
		return out, err
	}
	defer lock.Close()
	// What is left of the metadata names the query; a damaged one is no
	// help, nor is one without progress (a run that was refused for a
	// new query id against this table wrote it).
	var old Metadata
	if data, err := fsys.ReadFile(filepath.Join(dir, "metadata")); err == nil {
		if json.Unmarshal(data, &old) != nil || uuid.Validate(old.ID) != nil || progressFiles(fsys, dir) == "" {
			old = Metadata{}
		}
	}

	fresh, err := fsys.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".rebuild-")
	if err != nil {
		return out, fmt.Errorf("rebuild checkpoint %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			_ = fsys.RemoveAll(fresh)
		}
	}()
	if missing {
		meta := DefaultMetadataFile(cfg, ident)
		if committed, _ := (&Checkpoint{Dir: dir, fs: fsys}).LatestCommit(); committed < 0 && meta == "METADATA_FILE" {
			// Neither the catalog nor the warehouse has the table, and the
			// checkpoint committed nothing: the first batch never made it.
			// A checkpoint that lost its metadata too starts a new query.
			return out, rebuildEmpty(fsys, dir, fresh, existed, old, &done, &out)
		}
		// The command ends the message, so that it can be copied whole.
		return out, fmt.Errorf("%w: %w: table %s, whose record rebuilds the checkpoint, is not in the catalog; if the catalog lost it, register its newest metadata file first: floe table register %s %s",
			ingest.ErrConfig, ErrNoTable, cfg.Sink.Table, cfg.Sink.Table, meta)
	}
	src, err := source.New(cfg.Source, source.Env{StateDir: SourceDir(fresh), FS: fsys, Properties: cfg.Catalog.Properties, Catalog: cat, Logger: logger})
	if err != nil {
		return out, err
	}
	defer src.Close()
	desc := src.Description()
	if old.ID != "" && old.Source != desc {
		return out, fmt.Errorf("%w: checkpoint %s belongs to query %s reading %s, not %s; rebuild it with that query's source", ingest.ErrCheckpointMismatch, dir, old.ID, old.Source, desc)
	}
	id, rec, err := pickRecord(tbl.Properties(), cfg.Sink.Table, old.ID, desc)
	if errors.Is(err, ErrNoRecord) && old.ID != "" && !holdsQuery(tbl, old.ID) {
		// The query never committed to the table, which holds nothing of
		// it: the whole input is still to read.
		return out, rebuildEmpty(fsys, dir, fresh, existed, old, &done, &out)
	}
	if err != nil {
		return out, err
	}
	if rs, ok := src.(source.Recorder); ok {
		if err := rs.RebuildInput(ctx, rec.Input, rec.Offset); err != nil {
			return out, fmt.Errorf("%w: checkpoint %s cannot be rebuilt exactly from table %s: %v. Restore the checkpoint from a backup, or start a new checkpoint and a new table", ingest.ErrCheckpointMismatch, dir, cfg.Sink.Table, err)
		}
	}

	created := old.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	ck := &Checkpoint{Dir: fresh, fs: fsys, Metadata: Metadata{ID: id, Created: created, Sink: cfg.Sink.Table, Source: desc}}
	if err := writeMetadata(fsys, fresh, ck.Metadata); err != nil {
		return out, err
	}
	now := time.Now().UnixMilli()
	// The batch's start is not recorded; the next batch needs only its end.
	if err := ck.WriteOffsets(OffsetEntry{BatchID: rec.Batch, TimestampMs: now, Start: rec.Offset, End: rec.Offset, Conf: map[string]string{"mode": cfg.Sink.Mode}}); err != nil {
		return out, err
	}
	entry := CommitEntry{BatchID: rec.Batch, TimestampMs: now, Input: rec.Input, MetadataFiles: map[string]string{cfg.Sink.Table: tbl.MetadataLocation()}}
	c := &commit.Committer{QueryID: id, Branch: cfg.Sink.Branch}
	if s := c.FindBatch(tbl, rec.Batch); s != nil {
		entry.Snapshots, entry.Rows = map[string]int64{cfg.Sink.Table: s.SnapshotID}, commit.AddedRows(s)
	}
	if err := ck.writeEntry("commits", rec.Batch, entry); err != nil {
		return out, err
	}

	if err := swapIn(fsys, dir, fresh, existed, &out); err != nil {
		return out, err
	}
	done = true
	out.QueryID, out.BatchID, out.Offset = id, rec.Batch, rec.Offset
	return out, nil
}

// pickRecord finds the query whose checkpoint is rebuilt: the one named by
// what is left of the metadata, else the only query the table records
// reading the same source.
func pickRecord(props map[string]string, name, id, source string) (string, commit.Record, error) {
	recs := commit.RecordsOf(props)
	if id != "" {
		r, ok := recs[id]
		if !ok {
			return "", r, fmt.Errorf("%w: table %s holds no record of query %s (a table written by floe before tables carried records, or by another query); restore the checkpoint from a backup: %w", ingest.ErrCheckpointMismatch, name, id, ErrNoRecord)
		}
		return id, r, nil
	}
	var ids []string
	for q, r := range recs {
		if r.Source == source {
			ids = append(ids, q)
		}
	}
	slices.Sort(ids)
	switch len(ids) {
	case 0:
		return "", commit.Record{}, fmt.Errorf("%w: table %s holds no record of a query reading %s; restore the checkpoint from a backup: %w", ingest.ErrCheckpointMismatch, name, source, ErrNoRecord)
	case 1:
		return ids[0], recs[ids[0]], nil
	default:
		return "", commit.Record{}, fmt.Errorf("%w: table %s records several queries reading %s (%s); restore the checkpoint's metadata file with the right query id, then rebuild", ingest.ErrCheckpointMismatch, name, source, strings.Join(ids, ", "))
	}
}

// holdsQuery tells whether any snapshot of the table names the query.
func holdsQuery(tbl *table.Table, id string) bool {
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[commit.SummaryQueryID] == id {
			return true
		}
	}
	return false
}

// rebuildEmpty puts in place a checkpoint of the query with nothing
// committed: its metadata (none when it was lost: the next run starts a
// new query) and quarantined files, no log. A directory that did not exist
// is not set aside: there was nothing in it.
func rebuildEmpty(fsys FS, dir, fresh string, existed bool, old Metadata, done *bool, out *Rebuilt) error {
	if old.ID != "" {
		if err := writeMetadata(fsys, fresh, old); err != nil {
			return err
		}
	}
	if err := swapIn(fsys, dir, fresh, existed, out); err != nil {
		return err
	}
	*done = true
	out.QueryID, out.BatchID = old.ID, -1
	return nil
}

// swapIn puts the rebuilt checkpoint fresh in place of dir: a damaged
// checkpoint goes aside (out.MovedTo), its quarantined files moved into
// the new one; a directory that did not exist before holds only the lock.
func swapIn(fsys FS, dir, fresh string, existed bool, out *Rebuilt) error {
	if !existed {
		if err := fsys.RemoveAll(dir); err != nil {
			return err
		}
	} else {
		if err := fsys.Rename(QuarantineDir(dir), QuarantineDir(fresh)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move quarantined files of %s: %w", dir, err)
		}
		stamp := time.Now().UTC().Format("20060102T150405Z")
		out.MovedTo = fmt.Sprintf("%s.damaged-%s", dir, stamp)
		for n := 2; ; n++ {
			if _, err := fsys.Stat(out.MovedTo); errors.Is(err, fs.ErrNotExist) {
				break
			}
			out.MovedTo = fmt.Sprintf("%s.damaged-%s-%d", dir, stamp, n)
		}
		if err := fsys.Rename(dir, out.MovedTo); err != nil {
			return fmt.Errorf("set aside damaged checkpoint %s: %w", dir, err)
		}
	}
	if err := fsys.Rename(fresh, dir); err != nil {
		return fmt.Errorf("put rebuilt checkpoint in place at %s: %w", dir, err)
	}
	return fsys.SyncDir(filepath.Dir(dir))
}
