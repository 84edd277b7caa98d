package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/source"
)

// Batch is what one batch did: the facts a progress record reports.
type Batch struct {
	ID    int64
	Began time.Time
	// Start and End are the batch's source offsets.
	Start, End source.Offset
	// The phases in Spark's names: planning (latestOffset), writing the
	// offsets entry (walCommit), writing the data files (addBatch),
	// committing (commit), and the whole batch.
	LatestOffset, WalCommit, AddBatch, Commit, Total time.Duration
	// Rows are the rows committed; InputRows the rows read, which differ
	// in mode upsert (changes merged by key).
	Rows, InputRows int64
	// Parts counts the input files (parts) the batch read.
	Parts         int
	DataFiles     int
	PeakOpenFiles int
	// SnapshotID is the snapshot that holds the batch when it went to one
	// table; 0 when it committed nothing.
	SnapshotID    int64
	CommitRetries int
	// Tables lists each table's commit when a template routes rows.
	Tables []commit.TableCommit
	// Snapshots counts the snapshots this batch added.
	Snapshots int
	// Recovered is set when the table held the batch already: the run
	// that stopped had committed it.
	Recovered   bool
	Upsert      *Upsert
	Deferred    []string
	Quarantined []Quarantined
	// DeadLetters counts the records set aside into the dead-letter table
	// (on-bad-record: dead-letter).
	DeadLetters int64
	// SourceLatest and SourceMetrics come from a source.MetricsReporter.
	SourceLatest  json.RawMessage
	SourceMetrics map[string]string
	Backlog       *source.Backlog
}

// Upsert is a batch's merge in mode upsert.
type Upsert struct {
	Changes, Keys, DeletedKeys int64
	// RemovedRows counts the table rows the batch's deletion vectors
	// remove; nil with equality deletes, which remove rows uncounted.
	RemovedRows *int64
}

// Quarantined is an input file set aside by on-bad-file: quarantine.
type Quarantined struct {
	Path, MovedTo, Reason string
}

