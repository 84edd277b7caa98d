package floe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/source"
)

// ClusterProgress is a worker's part of a progress record in a cluster.
type ClusterProgress struct {
	Group       string `json:"group"`
	Generation  int32  `json:"generation"`
	Worker      string `json:"worker"`
	Coordinator bool   `json:"coordinator"`
	Partitions  int    `json:"partitions"`
	// Published is set when the interval published an event.
	Published bool `json:"published"`
	// Waiting counts this worker's published ranges the table has not
	// committed yet; CommitLagMs is the age of the oldest.
	Waiting     int   `json:"waiting"`
	CommitLagMs int64 `json:"commitLagMs"`
	// Committed is what this worker committed as the coordinator.
	Committed *ClusterCommit `json:"committed,omitempty"`
}

// ClusterCommit is one coordinator commit.
type ClusterCommit struct {
	SnapshotID int64 `json:"snapshotId"`
	Events     int   `json:"events"`
	DataFiles  int   `json:"dataFiles"`
	Rows       int64 `json:"rows"`
	// Stale counts events dropped because the table already holds their
	// ranges (a zombie's, or one read again after a stall).
	Stale int `json:"stale"`
	// Waiting counts events waiting for the ranges before them.
	Waiting int `json:"waiting"`
	// LagMs is how long the oldest committed event waited.
	LagMs int64 `json:"lagMs"`
}

// clusterStall is the least time a published range waits for its commit
// before its worker reads the partition again from the table's end.
const clusterStall = 30 * time.Second

// runCluster runs this process as one worker of the source's group.
func (p *Pipeline) runCluster(ctx context.Context, m cluster.Member) (Summary, error) {
	defer m.Close()
	var sum Summary
	switch {
	case p.fixed == "":
		return sum, fmt.Errorf("%w: a cluster (kafka.group.id with a processing-time trigger) writes one table; dynamic destinations need a single worker: drop kafka.group.id or the template", ErrConfig)
	case p.cfg.Sink.Mode != "append":
		return sum, fmt.Errorf("%w: a cluster (kafka.group.id with a processing-time trigger) appends; mode %s needs a single worker: drop kafka.group.id", ErrConfig, p.cfg.Sink.Mode)
	}
	ident, err := ParseIdent(p.fixed)
	if err != nil {
		return sum, err
	}
	c := &commit.Committer{Catalog: p.cat, Ident: ident, QueryID: cluster.QueryID(m.Group()), Source: p.source.Description(),
		SameSource: sameSource(p.source), Logger: p.opts.Logger, Branch: p.cfg.Sink.Branch}
	w := &clusterWorker{p: p, m: m, c: c, coord: cluster.Coordinator{Committer: c, Logger: p.opts.Logger, Current: m.Current, Discontinuities: m.Discontinuities},
		pos: cluster.Positions{Stall: max(10*p.cfg.Trigger.Interval, clusterStall)}}
	w.limit.MaxFiles, w.limit.MaxBytes, w.limit.MaxRows = p.cfg.Source.ReadLimits()
	p.clustered = true
	// A worker that cannot go on says so and leaves the group, whose other
	// workers take its partitions (and, from a coordinator, the commits).
	err = p.loop(func() int64 { return w.batch }).Run(ctx, func(ctx context.Context, _ bool) (bool, error) {
		return w.interval(ctx, &sum)
	})
	return sum, err
}

// clusterWorker is one worker's state from interval to interval.
type clusterWorker struct {
	p     *Pipeline
	m     cluster.Member
	c     *commit.Committer
	coord cluster.Coordinator
	pos   cluster.Positions
	limit source.ReadLimit
	batch int64
}

