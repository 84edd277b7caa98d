package floe

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/source"
)

// CheckpointStatus is what a checkpoint records of its query's progress
// (docs/format/checkpoint.md), its entries as its files hold them.
type CheckpointStatus struct {
	Dir string `json:"dir"`
	// Metadata identifies the query the checkpoint belongs to.
	Metadata struct {
		ID      string    `json:"id"`
		Created time.Time `json:"created"`
		Sink    string    `json:"sink"`
		Source  string    `json:"source"`
	} `json:"metadata"`
	// LatestOffsets is the newest batch planned (offsets/N), nil before
	// the first.
	LatestOffsets *struct {
		BatchID     int64             `json:"batchId"`
		TimestampMs int64             `json:"timestampMs"`
		Start       source.Offset     `json:"start"`
		End         source.Offset     `json:"end"`
		Conf        map[string]string `json:"conf,omitempty"`
	} `json:"latestOffsets"`
	// LatestCommit is the newest batch committed (commits/N), nil before
	// the first.
	LatestCommit *struct {
		BatchID     int64 `json:"batchId"`
		TimestampMs int64 `json:"timestampMs"`
		// Snapshots maps each table the batch wrote to the snapshot
		// holding it; empty when the batch had no rows.
		Snapshots map[string]int64 `json:"snapshots,omitempty"`
		Rows      int64            `json:"rows"`
		// MetadataFiles maps each table the batch wrote to its metadata
		// file after the commit: what to register should the catalog lose
		// it.
		MetadataFiles map[string]string `json:"metadataFiles,omitempty"`
		// Input is the source's account of the query's input after the
		// batch, as the tables record it.
		Input map[string]string `json:"input,omitempty"`
	} `json:"latestCommit"`
	// PendingBatch is a batch planned and not committed: the next run
	// re-runs it with the same offsets.
	PendingBatch *int64 `json:"pendingBatch"`
	// QuarantinedFiles counts the input files set aside in QuarantineDir.
	QuarantinedFiles int `json:"quarantinedFiles"`
}

// QuarantineDir holds the input files set aside by on-bad-file:
// quarantine.
func (s CheckpointStatus) QuarantineDir() string { return checkpoint.QuarantineDir(s.Dir) }

// ReadCheckpoint reads what the checkpoint in dir records, without locking
// or changing it, so that it can inspect the checkpoint of a running
// query. A directory without a metadata file is an error that wraps
// fs.ErrNotExist.
func ReadCheckpoint(dir string) (CheckpointStatus, error) {
	s, err := checkpoint.Read(checkpoint.OS, dir)
	st := CheckpointStatus{Dir: s.Dir, Metadata: s.Metadata, PendingBatch: s.PendingBatch, QuarantinedFiles: s.QuarantinedFiles}
	if s.LatestOffsets != nil {
		*alloc(&st.LatestOffsets) = *s.LatestOffsets
	}
	if s.LatestCommit != nil {
		*alloc(&st.LatestCommit) = *s.LatestCommit
	}
	return st, err
}

// alloc points *p at a new zero value, and returns it.
func alloc[T any](p **T) *T {
	*p = new(T)
	return *p
}

// Rebuilt tells what RebuildCheckpoint restored.
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
	// Matched tells that the checkpoint already matched its table, as
	// Verify holds it, and was left as it was.
	Matched bool
}

// RebuildCheckpoint makes the checkpoint of a pipeline writing one table
// whole again from the record the table holds of the query: the query id,
// the newest batch and its offset, and the source's own state where the
// source can remake it exactly (source.Recorder); otherwise it refuses,
// saying why, and changes nothing. A damaged checkpoint is set aside
// beside the new one, its quarantined files moved over; one that already
// matches its table is left alone (Rebuilt.Matched).
func RebuildCheckpoint(ctx context.Context, cfg *config.Pipeline, opts Options) (Rebuilt, error) {
	if err := cfg.Validate(); err != nil {
		return Rebuilt{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Sink.Console() || cfg.Sink.IsTemplate() {
		return Rebuilt{}, fmt.Errorf("%w: a checkpoint is rebuilt from the one table it writes; %s is not one table", ErrConfig, cfg.Sink.Table)
	}
	cat := opts.Catalog
	if cat == nil {
		var err error
		if cat, err = OpenCatalog(ctx, cfg.Catalog); err != nil {
			return Rebuilt{}, err
		}
		if c, ok := cat.(io.Closer); ok {
			defer c.Close()
		}
	}
	if r, ok := matchesTable(ctx, cfg, Options{Catalog: cat, Logger: opts.Logger}); ok {
		return r, nil
	}
	r, err := checkpoint.Rebuild(ctx, checkpoint.OS, cfg, cat, opts.Logger)
	return Rebuilt{QueryID: r.QueryID, BatchID: r.BatchID, Offset: r.Offset, MovedTo: r.MovedTo}, err
}

// matchesTable tells whether the checkpoint has committed a batch and
// passes the check every run makes first, so that a rebuild would only
// set a sound checkpoint aside. Any failure to tell means it does not.
func matchesTable(ctx context.Context, cfg *config.Pipeline, opts Options) (Rebuilt, bool) {
	st, err := ReadCheckpoint(cfg.Checkpoint)
	if err != nil || st.LatestCommit == nil {
		return Rebuilt{}, false
	}
	p, err := Open(ctx, cfg, opts)
	if err != nil {
		return Rebuilt{}, false
	}
	defer p.Close()
	if p.Verify(ctx) != nil {
		return Rebuilt{}, false
	}
	r := Rebuilt{QueryID: st.Metadata.ID, BatchID: st.LatestCommit.BatchID, Matched: true}
	if o := st.LatestOffsets; o != nil && o.BatchID == r.BatchID {
		r.Offset = o.End
	}
	return r, true
}

// ResumeFromTable applies, before Open, the rule for a checkpoint
// directory that is not there (docs/format/checkpoint.md, "A lost
// checkpoint"), the same for every source: a pipeline whose source's
// offsets alone fix its position (Kafka, the Iceberg source) gets its
// checkpoint back from the table's record of its newest batch, as
// RebuildCheckpoint would make it, and resumed is true; one whose source
// needs more (landing files) is refused with ErrQueryConflict, naming floe
// checkpoint rebuild, when the table holds its batches; anything else,
// such as a new pipeline, is left to Open, and nothing is done.
func ResumeFromTable(ctx context.Context, cfg *config.Pipeline, opts Options) (out Rebuilt, resumed bool, err error) {
	if err := cfg.Validate(); err != nil {
		return out, false, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cat := opts.Catalog
	if cat == nil {
		defer func() {
			if c, ok := cat.(io.Closer); ok {
				catalogs.Forget(cat)
				_ = c.Close()
			}
		}()
	}
	r, resumed, err := checkpoint.ResumeLost(ctx, checkpoint.OS, cfg, func() (catalog.Catalog, error) {
		if cat != nil {
			return cat, nil
		}
		if _, err := ownDirs(cfg, opts); err != nil {
			return nil, err
		}
		var err error
		cat, err = OpenCatalog(ctx, cfg.Catalog)
		return cat, err
	}, opts.Logger)
	return Rebuilt{QueryID: r.QueryID, BatchID: r.BatchID, Offset: r.Offset, MovedTo: r.MovedTo}, resumed, err
}

// Verify holds the checkpoint against its tables as every run does first
// (docs/format/checkpoint.md), without running a batch: nil when the run
// would resume exactly, else the error the run would stop with.
func (p *Pipeline) Verify(ctx context.Context) error { return p.engine.Verify(ctx) }
