// Package floe streams data into Apache Iceberg tables exactly once: a
// source is read in micro-batches, each batch is written as Parquet data
// files and committed as one Iceberg snapshot, and a checkpoint records
// progress so that a crash or restart neither loses nor duplicates rows.
package floe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/uuid"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/engine"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/source"
)

// MaintenanceRun is one maintenance task run on one table between
// batches (Options.OnMaintenance).
type MaintenanceRun = maintenance.Run

// Options are the parts of a pipeline that are not configuration.
type Options struct {
	// Catalog overrides the catalog named in the configuration.
	Catalog catalog.Catalog
	// Logger receives warnings and debug output; slog.Default() when nil.
	Logger *slog.Logger
	// OnProgress is called after every batch, from the pipeline's goroutine.
	OnProgress func(Progress)
	// OnBatchFailed is called when a batch of a processing-time stream
	// fails in a way worth retrying, before the stream backs off and
	// retries it; the next OnProgress means a batch succeeded again.
	OnBatchFailed func(batchID int64, err error)
	// OnPoll is called when a processing-time stream's trigger found no
	// new input, and after each interval of a cluster worker: the query is
	// alive between batches.
	OnPoll func()
	// OnMaintenance is called after each maintenance task run between
	// batches.
	OnMaintenance func(MaintenanceRun)
	// OnWarning is called for each planning warning (files in
	// subdirectories, files changed after ingestion).
	OnWarning func(string)
	// ForEachBatch, when set, is called with each batch's data files after
	// they are written and before they are committed.
	ForEachBatch func(ctx context.Context, batchID int64, files []DataFile) error
	// Stdout receives the rows of a console sink; os.Stdout when nil.
	Stdout io.Writer
}

// Pipeline is one streaming query: a source, a table and a checkpoint.
type Pipeline struct {
	cfg      *config.Pipeline
	opts     Options
	cat      catalog.Catalog
	ownsCat  bool
	engine   *engine.Engine
	runID    string
	stopping atomic.Bool
	stopCh   chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	progress []Progress
	sum      Summary
}

// Summary is the outcome of a run.
type Summary struct {
	Batches   int
	Rows      int64
	Snapshots int
	// Recovered counts batches a stopped run had committed to the table
	// but not to the checkpoint: this run found and recorded them, and
	// counts them nowhere else.
	Recovered int
}

// Open validates the configuration, opens the catalog, the checkpoint and
// the source.
func Open(ctx context.Context, cfg *config.Pipeline, opts Options) (*Pipeline, error) {
	return open(ctx, cfg, opts, checkpoint.OS)
}

// open is Open with the checkpoint, the source's state included, kept on
// fsys.
func open(ctx context.Context, cfg *config.Pipeline, opts Options, fsys checkpoint.FS) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	p := &Pipeline{cfg: cfg, opts: opts, ownsCat: opts.Catalog == nil, runID: uuid.NewString(), stopCh: make(chan struct{})}
	if p.opts.Logger == nil {
		p.opts.Logger = slog.Default()
	}
	var forEach func(context.Context, int64, []ingest.DataFile) error
	if opts.ForEachBatch != nil {
		forEach = func(ctx context.Context, batchID int64, files []ingest.DataFile) error {
			return opts.ForEachBatch(ctx, batchID, publicFiles(files))
		}
	}
	e, err := engine.New(cfg, engine.Hooks{Logger: p.opts.Logger, Warn: opts.OnWarning, OnBatch: p.batchDone,
		OnBatchFailed: opts.OnBatchFailed, OnIdle: opts.OnPoll, OnMaintenance: opts.OnMaintenance, ForEachBatch: forEach,
		Stdout: opts.Stdout, Stopped: p.stopping.Load, Stop: p.stopCh})
	if err != nil {
		return nil, err
	}
	own, err := ownDirs(cfg, opts)
	if err != nil {
		return nil, err
	}
	ckptDir := own["checkpoint"]
	cat := opts.Catalog
	if cat == nil {
		if cat, err = OpenCatalog(ctx, cfg.Catalog); err != nil {
			return nil, err
		}
	}
	p.cat = cat
	// The source's description is needed to open the checkpoint, and the
	// source's state lives in the checkpoint: open the source against the
	// path where that state will be.
	src, err := source.New(cfg.Source, source.Env{StateDir: checkpoint.SourceDir(ckptDir), FS: fsys, OwnDirs: slices.Collect(maps.Values(own)), Properties: cfg.Catalog.Properties,
		Catalog: cat, Logger: p.opts.Logger, DeadLetters: cfg.OnBadRecord == "dead-letter", Upsert: upsert.SourceUpsert(cfg)})
	if err != nil {
		p.closeCatalog()
		return nil, err
	}
	sinkName := cfg.Sink.Table
	if cfg.Sink.Console() {
		sinkName = "console"
	}
	ck, err := checkpoint.Open(fsys, ckptDir, sinkName, src.Description(), source.SameSourceOf(src))
	if err != nil {
		_ = src.Close()
		p.closeCatalog()
		return nil, err
	}
	if qs, ok := src.(source.QueryAware); ok {
		qs.SetQueryID(ck.Metadata.ID)
	}
	e.Open(cat, src, ck)
	p.engine = e
	return p, nil
}

