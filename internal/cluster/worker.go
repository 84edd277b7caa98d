package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/engine"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/source"
)

// Interval is what one interval of a worker did: the facts its progress
// record reports.
type Interval struct {
	// QueryID is the cluster's query; Worker this worker's id.
	QueryID, Worker string
	// BatchID is the worker's count of published batches.
	BatchID int64
	Began   time.Time
	Group   string
	// Generation and Coordinator are the worker's place in the group;
	// Partitions counts the partitions it holds.
	Generation  int32
	Coordinator bool
	Partitions  int
	// Published is the batch the interval wrote and published, nil when
	// there was nothing new.
	Published *engine.Batch
	// Waiting counts this worker's published ranges the table has not
	// committed yet; CommitLag is the age of the oldest.
	Waiting   int
	CommitLag time.Duration
	// Committed is what the worker committed as the coordinator, nil when
	// it is not the coordinator or was fenced.
	Committed *Committed
	// Snapshot is set when Committed added a snapshot.
	Snapshot bool
	Total    time.Duration
}

// stall is the least time a published range waits for its commit before
// its worker reads the partition again from the table's end.
const stall = 30 * time.Second

// Worker runs a query as one worker of its source's group, under the
// engine's run loop.
type Worker struct {
	Engine  *engine.Engine
	Member  Member
	Catalog catalog.Catalog
	// OnInterval hears of each interval that published or committed.
	OnInterval func(Interval)

	c     *commit.Committer
	coord Coordinator
	pos   Positions
	limit source.ReadLimit
	batch int64
}

// Run runs intervals until the query is stopped or fails for good; a
// worker that cannot go on says so and leaves the group, whose other
// workers take its partitions (and, from a coordinator, the commits). A
// stopped coordinator commits once more before it leaves (handOver).
func (w *Worker) Run(ctx context.Context) error {
	defer w.Member.Close()
	e := w.Engine
	cfg := e.Config
	if cfg.Sink.Mode != "append" && !cfg.Sink.Upserts() {
		return fmt.Errorf("%w: a cluster (kafka.group.id with a processing-time trigger) appends or upserts; mode %s needs a single worker: drop kafka.group.id", ingest.ErrConfig, cfg.Sink.Mode)
	}
	if cfg.OnBadRecord == "dead-letter" {
		// A commit of two tables needs the state table's two phases, which
		// only template sinks have in a cluster so far.
		return fmt.Errorf("%w: on-bad-record: dead-letter runs in a single process: its dead letters and rows are two tables' commits; drop kafka.group.id, or use on-bad-record: fail", ingest.ErrConfig)
	}
	if err := e.Checkpoint.Accept(); err != nil {
		return err
	}
	home := e.Fixed
	if home == "" {
		var err error
		if home, err = StateTable(cfg.Sink.Table, cfg.Source.Options[OptionStateTable], w.Member.Group()); err != nil {
			return err
		}
	}
	ident, err := ingest.ParseIdent(home)
	if err != nil {
		return err
	}
	w.c = &commit.Committer{Catalog: w.Catalog, Ident: ident, QueryID: QueryID(w.Member.Group()), Source: e.Source.Description(),
		SameSource: source.SameSourceOf(e.Source), Logger: e.Hooks.Logger, Branch: cfg.Sink.Branch}
	w.coord = Coordinator{Committer: w.c, Logger: e.Hooks.Logger, Current: w.Member.Current, Discontinuities: w.Member.Discontinuities}
	if e.Fixed == "" {
		if err := ensureStateTable(ctx, w.c, cfg.Sink.Table); err != nil {
			return err
		}
		w.c.Branch = ""
		w.coord.Destinations = &Destinations{Catalog: w.Catalog, QueryID: w.c.QueryID, Source: w.c.Source, Branch: cfg.Sink.Branch, Logger: e.Hooks.Logger, state: home}
	}
	if cfg.Sink.Upserts() {
		w.coord.Upsert = &Upsert{Keys: e.UpsertKeys, Index: e.KeyIndex()}
	}
	w.pos = Positions{Stall: max(10*cfg.Trigger.Interval, stall)}
	w.limit.MaxFiles, w.limit.MaxBytes, w.limit.MaxRows = cfg.ReadLimits()
	e.InCluster()
	err = e.Loop(func() int64 { return w.batch }).Run(ctx, func(ctx context.Context, _ bool) (bool, error) {
		return w.interval(ctx)
	})
	if err == nil && ctx.Err() == nil {
		w.handOver(ctx)
	}
	return err
}