// interval writes the held partitions' new messages and publishes them,
// then, on the coordinator, commits what every worker published; ran
// tells that it made a progress record.
func (w *clusterWorker) interval(ctx context.Context, sum *Summary) (bool, error) {
	p := w.p
	began := time.Now()
	a, err := w.m.Assignment(ctx)
	if err != nil {
		return false, err
	}
	tbl, err := w.c.Load(ctx)
	if err != nil {
		return false, err
	}
	rec, st, err := cluster.Recorded(tbl, w.c)
	if err != nil {
		return false, err
	}
	recorded := st.Ends
	if tbl != nil {
		// The table as it is now, for this interval's writes: another
		// worker may have evolved it, or it may have been created again.
		p.tables.Adopt(map[string]*table.Table{p.fixed: tbl})
	}
	start := w.pos.Start()
	var missing []cluster.TopicPartition
	for _, tp := range a.Held {
		_, rec := recorded.Get(tp)
		_, tracked := start.Get(tp)
		if !rec && !tracked {
			missing = append(missing, tp)
		}
	}
	initial := cluster.Offsets{}
	if len(missing) > 0 {
		if initial, err = w.m.Initial(ctx, missing, rec != nil || len(recorded) > 0); err != nil {
			return false, err
		}
	}
	w.pos.Sync(a.Held, recorded, initial, began)
	ranges, err := w.m.Plan(ctx, w.pos.Start(), st.IDs, w.limit)
	if err != nil {
		return false, err
	}
	for i, r := range ranges {
		// A range planned on a log the coordinator sets back since is
		// never committed (cluster.Chain).
		ranges[i].Resets, _ = st.Resets.Get(r.TopicPartition)
	}
	latestMs := time.Since(began).Milliseconds()
	prog := &Progress{ID: w.c.QueryID, RunID: p.runID, Timestamp: progressTime(began), BatchID: w.batch,
		Cluster: &ClusterProgress{Group: w.m.Group(), Generation: a.Generation, Worker: p.checkpoint.Metadata.ID, Coordinator: a.Coordinator, Partitions: len(a.Held)}}
	if len(ranges) > 0 {
		if err := w.publish(ctx, a, ranges, prog, latestMs); err != nil {
			return false, err
		}
		sum.Batches++
		sum.Rows += prog.NumInputRows
	}
	ends := recorded
	if a.Coordinator {
		done, err := w.coord.Step(ctx, a.Generation, w.m.ReadControl, time.Now())
		switch {
		case errors.Is(err, cluster.ErrFenced):
			p.warn(err.Error())
		case err != nil:
			return false, err
		case done.Table != nil && done.Files == 0:
			// Partitions set back, no snapshot.
			ends = done.Ends
			p.tables.Adopt(map[string]*table.Table{p.fixed: done.Table})
		case done.Table != nil:
			sum.Snapshots++
			ends = done.Ends
			p.tables.Adopt(map[string]*table.Table{p.fixed: done.Table})
			if p.maintainer != nil {
				// The coordinator is the table's only appender, so its
				// maintenance between commits races no append of the cluster.
				p.tables.Adopt(p.maintainer.AfterBatch(ctx, maintenance.BatchCommitted{BatchID: done.Batch, QueryID: w.c.QueryID,
					Tables: map[string]*table.Table{p.fixed: done.Table}}))
			}
		}
		for _, msg := range cluster.Describe(done.SetBack) {
			p.warn(fmt.Sprintf("kafka source: %s; reading again from the earliest offset, as failOnDataLoss is false", msg))
		}
		if err == nil {
			prog.Cluster.Committed = &ClusterCommit{SnapshotID: done.SnapshotID, Events: done.Events, DataFiles: done.Files, Rows: done.Rows,
				Stale: done.Stale, Waiting: done.Waiting, LagMs: done.LagMs}
			prog.Sink.SnapshotID = done.SnapshotID
		}
	} else {
		w.coord.Reset()
	}
	w.m.CommitGroup(ctx, ends)
	n, oldest := w.pos.Waiting(time.Now())
	prog.Cluster.Waiting, prog.Cluster.CommitLagMs = n, oldest.Milliseconds()
	if len(ranges) == 0 && prog.Cluster.Committed == nil {
		return false, nil
	}
	prog.Sink.Description = fmt.Sprintf("IcebergSink[%s]", p.fixed)
	prog.DurationMs.TriggerExecution = time.Since(began).Milliseconds()
	p.record(*prog)
	return true, nil
}

// publish writes the ranges' messages into data files and publishes them
// as one event.
func (w *clusterWorker) publish(ctx context.Context, a cluster.Assignment, ranges []cluster.Range, prog *Progress, latestMs int64) error {
	p := w.p
	st, en := cluster.Offsets{}, cluster.Offsets{}
	for _, r := range ranges {
		st.Set(r.TopicPartition, r.From)
		en.Set(r.TopicPartition, r.Until)
	}
	entry := checkpoint.OffsetEntry{BatchID: w.batch, TimestampMs: time.Now().UnixMilli(), Start: source.EncodeOffset(st), End: source.EncodeOffset(en)}
	t := time.Now()
	res, _, err := p.writeBatch(ctx, entry, prog, false)
	if err != nil {
		return err
	}
	addMs := time.Since(t).Milliseconds()
	ev := cluster.Event{Table: p.fixed, Ranges: ranges}
	if tbl := p.tables.Cached(p.fixed); tbl != nil {
		if ev, err = cluster.NewEvent(tbl, res.Files, ranges); err != nil {
			res.Remove(ctx)
			return err
		}
	}
	ev.Worker, ev.Generation, ev.WrittenMs = p.checkpoint.Metadata.ID, a.Generation, time.Now().UnixMilli()
	b, err := ev.Marshal()
	if err != nil {
		res.Remove(ctx)
		return err
	}
	if err := w.m.Publish(ctx, b); err != nil {
		// A publish that failed may still have reached the control
		// topic (an acknowledgement lost, a timeout): the coordinator
		// may commit its files, so they stay; the files of an event that
		// never arrived are orphans for remove-orphan-files.
		return err
	}
	w.pos.Published(ranges, time.Now())
	w.batch++
	prog.NumInputRows = res.Rows
	prog.Cluster.Published = true
	prog.DurationMs.LatestOffset, prog.DurationMs.AddBatch = latestMs, addMs
	prog.Sources = []SourceProgress{{Description: p.source.Description(), StartOffset: entry.Start, EndOffset: entry.End, NumInputFiles: res.Parts, NumInputRows: res.Rows}}
	if ms, ok := p.source.(source.MetricsReporter); ok {
		prog.Sources[0].LatestOffset, prog.Sources[0].Metrics = ms.Metrics(entry.End)
		// Published is not committed: the cluster's commit lag is the
		// age of the worker's ranges waiting for the coordinator.
		delete(prog.Sources[0].Metrics, "commitLagMs")
	}
	prog.Sink.NumOutputRows, prog.Sink.DataFiles = res.Rows, len(res.Files)
	return nil
}
