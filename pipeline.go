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
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/engine"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/internal/write"
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
	cfg        *config.Pipeline
	opts       Options
	cat        catalog.Catalog
	source     source.Source
	checkpoint *checkpoint.Checkpoint
	ownsCat    bool
	runID      string
	stopping   atomic.Bool
	stopCh     chan struct{}
	stopOnce   sync.Once

	// The write side: the tables (nil for the console sink), the fixed
	// table's name ("" with a template, which route applies), and keep,
	// drop or only.
	tables  *commit.Tables
	fixed   string
	route   *write.Router
	project *conform.Projection
	conform conform.Options
	// partition is the spec of a table floe creates.
	partition []partition.Field

	// maintainer runs the maintenance: block between batches; nil when
	// it is off.
	maintainer *maintenance.Scheduler

	// upserts are the deletes of the batch being written in mode upsert,
	// from its write to its commit; keys is the table's key index, kept
	// from batch to batch.
	upserts *upsert.Deletes
	keys    *upsert.KeyIndex

	// clustered is set when this process is one worker of a cluster: its
	// batches are published, not committed, and the table's record is the
	// cluster's, not this checkpoint's (cluster.go).
	clustered bool

	// input is the source's account of the query's input after its newest
	// committed batch (source.Recorder), which the next batch extends.
	input map[string]string

	mu       sync.Mutex
	progress []Progress
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
	p := &Pipeline{cfg: cfg, opts: opts, ownsCat: opts.Catalog == nil, runID: uuid.NewString(), stopCh: make(chan struct{}),
		project: conform.NewProjection(cfg.Sink.Keep, cfg.Sink.Drop, cfg.Sink.Only), conform: conform.OptionsFor(&cfg.Sink)}
	var partitionFields []partition.Field
	if !cfg.Sink.Console() {
		var err error
		if cfg.Sink.IsTemplate() {
			p.route, err = write.NewRouter(cfg.Sink.Table, cfg.Sink.DeadLetterTable)
		} else if _, err = ingest.ParseIdent(cfg.Sink.Table); err == nil {
			p.fixed = cfg.Sink.Table
		}
		if err != nil {
			return nil, err
		}
		if partitionFields, err = partition.ParseFields(cfg.Sink.PartitionFields); err != nil {
			return nil, err
		}
	}
	ckptDir, err := filepath.Abs(cfg.Checkpoint)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cfg.Checkpoint, err)
	}
	// Checked before the catalog is opened, which would create its
	// warehouse and catalog.db inside the landing directory.
	own := map[string]string{"checkpoint": ckptDir}
	if opts.Catalog == nil {
		if wh := catalogs.LocalWarehouse(cfg.Catalog); wh != "" {
			own["catalog.warehouse"] = wh
		}
	}
	if err := cfg.CheckOwnDirs(own); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cat := opts.Catalog
	if cat == nil {
		if cat, err = OpenCatalog(ctx, cfg.Catalog); err != nil {
			return nil, err
		}
	}
	p.cat = cat
	if p.opts.Logger == nil {
		p.opts.Logger = slog.Default()
	}
	// The source's description is needed to open the checkpoint, and the
	// source's state lives in the checkpoint: open the source against the
	// path where that state will be.
	src, err := source.New(cfg.Source, source.Env{StateDir: checkpoint.SourceDir(ckptDir), FS: fsys, OwnDirs: slices.Collect(maps.Values(own)),
		Catalog: cat, Logger: p.opts.Logger})
	if err != nil {
		p.closeCatalog()
		return nil, err
	}
	sinkName := cfg.Sink.Table
	if cfg.Sink.Console() {
		sinkName = "console"
	}
	ck, err := checkpoint.Open(fsys, ckptDir, sinkName, src.Description(), sameSource(src))
	if err != nil {
		_ = src.Close()
		p.closeCatalog()
		return nil, err
	}
	p.source, p.checkpoint = src, ck
	if qs, ok := src.(source.QueryAware); ok {
		qs.SetQueryID(ck.Metadata.ID)
	}
	if !cfg.Sink.Console() {
		p.tables = commit.NewTables(cat, commit.TablesOptions{
			QueryID: ck.Metadata.ID, Source: src.Description(), SameSource: sameSource(src), Checkpoint: ck.Dir,
			Branch:    cfg.Sink.Branch,
			Create:    cfg.Sink.CreateTable == nil || *cfg.Sink.CreateTable,
			Overrides: cfg.Sink.TableOverrides,
			CreateOptions: commit.CreateOptions{
				Properties:       tableProperties(&cfg.Sink),
				PartitionFields:  partitionFields,
				IdentifierFields: cfg.Sink.IdentifierFields,
				FormatVersion:    formatVersion(&cfg.Sink),
			},
			SpecEvolution:   cfg.Sink.PartitionSpecEvolution,
			SchemaEvolution: cfg.Sink.SchemaEvolution == "add-columns",
			DeadLetter:      cfg.Sink.DeadLetterTable,
			Overwrite:       cfg.Sink.Mode == "complete",
			Table:           p.fixed,
			Properties:      cfg.Sink.SnapshotProperties,
			Logger:          p.opts.Logger,
		})
	}
	p.partition = partitionFields
	if cfg.Sink.Upserts() {
		budget := cfg.Sink.Upsert.KeyIndexBytes
		if budget == 0 {
			budget = 256 << 20
		}
		p.keys = upsert.NewKeyIndex(budget)
	}
	if cfg.Maintenance.On() && !cfg.Sink.Console() {
		p.maintainer = maintenance.NewScheduler(cfg.Maintenance, cat, p.opts.Logger)
		p.maintainer.OnRun = p.opts.OnMaintenance
	}
	return p, nil
}

