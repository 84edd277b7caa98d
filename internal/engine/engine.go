// Package engine runs a query's batches: one batch as a function of its
// offsets, the tables and the checkpoint to a result value (RunBatch, a
// Batch), a query's run under its trigger, and the one loop of a stream,
// used alike by a single process and by a worker of a cluster
// (cluster.Worker).
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/source"
)

// Engine runs one query's batches: it reads a batch's offsets from the
// source, writes its rows, commits them to the tables and records the
// batch in the checkpoint, in that order.
type Engine struct {
	Config     *config.Pipeline
	Source     source.Source
	Checkpoint *checkpoint.Checkpoint
	// Tables are the sink's tables, nil for the console sink; Fixed is
	// the table's name, "" when a template routes rows to several.
	Tables *commit.Tables
	Fixed  string
	// Maintainer runs the maintenance: block between batches; nil when
	// it is off.
	Maintainer *maintenance.Scheduler
	Hooks      Hooks

	route           *write.Router
	project         *conform.Projection
	conform         conform.Options
	partitionFields []partition.Field
	// keys is the table's key index in mode upsert, kept from batch to
	// batch.
	keys *upsert.KeyIndex
	// clustered is set on a worker of a cluster: its batches are
	// published, not committed, and the table's record is the cluster's,
	// not this checkpoint's.
	clustered bool
	// input is the source's account of the query's input after its newest
	// committed batch (source.Recorder), which the next batch extends.
	input map[string]string
}

// Hooks are how the engine reports to its caller.
type Hooks struct {
	Logger *slog.Logger
	// Warn receives planning warnings (files in subdirectories, files
	// changed after ingestion); Logger's Warn when nil.
	Warn func(string)
	// OnBatch hears of each batch that committed.
	OnBatch func(Batch)
	// OnBatchFailed hears of a failed batch a stream will retry.
	OnBatchFailed func(batchID int64, err error)
	// OnIdle hears of each look at the source that found nothing new.
	OnIdle func()
	// OnMaintenance hears of each maintenance task run between batches.
	OnMaintenance func(maintenance.Run)
	// ForEachBatch is called with a batch's data files after they are
	// written and before they are committed.
	ForEachBatch func(ctx context.Context, batchID int64, files []ingest.DataFile) error
	// Stdout receives the rows of a console sink.
	Stdout io.Writer
	// Stopped tells that the query was asked to stop after its current
	// batch; Stop wakes a wait between batches when it is.
	Stopped func() bool
	Stop    <-chan struct{}
}

// New makes the engine of a validated configuration; it checks the
// sink's table name or template and partition fields before anything is
// opened.
func New(cfg *config.Pipeline, h Hooks) (*Engine, error) {
	e := &Engine{Config: cfg, Hooks: h,
		project: conform.NewProjection(cfg.Sink.Keep, cfg.Sink.Drop, cfg.Sink.Only), conform: conform.OptionsFor(&cfg.Sink)}
	if e.Hooks.Logger == nil {
		e.Hooks.Logger = slog.Default()
	}
	if cfg.Sink.Console() {
		return e, nil
	}
	var err error
	if cfg.Sink.IsTemplate() {
		e.route, err = write.NewRouter(cfg.Sink.Table, cfg.Sink.DeadLetterTable, cfg.OnBadRecord == "dead-letter")
	} else if _, err = ingest.ParseIdent(cfg.Sink.Table); err == nil {
		e.Fixed = cfg.Sink.Table
	}
	if err != nil {
		return nil, err
	}
	if e.partitionFields, err = partition.ParseFields(cfg.Sink.PartitionFields); err != nil {
		return nil, err
	}
	return e, nil
}

