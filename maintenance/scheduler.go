package maintenance

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// Task names, as the maintenance: block and the CLI spell them.
const (
	TaskExpireSnapshots   = "expire-snapshots"
	TaskRewriteManifests  = "rewrite-manifests"
	TaskRewriteDataFiles  = "rewrite-data-files"
	TaskRemoveOrphanFiles = "remove-orphan-files"
)

// Defaults for fields a Go-built configuration leaves zero where zero
// means nothing useful.
const (
	defaultBudget     = 10 * time.Second
	defaultRetainLast = 10
)

// Scheduler carries out a pipeline's maintenance: block. After each
// committed batch it checks, table by table, which tasks are due (cheap
// checks on metadata already loaded) and runs them in order of cost,
// expiry first, within the budget.
type Scheduler struct {
	cfg   config.Maintenance
	cat   catalog.Catalog
	log   *slog.Logger
	start time.Time

	// OnRun, when set, is called after each task run (tests, progress).
	OnRun func(Run)

	mu     sync.Mutex
	tables map[string]*tableState
}

// Run is one task run on one table.
type Run struct {
	Table string
	Task  string
	// Result is the task's result (ExpireResult, ManifestsResult,
	// RewriteResult or OrphanResult).
	Result   any
	Err      error
	Duration time.Duration
}

// tableState counts commits since each task last ran, and when it ran.
type tableState struct {
	since map[string]int
	at    map[string]time.Time
}

// NewScheduler builds the scheduler for cfg.
func NewScheduler(cfg config.Maintenance, cat catalog.Catalog, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	if cfg.Budget <= 0 {
		cfg.Budget = config.Duration(defaultBudget)
	}
	if cfg.ExpireSnapshots.RetainLast <= 0 {
		cfg.ExpireSnapshots.RetainLast = defaultRetainLast
	}
	if cfg.RemoveOrphanFiles.OlderThan <= 0 {
		cfg.RemoveOrphanFiles.OlderThan = config.Duration(DefaultOrphanOlderThan)
	}
	return &Scheduler{cfg: cfg, cat: cat, log: log, start: time.Now(), tables: map[string]*tableState{}}
}

// BatchCommitted describes a committed batch to the scheduler.
type BatchCommitted struct {
	BatchID int64
	// QueryID is the committing query's id (floe.query-id).
	QueryID string
	// Tables maps each table the batch wrote to the table as the commit
	// left it, or to nil when the pipeline does not hold it.
	Tables map[string]*table.Table
}

// AfterBatch runs the tasks due on the batch's tables, in name order,
// until the budget is spent, and returns the tables it changed as they now
// are, so that the pipeline's next commit starts from them instead of
// losing a race to maintenance. Failures are logged: the next batch goes
// on, and the task is tried again when next due.
func (s *Scheduler) AfterBatch(ctx context.Context, b BatchCommitted) map[string]*table.Table {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.Budget))
	defer cancel()
	changed := map[string]*table.Table{}
	for _, name := range slices.Sorted(maps.Keys(b.Tables)) {
		st := s.state(name)
		for task := range st.since {
			st.since[task]++
		}
		if ctx.Err() != nil {
			continue // out of budget: the counts carry over
		}
		tbl, err := s.maintain(ctx, name, b.Tables[name], st)
		if err != nil {
			s.log.Warn("maintenance: could not check table", "table", name, "err", err)
		}
		if tbl != nil {
			changed[name] = tbl
		}
	}
	return changed
}

func (s *Scheduler) state(name string) *tableState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tables[name]
	if !ok {
		st = &tableState{since: map[string]int{}, at: map[string]time.Time{}}
		for _, t := range []string{TaskExpireSnapshots, TaskRewriteManifests, TaskRewriteDataFiles, TaskRemoveOrphanFiles} {
			st.since[t], st.at[t] = 1, s.start
		}
		s.tables[name] = st
	}
	return st
}