// formatVersion is the format version of a table the sink creates: 3 in
// mode upsert (deletion vectors) unless the sink says otherwise.
func formatVersion(s *config.Sink) int {
	if s.FormatVersion == 0 && s.Upserts() {
		return 3
	}
	return s.FormatVersion
}

// tableProperties are the properties of a table the sink creates: in mode
// upsert, a bloom filter on each key column, which lets a batch's key
// lookup skip row groups without its keys, unless the sink's properties
// say otherwise; the sink's overrides over all of them.
func tableProperties(s *config.Sink) map[string]string {
	if (!s.Upserts() || len(s.IdentifierFields) == 0) && len(s.TableOverrides) == 0 {
		return s.TableProperties
	}
	props := make(map[string]string, len(s.TableProperties)+len(s.IdentifierFields)+len(s.TableOverrides))
	maps.Copy(props, s.TableProperties)
	if s.Upserts() {
		for _, k := range s.IdentifierFields {
			if _, set := props[config.BloomFilterEnabledPrefix+k]; !set {
				props[config.BloomFilterEnabledPrefix+k] = "true"
			}
		}
	}
	maps.Copy(props, s.TableOverrides)
	return props
}

// sameSource is the source's test for another name of its input, or nil.
func sameSource(src source.Source) func(string) bool {
	if a, ok := src.(source.Aliased); ok {
		return a.SameSource
	}
	return nil
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
	err := errors.Join(p.source.Close(), p.checkpoint.Close())
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
	var sum Summary
	if cs, ok := p.source.(cluster.Source); ok && p.cfg.Trigger.Kind == "processing-time" && p.tables != nil {
		m, ok, err := cs.JoinCluster(ctx)
		if err != nil {
			return sum, err
		}
		if ok {
			return p.runCluster(ctx, m)
		}
	}
	if err := p.checkOtherQueries(ctx); err != nil {
		return sum, err
	}
	var err error
	if p.input, err = p.checkpoint.Check(ctx, p.against()); err != nil {
		return sum, err
	}
	start, next, err := p.recover(ctx, &sum)
	if err != nil {
		return sum, err
	}
	var limit source.ReadLimit
	limit.MaxFiles, limit.MaxBytes, limit.MaxRows = p.cfg.Source.ReadLimits()
	trig := p.cfg.Trigger
	switch trig.Kind {
	case "once":
		if _, err := p.runNext(ctx, &start, &next, source.ReadLimit{}, &sum); err != nil {
			return sum, err
		}
	case "processing-time":
		// A stream outlives transient failures (storage or catalog briefly
		// unreachable): it backs off and resumes from the checkpoint, which
		// re-runs a batch whose offsets were recorded exactly as planned.
		err := p.loop(func() int64 { return next }).Run(ctx, func(ctx context.Context, retry bool) (bool, error) {
			if retry {
				// On failure next stays the batch that failed, which the
				// recovery re-runs.
				s, n, err := p.recover(ctx, &sum)
				if err != nil {
					return false, err
				}
				start, next = s, n
			}
			return p.runNext(ctx, &start, &next, limit, &sum)
		})
		if err != nil {
			return sum, err
		}
	default: // available-now
		if err := p.source.PrepareForAvailableNow(ctx); err != nil {
			return sum, err
		}
		for !p.stopping.Load() {
			ran, err := p.runNext(ctx, &start, &next, limit, &sum)
			if err != nil {
				return sum, err
			}
			if !ran {
				break
			}
		}
	}
	p.flushWarnings()
	if p.cfg.FailOnEmpty && sum.Rows == 0 {
		if p.cfg.Source.Type == "iceberg" {
			return sum, fmt.Errorf("%w: no data file was appended to %s since the last batch, or no row of those appended matches source.filter; "+
				"check source.table and the stream-from-timestamp option", ErrNoInput, p.cfg.Source.Table)
		}
		return sum, fmt.Errorf("%w in %s (%s); check source.path, source.recursive and path-glob-filter", ErrNoInput, p.cfg.Source.Path, p.source.Description())
	}
	return sum, nil
}