// Open gives the engine its catalog, source and checkpoint.
func (e *Engine) Open(cat catalog.Catalog, src source.Source, ck *checkpoint.Checkpoint) {
	e.Source, e.Checkpoint = src, ck
	cfg := e.Config
	if cfg.Sink.Console() {
		return
	}
	e.Tables = commit.NewTables(cat, commit.TablesOptions{
		QueryID: ck.Metadata.ID, Source: src.Description(), SameSource: source.SameSourceOf(src), Checkpoint: ck.Dir,
		Branch:    cfg.Sink.Branch,
		Create:    cfg.Sink.CreateTable == nil || *cfg.Sink.CreateTable,
		Overrides: cfg.Sink.TableOverrides,
		CreateOptions: commit.CreateOptions{
			Properties:       tableProperties(&cfg.Sink),
			PartitionFields:  e.partitionFields,
			IdentifierFields: cfg.Sink.IdentifierFields,
			FormatVersion:    formatVersion(&cfg.Sink),
			Defaults:         cfg.Sink.ColumnDefaults,
		},
		SpecEvolution:   cfg.Sink.PartitionSpecEvolution,
		SchemaEvolution: cfg.Sink.SchemaEvolution == "add-columns",
		DeadLetter:      cfg.Sink.DeadLetterTable,
		BadRecords:      cfg.OnBadRecord == "dead-letter",
		Overwrite:       cfg.Sink.Mode == "complete",
		Table:           e.Fixed,
		Properties:      cfg.Sink.SnapshotProperties,
		Logger:          e.Hooks.Logger,
	})
	if cfg.Sink.Upserts() {
		budget := cfg.Sink.Upsert.KeyIndexBytes
		if budget == 0 {
			budget = 256 << 20
		}
		e.keys = upsert.NewKeyIndex(budget)
	}
	if cfg.Maintenance.On() {
		e.Maintainer = maintenance.NewScheduler(cfg.Maintenance, cat, e.Hooks.Logger)
		e.Maintainer.OnRun = e.Hooks.OnMaintenance
	}
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

// Run runs the query under its trigger: first it holds the checkpoint
// against the tables and finishes a batch the last run left planned.
// Cancelling ctx abandons the batch in progress (nothing half-committed:
// its files are deleted, and a re-run redoes it).
func (e *Engine) Run(ctx context.Context) error {
	if err := e.Verify(ctx); err != nil {
		return err
	}
	if err := e.Checkpoint.Accept(); err != nil {
		return err
	}
	start, next, err := e.recover(ctx)
	if err != nil {
		return err
	}
	var limit source.ReadLimit
	limit.MaxFiles, limit.MaxBytes, limit.MaxRows = e.Config.ReadLimits()
	switch e.Config.Trigger.Kind {
	case "once":
		if _, err := e.runNext(ctx, &start, &next, source.ReadLimit{}); err != nil {
			return err
		}
	case "processing-time":
		// A stream outlives transient failures (storage or catalog briefly
		// unreachable): it backs off and resumes from the checkpoint, which
		// re-runs a batch whose offsets were recorded exactly as planned.
		err := e.Loop(func() int64 { return next }).Run(ctx, func(ctx context.Context, retry bool) (bool, error) {
			if retry {
				// On failure next stays the batch that failed, which the
				// recovery re-runs.
				s, n, err := e.recover(ctx)
				if err != nil {
					return false, err
				}
				start, next = s, n
			}
			return e.runNext(ctx, &start, &next, limit)
		})
		if err != nil {
			return err
		}
	default: // available-now
		if err := e.Source.PrepareForAvailableNow(ctx); err != nil {
			return err
		}
		for !e.Hooks.Stopped() {
			ran, err := e.runNext(ctx, &start, &next, limit)
			if err != nil {
				return err
			}
			if !ran {
				break
			}
		}
	}
	e.flushWarnings()
	return nil
}

// Verify holds the checkpoint against its tables as every run does first
// (docs/format/checkpoint.md), and keeps the source's account of the
// input the tables record.
func (e *Engine) Verify(ctx context.Context) error {
	if err := e.checkOtherQueries(ctx); err != nil {
		return err
	}
	var err error
	e.input, err = e.Checkpoint.Check(ctx, checkpoint.Against{Tables: e.Tables, Fixed: e.Fixed, Config: e.Config, Source: e.Source})
	return err
}

// checkOtherQueries refuses a new checkpoint against a table that holds
// another query's output from the same source: that query's files would be
// ingested a second time. A fixed table is checked at once, its partition
// spec too; the tables of a template as the first batch reaches them.
func (e *Engine) checkOtherQueries(ctx context.Context) error {
	last, err := e.Checkpoint.LatestCommit()
	if err != nil {
		return err
	}
	if e.Tables == nil {
		return nil
	}
	newQuery := last < 0 && !e.Config.AllowNewQuery
	e.Tables.RefuseOtherQueries(newQuery)
	if newQuery && e.Fixed != "" {
		if _, err = e.Tables.Load(ctx, e.Fixed); err != nil {
			return err
		}
	}
	if e.Fixed != "" {
		return e.Tables.CheckSpec(ctx, e.Fixed)
	}
	return nil
}

// recover finds where the query stopped. A batch with an offsets entry and
// no commits entry is re-run with exactly the same offsets and batch id.
func (e *Engine) recover(ctx context.Context) (source.Offset, int64, error) {
	lastOff, err := e.Checkpoint.LatestOffsets()
	if err != nil {
		return nil, 0, err
	}
	lastCommit, err := e.Checkpoint.LatestCommit()
	if err != nil {
		return nil, 0, err
	}
	if lastOff < 0 {
		return e.Source.InitialOffset(), 0, nil
	}
	entry, err := e.Checkpoint.Offsets(lastOff)
	if err != nil {
		return nil, 0, err
	}
	if lastCommit < lastOff {
		if m := entry.Conf["mode"]; m != "" && m != e.Config.Sink.Mode {
			// A planned batch is re-run as planned, like Spark's offset log
			// pins the configuration it ran with.
			return nil, 0, fmt.Errorf("%w: batch %d was planned in %s mode and did not finish; run once more with mode %s to finish it, then change the mode", ingest.ErrCheckpointMismatch, lastOff, m, m)
		}
		e.Hooks.Logger.Info("re-running batch that did not finish", "batch", lastOff)
		if err := e.RunBatch(ctx, entry, time.Now(), 0, true); err != nil {
			return nil, 0, err
		}
	}
	return entry.End, lastOff + 1, nil
}

// runNext plans and runs the next batch; ran is false when there was no new
// input.
func (e *Engine) runNext(ctx context.Context, start *source.Offset, next *int64, limit source.ReadLimit) (bool, error) {
	began := time.Now()
	end, err := e.Source.LatestOffset(ctx, *start, limit)
	e.flushWarnings()
	if err != nil {
		return false, fmt.Errorf("plan batch %d: %w", *next, err)
	}
	latest := time.Since(began)
	if string(end) == string(*start) {
		return false, nil
	}
	entry := checkpoint.OffsetEntry{BatchID: *next, TimestampMs: time.Now().UnixMilli(), Start: *start, End: end,
		Conf: map[string]string{"mode": e.Config.Sink.Mode}}
	if err := e.RunBatch(ctx, entry, began, latest, false); err != nil {
		return false, err
	}
	*start, *next = end, *next+1
	return true, nil
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

// Loop is the stream's run loop under the query's trigger, for a single
// process and a cluster worker alike; batch names the batch a failure
// warning is about.
func (e *Engine) Loop(batch func() int64) Loop {
	return Loop{Interval: e.Config.Trigger.Interval, Idle: idlePoll, MaxRetries: maxRetries, MaxBackoff: maxBackoff,
		Transient: transient, Stopped: e.Hooks.Stopped, Stop: e.Hooks.Stop, OnIdle: e.Hooks.OnIdle,
		OnFailure: func(err error, failures int, retryIn time.Duration) {
			id := batch()
			e.Warn(fmt.Sprintf("batch %d failed (%d in a row), retrying in %v: %v", id, failures, retryIn, err))
			if e.Hooks.OnBatchFailed != nil {
				e.Hooks.OnBatchFailed(id, err)
			}
		}}
}

// transient tells failures worth retrying from those that will fail the
// same way again (bad input, configuration, a checkpoint owned elsewhere).
func transient(err error) bool {
	for _, permanent := range []error{ingest.ErrBadInput, ingest.ErrConfig, ingest.ErrTableUnreadable, ingest.ErrCheckpointMismatch,
		ingest.ErrCheckpointInUse, ingest.ErrQueryConflict, ingest.ErrTableLost, ingest.ErrSourceCannotContinue, context.Canceled} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// Warn hands a warning to the Warn hook, or logs it.
func (e *Engine) Warn(msg string) {
	if e.Hooks.Warn != nil {
		e.Hooks.Warn(msg)
		return
	}
	e.Hooks.Logger.Warn(msg)
}

func (e *Engine) flushWarnings() {
	for _, w := range e.Source.Warnings() {
		e.Warn(w)
	}
}

// InCluster makes the engine a worker's of a cluster: its batches are
// published, not committed, and the table's record is the cluster's, not
// this checkpoint's, so a batch is never looked up in the table.
func (e *Engine) InCluster() { e.clustered = true }
