package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/source"
)

// Written is a batch's data files, written and not yet committed.
type Written struct {
	write.Result
	// held is set when the table already holds the batch.
	held heldBatch
	// upserts are the deletes of a batch in mode upsert, which its commit
	// stages.
	upserts *upsert.Deletes
	// deadLetters counts the records set aside into the dead-letter table.
	deadLetters int64
}

// heldBatch is a batch the fixed table holds already; snap is nil when its
// snapshot has been expired since (the table's record still tells).
type heldBatch struct {
	ok   bool
	snap *table.Snapshot
}

func (h heldBatch) id() int64 {
	if h.snap == nil {
		return 0
	}
	return h.snap.SnapshotID
}

// WriteBatch reads the batch's parts and writes its data files. Files
// still being written are dropped from the batch and retried later; with
// on-bad-file quarantine, bad files are moved aside and the batch goes on
// without them; b records both.
func (e *Engine) WriteBatch(ctx context.Context, entry checkpoint.OffsetEntry, b *Batch, mayBeCommitted bool) (Written, error) {
	// Each turn drops one file from the batch, so the loop ends; the bound
	// guards against a source that fails to drop it.
	for turn := 0; ; turn++ {
		if err := e.handTableSchema(ctx); err != nil {
			return Written{}, err
		}
		parts, err := e.Source.Read(ctx, entry.Start, entry.End)
		if err != nil {
			return Written{}, fmt.Errorf("read batch %d: %w", entry.BatchID, err)
		}
		if len(parts) == 0 {
			return Written{}, nil
		}
		if turn > len(parts)+1 {
			return Written{}, fmt.Errorf("batch %d: the source keeps handing back files it was asked to drop", entry.BatchID)
		}
		var w Written
		if e.Tables == nil {
			stdout := e.Hooks.Stdout
			if stdout == nil {
				stdout = os.Stdout
			}
			if w.Rows, err = write.Print(ctx, stdout, parts, e.project); err == nil {
				w.Parts = len(parts)
				return w, nil
			}
		} else {
			if e.Fixed != "" && !e.clustered {
				// A re-run of a batch the stopped run committed is found
				// before anything is read; a template's tables are known
				// only once rows are routed, and each commit checks its own.
				if w.held.snap, w.held.ok, err = e.Tables.Holds(ctx, e.Fixed, entry.BatchID); err != nil || w.held.ok {
					return Written{held: w.held}, err
				}
			}
			var schema *arrow.Schema
			if e.Config.Sink.SchemaEvolution == "add-columns" {
				schema, err = conform.PartsSchema(ctx, parts, e.project)
				if err == nil && e.Config.Sink.Upserts() {
					schema = upsert.SpecFor(e.Config, nil, false).Written(schema)
				}
			}
			if err == nil {
				e.Tables.StartBatch(schema)
				if e.Config.Sink.Upserts() {
					w, err = e.writeUpserts(ctx, entry.BatchID, parts)
				} else {
					w.Result, err = e.writer(entry.BatchID).Write(ctx, parts)
				}
				if err == nil {
					if err = e.writeDeadLetters(ctx, entry, parts, &w); err != nil {
						w.Remove(ctx)
						if w.upserts != nil {
							w.upserts.Changes.Release()
						}
						return Written{}, fmt.Errorf("batch %d: %w", entry.BatchID, err)
					}
					return w, nil
				}
			}
		}
		var uf *ingest.UnstableFileError
		var bf *ingest.BadFileError
		switch {
		case errors.As(err, &uf) && mayBeCommitted:
			// Leaving the file for a later batch would ingest it twice into
			// the tables that already hold this one.
			return Written{}, fmt.Errorf("batch %d, re-run after a stop, may already be committed to some of the tables of %s, but %s changed since it was planned: %w; restore the file as it was, or move it aside with on-bad-file: quarantine", entry.BatchID, e.Config.Sink.Table, uf.Path, err)
		case errors.As(err, &uf):
			e.Warn(uf.Error())
			b.Deferred = append(b.Deferred, uf.Path)
			if err := e.exclude(ctx, entry, uf.Path); err != nil {
				return Written{}, err
			}
		case errors.As(err, &bf) && e.Config.OnBadFile == "quarantine":
			moved, qerr := e.quarantine(ctx, bf.Path)
			if qerr != nil {
				return Written{}, fmt.Errorf("%w (and quarantine failed: %v)", err, qerr)
			}
			e.Warn(fmt.Sprintf("quarantined %s to %s: %v", bf.Path, moved, bf.Err))
			b.Quarantined = append(b.Quarantined, Quarantined{Path: bf.Path, MovedTo: moved, Reason: bf.Err.Error()})
			if err := e.exclude(ctx, entry, bf.Path); err != nil {
				return Written{}, err
			}
		default:
			return Written{}, fmt.Errorf("batch %d: %w", entry.BatchID, err)
		}
	}
}

// handTableSchema gives a source that infers types the schema of the
// table its batch goes to, as it is now.
func (e *Engine) handTableSchema(ctx context.Context) error {
	ts, ok := e.Source.(source.SchemaAware)
	if !ok {
		return nil
	}
	var schema *iceberg.Schema
	if e.Fixed != "" {
		tbl, err := e.Tables.Load(ctx, e.Fixed)
		if err != nil {
			return err
		}
		if tbl != nil {
			schema = tbl.Schema()
		}
	}
	ts.SetTableSchema(schema)
	return nil
}

func (e *Engine) exclude(ctx context.Context, entry checkpoint.OffsetEntry, name string) error {
	ex, ok := e.Source.(source.Excluder)
	if !ok {
		return fmt.Errorf("source %s cannot drop %s from batch %d", e.Source.Description(), name, entry.BatchID)
	}
	return ex.Exclude(ctx, entry.End, []string{name})
}

// writer is the batch's writer, routing rows through the sink's template
// when there is one.
func (e *Engine) writer(batchID int64) *write.Writer {
	return &write.Writer{
		Tables:         e.Tables,
		Name:           e.Fixed,
		Route:          e.route,
		FilePrefix:     fmt.Sprintf("%s-%05d", e.Checkpoint.Metadata.ID[:8], batchID),
		Batch:          batchID,
		Project:        e.project,
		Conform:        e.conform,
		TargetFileSize: e.Config.Sink.TargetFileSizeBytes,
		MaxOpenFiles:   e.Config.Sink.MaxOpenFiles,
		Clustered:      !e.Config.Sink.Fanout(),
	}
}

// quarantine moves a bad input file into the checkpoint: by a rename, or
// for a file on an object store by a copy and the source's delete.
func (e *Engine) quarantine(ctx context.Context, path string) (string, error) {
	if rf, ok := e.Source.(source.RemoteFiles); ok && strings.Contains(path, "://") {
		return e.Checkpoint.QuarantineRemote(ctx, path, rf)
	}
	return e.Checkpoint.Quarantine(path)
}