// ownDirs are the directories floe writes that no source may read: the
// checkpoint and, when floe opens it, the embedded catalog's warehouse.
// They are checked before the catalog is opened, which would create its
// warehouse and catalog.db inside the landing directory.
func ownDirs(cfg *config.Pipeline, opts Options) (map[string]string, error) {
	dir, err := filepath.Abs(cfg.Checkpoint)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cfg.Checkpoint, err)
	}
	own := map[string]string{"checkpoint": dir}
	if opts.Catalog == nil {
		if wh := catalogs.LocalWarehouse(cfg.Catalog); wh != "" {
			own["catalog.warehouse"] = wh
		} else if catalogs.IsURL(cfg.Catalog.Warehouse) {
			own["catalog.warehouse"] = cfg.Catalog.Warehouse
		}
	}
	if err := cfg.CheckOwnDirs(own); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return own, nil
}

// Stop asks the pipeline to finish the batch in progress and return from
// Run; it never interrupts a commit.
func (p *Pipeline) Stop() {
	p.stopOnce.Do(func() {
		p.stopping.Store(true)
		close(p.stopCh)
	})
}

// Progress returns the records of the batches run so far (the last 100).
func (p *Pipeline) Progress() []Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Progress(nil), p.progress...)
}

// Close releases the source, the checkpoint's lock and the catalog, when
// the pipeline opened it.
func (p *Pipeline) Close() error {
	err := errors.Join(p.engine.Source.Close(), p.engine.Checkpoint.Close())
	p.closeCatalog()
	return err
}

func (p *Pipeline) closeCatalog() {
	if c, ok := p.cat.(io.Closer); ok && p.ownsCat {
		catalogs.Forget(p.cat)
		_ = c.Close()
	}
}

// Run runs the query under its trigger. Cancelling ctx abandons the batch in
// progress (nothing half-committed: its files are deleted, and a re-run
// redoes it); Stop ends the run after the current batch.
func (p *Pipeline) Run(ctx context.Context) (Summary, error) {
	p.mu.Lock()
	p.sum = Summary{}
	p.mu.Unlock()
	e := p.engine
	var err error
	if m, ok, jerr := p.joinCluster(ctx); jerr != nil {
		err = jerr
	} else if ok {
		w := &cluster.Worker{Engine: e, Member: m, Catalog: p.cat, OnInterval: p.intervalDone}
		err = w.Run(ctx)
	} else {
		err = e.Run(ctx)
	}
	p.mu.Lock()
	sum := p.sum
	p.mu.Unlock()
	if err != nil {
		return sum, err
	}
	if p.cfg.FailOnEmpty && sum.Rows == 0 {
		if p.cfg.Source.Type == "iceberg" {
			return sum, fmt.Errorf("%w: no data file was appended to %s since the last batch, or no row of those appended matches source.filter; "+
				"check source.table and the stream-from-timestamp option", ErrNoInput, p.cfg.Source.Table)
		}
		return sum, fmt.Errorf("%w in %s (%s); check source.path, source.recursive and path-glob-filter", ErrNoInput, p.cfg.Source.Path, e.Source.Description())
	}
	return sum, nil
}

// joinCluster joins the source's group when this process is one worker
// of a cluster: a source that has one, a processing-time trigger and a
// table to write.
func (p *Pipeline) joinCluster(ctx context.Context) (cluster.Member, bool, error) {
	cs, ok := p.engine.Source.(cluster.Source)
	if !ok || p.cfg.Trigger.Kind != "processing-time" || p.engine.Tables == nil {
		return nil, false, nil
	}
	return cs.JoinCluster(ctx)
}

// batchDone counts a batch in the run's summary and records its progress.
func (p *Pipeline) batchDone(b engine.Batch) {
	p.mu.Lock()
	if b.Recovered {
		p.sum.Recovered++
	} else {
		p.sum.Batches++
		p.sum.Rows += b.Rows
	}
	p.sum.Snapshots += b.Snapshots
	p.mu.Unlock()
	p.record(p.batchProgress(b))
}

// intervalDone counts a cluster worker's interval in the run's summary and
// records its progress.
func (p *Pipeline) intervalDone(iv cluster.Interval) {
	p.mu.Lock()
	if iv.Published != nil {
		p.sum.Batches++
		p.sum.Rows += iv.Published.Rows
	}
	if iv.Snapshot {
		p.sum.Snapshots++
	}
	p.mu.Unlock()
	p.record(p.intervalProgress(iv))
}

// record keeps a batch's progress record and hands it to OnProgress.
func (p *Pipeline) record(prog Progress) {
	p.mu.Lock()
	p.progress = append(p.progress, prog)
	if len(p.progress) > 100 {
		p.progress = p.progress[1:]
	}
	p.mu.Unlock()
	if p.opts.OnProgress != nil {
		p.opts.OnProgress(prog)
	}
}