// interval writes the held partitions' new messages and publishes them,
// then, on the coordinator, commits what every worker published; ran
// tells that it had something to report.
func (w *Worker) interval(ctx context.Context) (bool, error) {
	e := w.Engine
	began := time.Now()
	a, err := w.Member.Assignment(ctx)
	if err != nil {
		return false, err
	}
	tbl, err := w.c.Load(ctx)
	if err != nil {
		return false, err
	}
	rec, st, err := Recorded(tbl, w.c)
	if err != nil {
		return false, err
	}
	recorded := st.Ends
	if tbl != nil && e.Fixed != "" {
		// The table as it is now, for this interval's writes: another
		// worker may have evolved it, or it may have been created again.
		e.Tables.Adopt(map[string]*table.Table{e.Fixed: tbl})
	}
	start := w.pos.Start()
	var missing []TopicPartition
	for _, tp := range a.Held {
		_, rec := recorded.Get(tp)
		_, tracked := start.Get(tp)
		if !rec && !tracked {
			missing = append(missing, tp)
		}
	}
	initial := Offsets{}
	if len(missing) > 0 {
		if initial, err = w.Member.Initial(ctx, missing, rec != nil || len(recorded) > 0); err != nil {
			return false, err
		}
	}
	w.pos.Sync(a.Held, recorded, initial, began)
	start = w.pos.Start()
	if e.Config.Sink.Upserts() {
		// A partition's next range waits for the commit of its last: the
		// coordinator commits one range of a partition at a time (Chain).
		start = w.pos.Idle()
	}
	ranges, err := w.Member.Plan(ctx, start, st.IDs, w.limit)
	if err != nil {
		return false, err
	}
	for i, r := range ranges {
		// A range planned on a log the coordinator sets back since is
		// never committed (Chain).
		ranges[i].Resets, _ = st.Resets.Get(r.TopicPartition)
	}
	iv := Interval{QueryID: w.c.QueryID, Worker: e.Checkpoint.Metadata.ID, BatchID: w.batch, Began: began, Group: w.Member.Group(),
		Generation: a.Generation, Coordinator: a.Coordinator, Partitions: len(a.Held)}
	if len(ranges) > 0 {
		b := &engine.Batch{ID: w.batch, Began: began, LatestOffset: time.Since(began)}
		if err := w.publish(ctx, a, ranges, b); err != nil {
			return false, err
		}
		iv.Published = b
	}
	ends := recorded
	if a.Coordinator {
		done, err := w.coord.Step(ctx, a.Generation, w.Member.ReadControl, time.Now())
		switch {
		case errors.Is(err, ErrFenced):
			e.Warn(err.Error())
		case err != nil:
			return false, err
		case done.Tables != nil:
			// A template sink's commit.
			ends = done.Ends
			iv.Snapshot = len(done.Tables) > 0
			e.Tables.Adopt(done.Tables)
			if e.Maintainer != nil && len(done.Tables) > 0 {
				e.Tables.Adopt(e.Maintainer.AfterBatch(ctx, maintenance.BatchCommitted{BatchID: done.Batch, QueryID: w.c.QueryID, Tables: done.Tables}))
			}
		case done.Table != nil && done.Files == 0 && done.Keys == 0:
			// Partitions set back, no snapshot.
			ends = done.Ends
			e.Tables.Adopt(map[string]*table.Table{e.Fixed: done.Table})
		case done.Table != nil:
			iv.Snapshot = true
			ends = done.Ends
			e.Tables.Adopt(map[string]*table.Table{e.Fixed: done.Table})
			if e.Maintainer != nil {
				// The coordinator is the table's only appender, so its
				// maintenance between commits races no append of the cluster.
				e.Tables.Adopt(e.Maintainer.AfterBatch(ctx, maintenance.BatchCommitted{BatchID: done.Batch, QueryID: w.c.QueryID,
					Tables: map[string]*table.Table{e.Fixed: done.Table}}))
			}
		}
		for _, msg := range Describe(done.SetBack) {
			e.Warn(fmt.Sprintf("kafka source: %s; reading again from the earliest offset, as failOnDataLoss is false", msg))
		}
		if err == nil {
			iv.Committed = &done
		}
	} else {
		w.coord.Reset()
	}
	w.Member.CommitGroup(ctx, ends)
	iv.Waiting, iv.CommitLag = w.pos.Waiting(time.Now())
	if len(ranges) == 0 && iv.Committed == nil {
		return false, nil
	}
	iv.Total = time.Since(began)
	if w.OnInterval != nil {
		w.OnInterval(iv)
	}
	return true, nil
}

