package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// The table, not the checkpoint, is the authority on what a query has
// committed: each batch's commit writes the query's record into the table
// (commit.Record), and every run starts by holding the checkpoint against
// it. A checkpoint restored from an older backup, one that lost files, or a
// table its catalog lost or that went back to older metadata would
// otherwise make a run skip input or read it twice with nothing to show.

// Against is what a checkpoint is held against: the query's tables (nil
// for the console sink), the fixed table's name ("" with a template), the
// sink as configured, and the source, which checks its own account of the
// input.
type Against struct {
	Tables *commit.Tables
	Fixed  string
	Config *config.Pipeline
	Source source.Source
}

// Check holds the checkpoint against the tables, as every run does first
// (docs/format/checkpoint.md): each table it records commits to must
// exist, and the fixed table's record of the query must be where the
// checkpoint is. It returns the account of the input the next batch goes
// on from.
func (c *Checkpoint) Check(ctx context.Context, a Against) (map[string]string, error) {
	p := checking{c: c, Against: a}
	lastOff, err := p.c.LatestOffsets()
	if err != nil {
		return nil, err
	}
	lastCommit, err := p.c.LatestCommit()
	if err != nil {
		return nil, err
	}
	if lastCommit > lastOff {
		return nil, p.diverged("its offsets log ends %s but its commits log at batch %d: offsets entries were deleted", batchText(lastOff), lastCommit)
	}
	var input map[string]string
	var start, end source.Offset
	if lastCommit >= 0 {
		e, err := p.c.Commit(lastCommit)
		if err != nil {
			return nil, err
		}
		o, err := p.c.Offsets(lastCommit)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p.diverged("the offsets entry of batch %d, its newest commit, was deleted", lastCommit)
		}
		if err != nil {
			return nil, err
		}
		input, start, end = e.Input, o.Start, o.End
	}
	if p.Tables != nil {
		committed, err := p.c.CommittedTables()
		if err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(committed)) {
			tbl, err := p.Tables.Load(ctx, name)
			if err != nil {
				return nil, err
			}
			if tbl == nil {
				return nil, p.lostTable(name, committed[name])
			}
		}
		if p.Fixed != "" {
			last, wrote := committed[p.Fixed]
			if in, s, e, err := p.checkRecord(ctx, last, wrote, lastOff, lastCommit); err != nil {
				return nil, err
			} else if in != nil {
				input, start, end = in, s, e
			}
		}
	}
	if rs, ok := p.Source.(source.Recorder); ok {
		if lastCommit >= 0 {
			if err := rs.CheckInput(input, start, end); err != nil {
				return nil, p.diverged("%v", err)
			}
		}
		if lastOff > lastCommit {
			// The pending batch is re-run from the source's plan of it,
			// which must still be there, and not folded away by a
			// compaction that followed its commit.
			o, err := p.c.Offsets(lastOff)
			if err != nil {
				return nil, err
			}
			if err := rs.CheckInput(nil, nil, o.End); err != nil {
				return nil, p.diverged("batch %d, planned and not committed: %v", lastOff, err)
			}
			var unreachable net.Error
			if _, err := p.Source.Read(ctx, o.Start, o.End); errors.Is(err, ingest.ErrSourceCannotContinue) || errors.As(err, &unreachable) {
				// The input is gone (a Kafka topic deleted) or out of reach
				// for now (brokers down): the source names it, and the
				// checkpoint is not at fault.
				return nil, fmt.Errorf("batch %d, planned and not committed: %w", lastOff, err)
			} else if err != nil {
				return nil, p.diverged("batch %d, planned and not committed, cannot be read again: %v", lastOff, err)
			}
		}
	}
	return input, nil
}

// checking is one Check of a checkpoint.
type checking struct {
	c *Checkpoint
	Against
}