// maintain runs the due tasks on one table, given as the batch left it
// (nil: load it), and returns it as they left it, nil when none ran.
func (s *Scheduler) maintain(ctx context.Context, name string, tbl *table.Table, st *tableState) (*table.Table, error) {
	ident, err := ingest.ParseIdent(name)
	if err != nil {
		return nil, err
	}
	if tbl == nil {
		if tbl, err = s.cat.LoadTable(ctx, ident); err != nil {
			return nil, err
		}
	}
	c := s.cfg
	due := func(task string, enabled *bool, every int, interval config.Duration, over bool) bool {
		if !config.TaskOn(enabled) {
			return false
		}
		return over || (every > 0 && st.since[task] >= every) || (interval > 0 && time.Since(st.at[task]) >= time.Duration(interval))
	}
	committed := false // whether a task may have added a snapshot
	run := func(task string, f func() (any, error)) {
		if ctx.Err() != nil {
			return
		}
		committed = true
		t0 := time.Now()
		res, err := f()
		r := Run{Table: name, Task: task, Result: res, Err: err, Duration: time.Since(t0)}
		if err != nil {
			s.log.Warn("maintenance failed; it is tried again when next due", "table", name, "task", task, "err", err)
		} else {
			st.since[task], st.at[task] = 0, time.Now()
			s.log.Debug("maintenance", "table", name, "task", task, "took", r.Duration.Round(time.Millisecond))
		}
		if s.OnRun != nil {
			s.OnRun(r)
		}
	}
	e := c.ExpireSnapshots
	expire := func(snapshots int) {
		if due(TaskExpireSnapshots, e.Enabled, e.EveryCommits, e.Interval, e.MaxSnapshots > 0 && snapshots >= e.MaxSnapshots) {
			run(TaskExpireSnapshots, func() (any, error) {
				return ExpireSnapshots(ctx, s.cat, ident, ExpireOptions{OlderThan: time.Duration(e.OlderThan), RetainLast: e.RetainLast})
			})
		}
	}
	expire(len(tbl.Metadata().Snapshots()))
	m := c.RewriteManifests
	over := false
	if config.TaskOn(m.Enabled) && m.MaxManifests > 0 {
		n, err := manifestCount(ctx, tbl)
		if err != nil {
			return nil, err
		}
		over = n >= m.MaxManifests
	}
	if due(TaskRewriteManifests, m.Enabled, m.EveryCommits, m.Interval, over) {
		run(TaskRewriteManifests, func() (any, error) { return RewriteManifests(ctx, s.cat, ident, 0) })
	}
	r := c.RewriteDataFiles
	if due(TaskRewriteDataFiles, r.Enabled, r.EveryCommits, r.Interval, deletedShare(tbl) >= ratioOrDefault(r.DeleteRatioThreshold)) {
		run(TaskRewriteDataFiles, func() (any, error) {
			return RewriteDataFiles(ctx, s.cat, ident, RewriteOptions{
				TargetFileSize: r.TargetFileSizeBytes, MinInputFiles: r.MinInputFiles, PartialProgress: true,
				DeleteRatioThreshold: r.DeleteRatioThreshold, DeleteFileThreshold: r.DeleteFileThreshold,
			})
		})
	}
	o := c.RemoveOrphanFiles
	if due(TaskRemoveOrphanFiles, o.Enabled, 0, o.Interval, false) {
		run(TaskRemoveOrphanFiles, func() (any, error) {
			fresh, err := s.cat.LoadTable(ctx, ident)
			if err != nil {
				return nil, err
			}
			return RemoveOrphanFiles(ctx, fresh, OrphanOptions{OlderThan: time.Duration(o.OlderThan)})
		})
	}
	if !committed {
		return nil, nil
	}
	fresh, err := s.cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	// The other tasks' replace snapshots count too: the table leaves
	// maintenance below max-snapshots, so the next commit cannot pass it.
	if e.MaxSnapshots > 0 && len(fresh.Metadata().Snapshots()) >= e.MaxSnapshots {
		expire(len(fresh.Metadata().Snapshots()))
		if fresh, err = s.cat.LoadTable(ctx, ident); err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// deletedShare is the share of the current snapshot's rows deleted by
// position (deletion vectors, position deletes), from its summary's totals:
// a check on metadata already loaded. Once it reaches the delete ratio
// threshold, some file has at least that share deleted, and compaction
// rewrites it.
func deletedShare(tbl *table.Table) float64 {
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0
	}
	deleted, _ := strconv.ParseInt(s.Summary.Properties["total-position-deletes"], 10, 64)
	rows, _ := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	if deleted <= 0 || rows <= 0 {
		return 0
	}
	return float64(deleted) / float64(rows)
}

// ratioOrDefault is the delete ratio threshold a Go-built configuration
// leaving it zero means.
func ratioOrDefault(r float64) float64 {
	if r <= 0 {
		return DefaultDeleteRatioThreshold
	}
	return r
}

// String names a run in logs and test failures.
func (r Run) String() string {
	if r.Err != nil {
		return fmt.Sprintf("%s on %s failed after %v: %v", r.Task, r.Table, r.Duration, r.Err)
	}
	return fmt.Sprintf("%s on %s in %v", r.Task, r.Table, r.Duration)
}