// publish writes the ranges' messages into data files and publishes them
// as one event.
func (w *Worker) publish(ctx context.Context, a Assignment, ranges []Range, b *engine.Batch) error {
	e := w.Engine
	st, en := Offsets{}, Offsets{}
	for _, r := range ranges {
		st.Set(r.TopicPartition, r.From)
		en.Set(r.TopicPartition, r.Until)
	}
	entry := checkpoint.OffsetEntry{BatchID: w.batch, TimestampMs: time.Now().UnixMilli(), Start: source.EncodeOffset(st), End: source.EncodeOffset(en)}
	t := time.Now()
	res, err := e.WriteBatch(ctx, entry, b, false)
	if err != nil {
		return err
	}
	b.AddBatch = time.Since(t)
	ev := Event{Output: Output{Table: e.Fixed}, Ranges: ranges}
	u := res.Upserts()
	if u != nil {
		defer u.Changes.Release()
	}
	if e.Fixed == "" {
		ev, err = NewTemplateEvent(res.Tables, res.Files, ranges)
	} else if tbl := e.Tables.Cached(e.Fixed); tbl != nil {
		if ev, err = NewEvent(tbl, res.Files, ranges); err == nil && u != nil {
			err = putKeys(ctx, tbl, &ev.Output, u)
		}
	}
	if err != nil {
		res.Remove(ctx)
		return err
	}
	ev.Worker, ev.Generation, ev.WrittenMs = e.Checkpoint.Metadata.ID, a.Generation, time.Now().UnixMilli()
	data, err := ev.Marshal()
	if err != nil {
		res.Remove(ctx)
		return err
	}
	if err := w.Member.Publish(ctx, data); err != nil {
		// A publish that failed may still have reached the control
		// topic (an acknowledgement lost, a timeout): the coordinator
		// may commit its files, so they stay; the files of an event that
		// never arrived are orphans for remove-orphan-files.
		return err
	}
	w.pos.Published(ranges, time.Now())
	w.batch++
	b.Start, b.End = entry.Start, entry.End
	b.Rows, b.InputRows, b.Parts, b.DataFiles = res.Rows, res.Rows, res.Parts, len(res.Files)
	if u != nil {
		b.InputRows = u.Changes.Rows
		b.Upsert = &engine.Upsert{Changes: u.Changes.Rows, Keys: int64(u.Changes.Keys()), DeletedKeys: u.Changes.Deletes}
	}
	if ms, ok := e.Source.(source.MetricsReporter); ok {
		b.SourceLatest, b.SourceMetrics = ms.Metrics(entry.End)
		// Published is not committed: the cluster's commit lag is the
		// age of the worker's ranges waiting for the coordinator.
		delete(b.SourceMetrics, "commitLagMs")
	}
	return nil
}

// putKeys puts the keys an upsert batch changed into its event.
func putKeys(ctx context.Context, tbl *table.Table, ev *Output, u *upsert.Deletes) error {
	recs, err := u.Changes.KeyRecords(ctx)
	if err != nil {
		return err
	}
	keys, err := upsert.EncodeKeys(recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return err
	}
	return putKeySet(ctx, tbl, ev, keys)
}