// RunBatch runs one batch: it writes the offsets entry (when new), the
// data files, the table commit and the commits entry, in that order, and
// hands the batch to OnBatch. latest is the time its planning took; rerun
// tells a batch the last run planned and did not finish.
func (e *Engine) RunBatch(ctx context.Context, entry checkpoint.OffsetEntry, began time.Time, latest time.Duration, rerun bool) error {
	t := time.Now()
	if err := e.Checkpoint.WriteOffsets(entry); err != nil {
		return err
	}
	b := Batch{ID: entry.BatchID, Began: began, Start: entry.Start, End: entry.End, LatestOffset: latest, WalCommit: time.Since(t)}

	t = time.Now()
	// A re-run batch of a table template may be in some of its tables
	// already: which, only its rows can tell.
	mayBeCommitted := rerun && e.route != nil
	w, err := e.WriteBatch(ctx, entry, &b, mayBeCommitted)
	if err != nil {
		// Forget the batch only where nothing of it reached a table, and
		// the checkpoint must be left as it was: on bad input (a re-run
		// batch is looked up in the table before anything is read), and
		// when a table to create is one its catalog lost, for a batch this
		// run planned (a re-run one may be in the lost table). Any other
		// failure keeps offsets/N, so the next run re-runs the same batch
		// with the same files: it may already be in the table.
		if errors.Is(err, ingest.ErrBadInput) && mayBeCommitted {
			return fmt.Errorf("%w; batch %d was re-run after a stop and may already be in some of the tables of %s, so it is kept to be re-run again: restore or fix the file, or set on-bad-file: quarantine", err, entry.BatchID, e.Config.Sink.Table)
		}
		if (errors.Is(err, ingest.ErrBadInput) || errors.Is(err, ingest.ErrTableLost) && !rerun) && ctx.Err() == nil {
			if rerr := e.Checkpoint.RemoveOffsets(entry.BatchID); rerr != nil {
				e.Hooks.Logger.Warn("could not remove offsets of failed batch", "batch", entry.BatchID, "err", rerr)
			} else if ds, ok := e.Source.(source.Discarder); ok {
				if derr := ds.Discard(ctx, entry.Start, entry.End); derr != nil {
					e.Hooks.Logger.Warn("could not discard the source's plan of failed batch", "batch", entry.BatchID, "err", derr)
				}
			}
			if errors.Is(err, ingest.ErrTableLost) {
				if werr := e.Checkpoint.Withdraw(); werr != nil {
					e.Hooks.Logger.Warn("could not take back the checkpoint of a refused first batch", "err", werr)
				}
			}
		}
		return err
	}
	b.AddBatch = time.Since(t)
	if w.upserts != nil {
		defer w.upserts.Changes.Release()
	}

	t = time.Now()
	res := w.Result
	var input map[string]string
	if rs, ok := e.Source.(source.Recorder); ok && e.Tables != nil {
		if input, err = rs.BatchInput(e.input, entry.Start, entry.End); err != nil {
			return fmt.Errorf("batch %d: %w", entry.BatchID, err)
		}
	}
	rec := &commit.Record{Batch: entry.BatchID, Source: e.Checkpoint.Metadata.Source, Offset: entry.End, Input: input, Branch: e.Config.Sink.Branch}
	var deletes commit.Deletes
	if w.upserts != nil {
		if tbl, err := e.Tables.Load(ctx, e.Fixed); err != nil {
			return err
		} else if tbl != nil || len(res.Files) > 0 {
			deletes = w.upserts
		}
	}
	done := checkpoint.CommitEntry{BatchID: entry.BatchID, Rows: res.Rows, Input: input}
	switch {
	case w.held.ok:
		done.Snapshots = map[string]int64{e.Config.Sink.Table: w.held.id()}
		if tbl := e.Tables.Cached(e.Fixed); tbl != nil {
			done.MetadataFiles = map[string]string{e.Fixed: tbl.MetadataLocation()}
		}
		b.SnapshotID = w.held.id()
		// The batch was committed by the run that stopped: count its rows.
		res.Rows = commit.AddedRows(w.held.snap)
		done.Rows = res.Rows
	case len(res.Files) > 0 || e.Config.Sink.Mode == "complete" && res.Parts > 0 || deletes != nil:
		// A complete-mode batch that read input but no rows empties the
		// table; one whose files were all set aside commits nothing.
		if e.Hooks.ForEachBatch != nil {
			if err := e.Hooks.ForEachBatch(ctx, entry.BatchID, res.Files); err != nil {
				res.Remove(ctx)
				return fmt.Errorf("batch %d: for-each-batch hook: %w", entry.BatchID, err)
			}
		}
		tcs, err := e.Tables.Commit(ctx, entry.BatchID, res.Files, res.Tables, rec, deletes)
		if err != nil {
			return err
		}
		done.Snapshots, done.MetadataFiles = map[string]int64{}, map[string]string{}
		res.Rows = 0
		for _, tc := range tcs {
			// A commit that only recorded the batch (upsert deletes of keys
			// the table does not hold) added no snapshot.
			if tc.Existing || tc.SnapshotID != 0 {
				done.Snapshots[tc.Table] = tc.SnapshotID
			}
			done.MetadataFiles[tc.Table] = tc.MetadataFile
			b.CommitRetries += tc.Retries
			if !tc.Existing && tc.SnapshotID != 0 {
				b.Snapshots++
			}
			if e.Config.OnBadRecord == "dead-letter" && tc.Table == e.Config.Sink.DeadLetterTable {
				// Bad records, whether a source set them aside or a template
				// found no table for them, are no rows of the sink's.
				b.DeadLetters += tc.Rows
				continue
			}
			res.Rows += tc.Rows
			if tc.Table == e.Fixed {
				b.SnapshotID = tc.SnapshotID
			}
		}
		done.Rows = res.Rows
		if len(tcs) == 1 {
			b.SnapshotID = tcs[0].SnapshotID
		}
		if e.route != nil || b.DeadLetters > 0 {
			b.Tables = tcs
		}
	case e.Fixed != "" && input != nil:
		// No rows, so no snapshot; the table's record must still cover the
		// batch's input, or the next start would find the source's log
		// ahead of the table.
		meta, err := e.Tables.Record(ctx, e.Fixed, rec)
		if err != nil {
			return err
		}
		if meta != "" {
			done.MetadataFiles = map[string]string{e.Fixed: meta}
		}
	}
	done.TimestampMs = time.Now().UnixMilli()
	if err := e.Checkpoint.WriteCommit(done); err != nil {
		return err
	}
	e.input = input
	if err := e.Source.Commit(ctx, entry.End); err != nil {
		e.Hooks.Logger.Warn("source clean-up after commit failed", "batch", entry.BatchID, "err", err)
	}
	e.flushWarnings()
	b.Commit = time.Since(t)

	b.Total = time.Since(began)
	b.Rows, b.InputRows, b.Parts = res.Rows, res.Rows, res.Parts
	if ms, ok := e.Source.(source.MetricsReporter); ok {
		b.SourceLatest, b.SourceMetrics = ms.Metrics(entry.End)
	}
	if w.upserts != nil {
		b.Upsert = upsertOf(w.upserts)
		b.InputRows = w.upserts.Changes.Rows
	}
	b.DataFiles, b.PeakOpenFiles = len(res.Files), res.PeakOpenFiles
	if bs, ok := e.Source.(source.BacklogReporter); ok {
		if bl, ok := bs.Backlog(); ok {
			b.Backlog = &bl
		}
	}
	b.Recovered = w.held.ok
	if b.DeadLetters == 0 {
		// Sent to a source's own dead-letter destination, not a table.
		b.DeadLetters = w.deadLetters
	}
	if e.Hooks.OnBatch != nil {
		e.Hooks.OnBatch(b)
	}
	if e.Maintainer != nil && len(done.Snapshots) > 0 {
		tables := map[string]*table.Table{}
		for name := range done.Snapshots {
			tables[name] = e.Tables.Cached(name)
		}
		e.Tables.Adopt(e.Maintainer.AfterBatch(ctx, maintenance.BatchCommitted{BatchID: entry.BatchID, QueryID: e.Checkpoint.Metadata.ID, Tables: tables}))
	}
	return nil
}