// checkRecord compares the fixed table's record of the query with the
// checkpoint, whose newest commit to the table is last. Every batch the
// query commits, with rows or without, moves the record, so the record
// and the commits log end at the same batch, or the record one ahead when
// a run stopped between the table commit and the commits log. wrote tells
// that the commits log holds a commit to the table, last the newest. It
// returns the table's account and the batch's offsets when the two agree.
func (p checking) checkRecord(ctx context.Context, last CommitEntry, wrote bool, lastOff, lastCommit int64) (input map[string]string, start, end source.Offset, err error) {
	tbl, err := p.Tables.Load(ctx, p.Fixed)
	if err != nil || tbl == nil {
		return nil, nil, nil, err
	}
	rec, err := commit.ReadRecord(tbl, p.c.Metadata.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	if rec == nil {
		if wrote && !holdsSnapshotOf(tbl, p.c.Metadata.ID) {
			return nil, nil, nil, p.foreignTable(last)
		}
		// Not yet written by this query, or written before tables
		// carried records (its snapshots say so).
		return nil, nil, nil, nil
	}
	if branch := p.Config.Sink.Branch; branchName(rec.Branch) != branchName(branch) {
		// The checkpoint holds the batches as done wherever they went:
		// the new branch would never get them.
		return nil, nil, nil, fmt.Errorf("%w: query %s of checkpoint %s commits to branch %s of table %s, and sink.branch now names %s; keep sink.branch %s, or give a new checkpoint to write %s from the start",
			ingest.ErrConfig, p.c.Metadata.ID, p.c.Dir, branchName(rec.Branch), p.Fixed, branchName(branch), branchName(rec.Branch), branchName(branch))
	}
	switch {
	case rec.Batch > lastCommit:
		if rec.Batch == lastOff && lastOff == lastCommit+1 {
			// The run stopped between the table commit and the commits
			// log: the re-run finds the batch, if it is the same batch.
			o, err := p.c.Offsets(lastOff)
			if err != nil {
				return nil, nil, nil, err
			}
			if string(o.End) != string(rec.Offset) {
				return nil, nil, nil, p.diverged("table %s holds batch %d read up to offset %s, and the checkpoint planned batch %d up to %s", p.Fixed, rec.Batch, rec.Offset, lastOff, o.End)
			}
			// The same end offset is not yet the same input: a source log
			// whose newest entry was written again after the offsets
			// entry that planned it was lost holds other files under it.
			if rs, ok := p.Source.(source.Recorder); ok && rec.Input != nil {
				if err := rs.CheckInput(rec.Input, o.Start, rec.Offset); err != nil {
					return nil, nil, nil, p.diverged("batch %d, which the table holds: %v", rec.Batch, err)
				}
			}
			return nil, nil, nil, nil
		}
		return nil, nil, nil, p.behind(tbl, rec, lastCommit)
	case rec.Batch < lastCommit:
		return nil, nil, nil, fmt.Errorf("%w: table %s holds batches of query %s up to batch %d, but checkpoint %s records batch %d committed to it: the table went back to older metadata (a rollback, or a registration of an older metadata file), and the newer batches' rows are not in it. Register the newest metadata file (%s), or, to ingest those batches again, start a new checkpoint and table",
			ingest.ErrCheckpointMismatch, p.Fixed, p.c.Metadata.ID, rec.Batch, p.c.Dir, lastCommit, NewestMetadata(last.MetadataFiles[p.Fixed]))
	}
	o, err := p.c.Offsets(rec.Batch)
	if err != nil {
		return nil, nil, nil, err
	}
	if string(o.End) != string(rec.Offset) {
		return nil, nil, nil, p.diverged("table %s holds batch %d read up to offset %s, the checkpoint's batch %d read up to %s", p.Fixed, rec.Batch, rec.Offset, rec.Batch, o.End)
	}
	return rec.Input, o.Start, rec.Offset, nil
}

// holdsSnapshotOf tells whether any snapshot the table keeps was
// committed by query.
func holdsSnapshotOf(tbl *table.Table, query string) bool {
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[commit.SummaryQueryID] == query {
			return true
		}
	}
	return false
}

// foreignTable is the refusal of a table that holds nothing of a query
// whose checkpoint records commits to it: another table of that name
// (dropped and created again, or in another catalog), or the table as it
// was before the query's first commit (older metadata registered); going on
// would take the batches the checkpoint holds as done for rows it lacks.
func (p checking) foreignTable(last CommitEntry) error {
	meta := last.MetadataFiles[p.Fixed]
	if meta == "" {
		meta = "METADATA_FILE"
	}
	return fmt.Errorf("%w: table %s holds no batch of query %s, but checkpoint %s records batch %d committed to it as snapshot %d: the table was dropped and created again, went back to metadata older than the query's first commit, or is another catalog's, and the rows of those batches are not in it. "+
		"If the catalog is the wrong one, give the right one; if the metadata file %s is still there, drop this table and register it (floe table register %s %s); to ingest the input again into this table, start a new checkpoint",
		ingest.ErrCheckpointMismatch, p.Fixed, p.c.Metadata.ID, p.c.Dir, last.BatchID, last.Snapshots[p.Fixed], meta, p.Fixed, meta)
}

// diverged is the refusal of a checkpoint that does not match its table.
func (p checking) diverged(format string, args ...any) error {
	return fmt.Errorf("%w: checkpoint %s does not match table %s: %s. Run floe checkpoint rebuild with this pipeline's arguments to remake it from the table, or restore the whole checkpoint from one backup",
		ingest.ErrCheckpointMismatch, p.c.Dir, p.Config.Sink.Table, fmt.Sprintf(format, args...))
}

// behind is the refusal of a checkpoint older than its table: a restored
// backup would plan batches the table holds already, and the crash check,
// which finds a batch by its id, would take new files for them.
func (p checking) behind(tbl *table.Table, rec *commit.Record, lastCommit int64) error {
	return fmt.Errorf("%w: checkpoint %s is behind table %s: the table holds batch %d of query %s (read up to offset %s), the checkpoint's newest commit is batch %d. It was restored from an older backup or lost entries; run floe checkpoint rebuild with this pipeline's arguments to bring it to the table's state",
		ingest.ErrCheckpointMismatch, p.c.Dir, strings.Join(tbl.Identifier(), "."), rec.Batch, p.c.Metadata.ID, rec.Offset, lastCommit)
}

// lostTable is the refusal to write a table the catalog no longer has
// while the checkpoint records commits to it: creating it anew would hold
// only new rows, and leave the old data files to orphan removal.
func (p checking) lostTable(name string, e CommitEntry) error {
	meta := NewestMetadata(e.MetadataFiles[name])
	if meta == "METADATA_FILE" {
		if ident, err := ingest.ParseIdent(name); err == nil {
			meta = DefaultMetadataFile(p.Config, ident)
		}
	}
	return fmt.Errorf("%w: table %s is not in the catalog, but checkpoint %s records batch %d committed to it as snapshot %d. If the catalog lost it, register its newest metadata file again: floe table register %s %s",
		ingest.ErrCheckpointMismatch, name, p.c.Dir, e.BatchID, e.Snapshots[name], name, meta)
}

// batchText says where a log ends: "at batch N", or "before any batch".
func batchText(id int64) string {
	if id < 0 {
		return "before any batch"
	}
	return fmt.Sprintf("at batch %d", id)
}

// branchName names a branch for a message: "" is main.
func branchName(b string) string {
	if b == "" {
		return "main"
	}
	return b
}