// idlePoll is the least time between two looks at a source that had
// nothing new, whatever the trigger interval; Spark's pollingDelay plays
// this part.
const idlePoll = 100 * time.Millisecond

// maxRetries is how many times in a row a stream retries a failed batch
// (or a worker a failed interval), with backoff from the trigger's
// interval up to maxBackoff, before it exits non-zero.
const (
	maxRetries = 10
	maxBackoff = 5 * time.Minute
)

// loop is the stream's run loop (engine.Loop) under the pipeline's
// trigger; batch names the batch a failure warning is about.
func (p *Pipeline) loop(batch func() int64) engine.Loop {
	return engine.Loop{Interval: p.cfg.Trigger.Interval, Idle: idlePoll, MaxRetries: maxRetries, MaxBackoff: maxBackoff,
		Transient: transient, Stopped: p.stopping.Load, Stop: p.stopCh, OnIdle: p.opts.OnPoll,
		OnFailure: func(err error, failures int, retryIn time.Duration) {
			id := batch()
			p.warn(fmt.Sprintf("batch %d failed (%d in a row), retrying in %v: %v", id, failures, retryIn, err))
			if p.opts.OnBatchFailed != nil {
				p.opts.OnBatchFailed(id, err)
			}
		}}
}

// transient tells failures worth retrying from those that will fail the
// same way again (bad input, configuration, a checkpoint owned elsewhere).
func transient(err error) bool {
	for _, permanent := range []error{ErrBadInput, ErrConfig, ErrTableUnreadable, ErrCheckpointMismatch, ErrCheckpointInUse, ErrQueryConflict, ErrTableLost, ErrSourceCannotContinue, context.Canceled} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// checkOtherQueries refuses a new checkpoint against a table that holds
// another query's output from the same source: that query's files would be
// ingested a second time. A fixed table is checked at once; the tables of a
// template as the first batch reaches them.
func (p *Pipeline) checkOtherQueries(ctx context.Context) error {
	last, err := p.checkpoint.LatestCommit()
	if err != nil {
		return err
	}
	if p.tables == nil {
		return nil
	}
	newQuery := last < 0 && !p.cfg.AllowNewQuery
	p.tables.RefuseOtherQueries(newQuery)
	if newQuery && p.fixed != "" {
		_, err = p.tables.Load(ctx, p.fixed)
	}
	return err
}

// recover finds where the query stopped. A batch with an offsets entry and
// no commits entry is re-run with exactly the same offsets and batch id.
func (p *Pipeline) recover(ctx context.Context, sum *Summary) (source.Offset, int64, error) {
	lastOff, err := p.checkpoint.LatestOffsets()
	if err != nil {
		return nil, 0, err
	}
	lastCommit, err := p.checkpoint.LatestCommit()
	if err != nil {
		return nil, 0, err
	}
	if lastOff < 0 {
		return p.source.InitialOffset(), 0, nil
	}
	entry, err := p.checkpoint.Offsets(lastOff)
	if err != nil {
		return nil, 0, err
	}
	if lastCommit < lastOff {
		if m := entry.Conf["mode"]; m != "" && m != p.cfg.Sink.Mode {
			// A planned batch is re-run as planned, like Spark's offset log
			// pins the configuration it ran with.
			return nil, 0, fmt.Errorf("%w: batch %d was planned in %s mode and did not finish; run once more with mode %s to finish it, then change the mode", ErrCheckpointMismatch, lastOff, m, m)
		}
		p.opts.Logger.Info("re-running batch that did not finish", "batch", lastOff)
		if err := p.runBatch(ctx, entry, time.Now(), 0, sum, true); err != nil {
			return nil, 0, err
		}
	}
	return entry.End, lastOff + 1, nil
}

// runNext plans and runs the next batch; ran is false when there was no new
// input.
func (p *Pipeline) runNext(ctx context.Context, start *source.Offset, next *int64, limit source.ReadLimit, sum *Summary) (bool, error) {
	began := time.Now()
	end, err := p.source.LatestOffset(ctx, *start, limit)
	p.flushWarnings()
	if err != nil {
		return false, fmt.Errorf("plan batch %d: %w", *next, err)
	}
	latestMs := time.Since(began).Milliseconds()
	if string(end) == string(*start) {
		return false, nil
	}
	entry := checkpoint.OffsetEntry{BatchID: *next, TimestampMs: time.Now().UnixMilli(), Start: *start, End: end,
		Conf: map[string]string{"mode": p.cfg.Sink.Mode}}
	if err := p.runBatch(ctx, entry, began, latestMs, sum, false); err != nil {
		return false, err
	}
	*start, *next = end, *next+1
	return true, nil
}

// runBatch writes the offsets entry (when new), the data files, the table
// commit and the commits entry, in that order.
func (p *Pipeline) runBatch(ctx context.Context, entry checkpoint.OffsetEntry, began time.Time, latestMs int64, sum *Summary, rerun bool) error {
	t := time.Now()
	if err := p.checkpoint.WriteOffsets(entry); err != nil {
		return err
	}
	walMs := time.Since(t).Milliseconds()

	t = time.Now()
	prog := &Progress{ID: p.checkpoint.Metadata.ID, RunID: p.runID, BatchID: entry.BatchID,
		Timestamp: progressTime(began)}
	// A re-run batch of a table template may be in some of its tables
	// already: which, only its rows can tell.
	mayBeCommitted := rerun && p.route != nil
	res, held, err := p.writeBatch(ctx, entry, prog, mayBeCommitted)
	if err != nil {
		// Forget the batch only on bad input: then nothing of it reached the
		// table (a re-run batch is looked up in the table before anything is
		// read), and the checkpoint must be left as it was. Any other
		// failure keeps offsets/N, so the next run re-runs the same batch
		// with the same files: it may already be in the table.
		if errors.Is(err, ErrBadInput) && mayBeCommitted {
			return fmt.Errorf("%w; batch %d was re-run after a stop and may already be in some of the tables of %s, so it is kept to be re-run again: restore or fix the file, or set on-bad-file: quarantine", err, entry.BatchID, p.cfg.Sink.Table)
		}
		if errors.Is(err, ErrBadInput) && ctx.Err() == nil {
			if rerr := p.checkpoint.RemoveOffsets(entry.BatchID); rerr != nil {
				p.opts.Logger.Warn("could not remove offsets of failed batch", "batch", entry.BatchID, "err", rerr)
			} else if ds, ok := p.source.(source.Discarder); ok {
				if derr := ds.Discard(ctx, entry.Start, entry.End); derr != nil {
					p.opts.Logger.Warn("could not discard the source's plan of failed batch", "batch", entry.BatchID, "err", derr)
				}
			}
		}
		return err
	}
	addMs := time.Since(t).Milliseconds()

	t = time.Now()
	var input map[string]string
	if rs, ok := p.source.(source.Recorder); ok && p.tables != nil {
		if input, err = rs.BatchInput(p.input, entry.Start, entry.End); err != nil {
			return fmt.Errorf("batch %d: %w", entry.BatchID, err)
		}
	}
	rec := &commit.Record{Batch: entry.BatchID, Source: p.checkpoint.Metadata.Source, Offset: entry.End, Input: input, Branch: p.cfg.Sink.Branch}
	upserts := p.takeUpserts()
	var deletes commit.Deletes
	if upserts != nil {
		defer upserts.Changes.Release()
		if tbl, err := p.tables.Load(ctx, p.fixed); err != nil {
			return err
		} else if tbl != nil || len(res.Files) > 0 {
			deletes = upserts
		}
	}
	done := checkpoint.CommitEntry{BatchID: entry.BatchID, Rows: res.Rows, Input: input}
	switch {
	case held.ok:
		done.Snapshots = map[string]int64{p.cfg.Sink.Table: held.id()}
		if tbl := p.tables.Cached(p.fixed); tbl != nil {
			done.MetadataFiles = map[string]string{p.fixed: tbl.MetadataLocation()}
		}
		prog.Sink.SnapshotID = held.id()
		// The batch was committed by the run that stopped: count its rows.
		res.Rows = commit.AddedRows(held.snap)
		done.Rows = res.Rows
	case len(res.Files) > 0 || p.cfg.Sink.Mode == "complete" && res.Parts > 0 || deletes != nil:
		// A complete-mode batch that read input but no rows empties the
		// table; one whose files were all set aside commits nothing.
		if p.opts.ForEachBatch != nil {
			if err := p.opts.ForEachBatch(ctx, entry.BatchID, res.Files); err != nil {
				res.Remove(ctx)
				return fmt.Errorf("batch %d: for-each-batch hook: %w", entry.BatchID, err)
			}
		}
		tcs, err := p.tables.Commit(ctx, entry.BatchID, res.Files, res.Tables, rec, deletes)
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
			res.Rows += tc.Rows
			prog.Sink.CommitRetries += tc.Retries
			if !tc.Existing && tc.SnapshotID != 0 {
				sum.Snapshots++
			}
		}
		done.Rows = res.Rows
		if len(tcs) == 1 {
			prog.Sink.SnapshotID = tcs[0].SnapshotID
		}
		if p.route != nil {
			prog.Sink.Tables = make([]TableProgress, len(tcs))
			for i, tc := range tcs {
				prog.Sink.Tables[i] = TableProgress{Table: tc.Table, SnapshotID: tc.SnapshotID, NumOutputRows: tc.Rows, DataFiles: tc.DataFiles, CommitRetries: tc.Retries}
			}
		}
	case p.fixed != "" && input != nil:
		// No rows, so no snapshot; the table's record must still cover the
		// batch's input, or the next start would find the source's log
		// ahead of the table.
		meta, err := p.tables.Record(ctx, p.fixed, rec)
		if err != nil {
			return err
		}
		if meta != "" {
			done.MetadataFiles = map[string]string{p.fixed: meta}
		}
	}
	done.TimestampMs = time.Now().UnixMilli()
	if err := p.checkpoint.WriteCommit(done); err != nil {
		return err
	}
	p.input = input
	if err := p.source.Commit(ctx, entry.End); err != nil {
		p.opts.Logger.Warn("source clean-up after commit failed", "batch", entry.BatchID, "err", err)
	}
	p.flushWarnings()
	commitMs := time.Since(t).Milliseconds()

	total := time.Since(began)
	prog.NumInputRows = res.Rows
	prog.DurationMs = Durations{LatestOffset: latestMs, AddBatch: addMs, Commit: commitMs, WalCommit: walMs, TriggerExecution: total.Milliseconds()}
	if secs := total.Seconds(); secs > 0 {
		prog.ProcessedRowsPerSecond = float64(res.Rows) / secs
		prog.InputRowsPerSecond = prog.ProcessedRowsPerSecond
	}
	prog.Sources = []SourceProgress{{Description: p.checkpoint.Metadata.Source, StartOffset: entry.Start, EndOffset: entry.End,
		NumInputFiles: res.Parts, NumInputRows: res.Rows, InputRowsPerSecond: prog.InputRowsPerSecond, ProcessedRowsPerSecond: prog.ProcessedRowsPerSecond}}
	prog.Sink.Description = fmt.Sprintf("IcebergSink[%s]", p.cfg.Sink.Table)
	if p.cfg.Sink.Console() {
		prog.Sink.Description = "ConsoleSink"
	}
	prog.Sink.NumOutputRows = res.Rows
	if ms, ok := p.source.(source.MetricsReporter); ok {
		prog.Sources[0].LatestOffset, prog.Sources[0].Metrics = ms.Metrics(entry.End)
	}
	if upserts != nil {
		prog.Sink.Upsert = upsertProgress(upserts)
		prog.NumInputRows = upserts.Changes.Rows
		prog.Sources[0].NumInputRows = upserts.Changes.Rows
	}
	prog.Sink.DataFiles = len(res.Files)
	prog.Sink.PeakOpenFiles = res.PeakOpenFiles
	if bs, ok := p.source.(source.BacklogReporter); ok {
		if b, ok := bs.Backlog(); ok {
			prog.Backlog = &b
		}
	}
	if held.ok {
		sum.Recovered++
	} else {
		sum.Batches++
		sum.Rows += res.Rows
	}
	p.record(*prog)
	if p.maintainer != nil && len(done.Snapshots) > 0 {
		tables := map[string]*table.Table{}
		for name := range done.Snapshots {
			tables[name] = p.tables.Cached(name)
		}
		p.tables.Adopt(p.maintainer.AfterBatch(ctx, maintenance.BatchCommitted{BatchID: entry.BatchID, QueryID: p.checkpoint.Metadata.ID, Tables: tables}))
	}
	return nil
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

// writeBatch reads the batch's parts and writes its data files. Files still
// being written are dropped from the batch and retried later; with
// on-bad-file quarantine, bad files are moved aside and the batch goes on
// without them. held is set when the table already holds the batch.
func (p *Pipeline) writeBatch(ctx context.Context, entry checkpoint.OffsetEntry, prog *Progress, mayBeCommitted bool) (res write.Result, held heldBatch, err error) {
	// Each turn drops one file from the batch, so the loop ends; the bound
	// guards against a source that fails to drop it.
	for turn := 0; ; turn++ {
		if err := p.handTableSchema(ctx); err != nil {
			return write.Result{}, heldBatch{}, err
		}
		parts, err := p.source.Read(ctx, entry.Start, entry.End)
		if err != nil {
			return write.Result{}, heldBatch{}, fmt.Errorf("read batch %d: %w", entry.BatchID, err)
		}
		if len(parts) == 0 {
			return write.Result{}, heldBatch{}, nil
		}
		if turn > len(parts)+1 {
			return write.Result{}, heldBatch{}, fmt.Errorf("batch %d: the source keeps handing back files it was asked to drop", entry.BatchID)
		}
		var res write.Result
		if p.tables == nil {
			if res.Rows, err = write.Print(ctx, p.stdout(), parts, p.project); err == nil {
				res.Parts = len(parts)
				return res, heldBatch{}, nil
			}
		} else {
			if p.fixed != "" && !p.clustered {
				// A re-run of a batch the stopped run committed is found
				// before anything is read; a template's tables are known
				// only once rows are routed, and each commit checks its own.
				if held.snap, held.ok, err = p.tables.Holds(ctx, p.fixed, entry.BatchID); err != nil || held.ok {
					return write.Result{}, held, err
				}
			}
			var schema *arrow.Schema
			if p.cfg.Sink.SchemaEvolution == "add-columns" {
				schema, err = conform.PartsSchema(ctx, parts, p.project)
				if err == nil && p.cfg.Sink.Upserts() {
					schema = upsert.SpecFor(p.cfg, nil, false).Written(schema)
				}
			}
			if err == nil {
				p.tables.StartBatch(schema)
				if p.cfg.Sink.Upserts() {
					res, err = p.writeUpserts(ctx, entry.BatchID, parts)
				} else {
					res, err = p.writer(entry.BatchID).Write(ctx, parts)
				}
				if err == nil {
					return res, heldBatch{}, nil
				}
			}
		}
		var uf *UnstableFileError
		var bf *BadFileError
		switch {
		case errors.As(err, &uf) && mayBeCommitted:
			// Leaving the file for a later batch would ingest it twice into
			// the tables that already hold this one.
			return write.Result{}, heldBatch{}, fmt.Errorf("batch %d, re-run after a stop, may already be committed to some of the tables of %s, but %s changed since it was planned: %w; restore the file as it was, or move it aside with on-bad-file: quarantine", entry.BatchID, p.cfg.Sink.Table, uf.Path, err)
		case errors.As(err, &uf):
			p.warn(uf.Error())
			prog.Deferred = append(prog.Deferred, uf.Path)
			if err := p.exclude(ctx, entry, uf.Path); err != nil {
				return write.Result{}, heldBatch{}, err
			}
		case errors.As(err, &bf) && p.cfg.OnBadFile == "quarantine":
			moved, qerr := p.checkpoint.Quarantine(bf.Path)
			if qerr != nil {
				return write.Result{}, heldBatch{}, fmt.Errorf("%w (and quarantine failed: %v)", err, qerr)
			}
			p.warn(fmt.Sprintf("quarantined %s to %s: %v", bf.Path, moved, bf.Err))
			prog.Quarantined = append(prog.Quarantined, QuarantinedFile{Path: bf.Path, MovedTo: moved, Reason: bf.Err.Error()})
			if err := p.exclude(ctx, entry, bf.Path); err != nil {
				return write.Result{}, heldBatch{}, err
			}
		default:
			return write.Result{}, heldBatch{}, fmt.Errorf("batch %d: %w", entry.BatchID, err)
		}
	}
}

// handTableSchema gives a source that infers types the schema of the
// table its batch goes to, as it is now.
func (p *Pipeline) handTableSchema(ctx context.Context) error {
	ts, ok := p.source.(source.SchemaAware)
	if !ok {
		return nil
	}
	var schema *iceberg.Schema
	if p.fixed != "" {
		tbl, err := p.tables.Load(ctx, p.fixed)
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

func (p *Pipeline) exclude(ctx context.Context, entry checkpoint.OffsetEntry, name string) error {
	ex, ok := p.source.(source.Excluder)
	if !ok {
		return fmt.Errorf("source %s cannot drop %s from batch %d", p.source.Description(), name, entry.BatchID)
	}
	return ex.Exclude(ctx, entry.End, []string{name})
}

// writer is the batch's writer, routing rows through the sink's template
// when there is one.
func (p *Pipeline) writer(batchID int64) *write.Writer {
	return &write.Writer{
		Tables:         p.tables,
		Name:           p.fixed,
		Route:          p.route,
		FilePrefix:     fmt.Sprintf("%s-%05d", p.checkpoint.Metadata.ID[:8], batchID),
		Project:        p.project,
		Conform:        p.conform,
		TargetFileSize: p.cfg.Sink.TargetFileSizeBytes,
		MaxOpenFiles:   p.cfg.Sink.MaxOpenFiles,
		Clustered:      !p.cfg.Sink.Fanout(),
	}
}

func (p *Pipeline) stdout() io.Writer {
	if p.opts.Stdout != nil {
		return p.opts.Stdout
	}
	return os.Stdout
}

func (p *Pipeline) warn(msg string) {
	if p.opts.OnWarning != nil {
		p.opts.OnWarning(msg)
		return
	}
	p.opts.Logger.Warn(msg)
}

func (p *Pipeline) flushWarnings() {
	for _, w := range p.source.Warnings() {
		p.warn(w)
	}
}
