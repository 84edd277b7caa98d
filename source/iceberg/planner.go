package iceberg

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/table"
)

// planner is the asynchronous micro-batch planner
// (async-micro-batch-planning-enabled): a goroutine that polls the table
// every polling interval and reads ahead the manifests of the snapshots
// after the last planned batch, up to the preload limits, so that planning
// a batch finds its files in memory instead of loading the table and its
// manifests between batches. New snapshots become visible at the next
// poll, as in Spark.
type planner struct {
	s         *Source
	interval  time.Duration
	fileLimit int
	rowLimit  int64

	start     sync.Once
	closeOnce sync.Once
	running   atomic.Bool
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}

	mu   sync.Mutex
	tbl  *table.Table
	from offset // where reading ahead starts: the last planned end
}

func newPlanner(s *Source, interval time.Duration, files int, rows int64) *planner {
	return &planner{
		s: s, interval: interval, fileLimit: files, rowLimit: rows,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		from: offset{SnapshotID: noSnapshot},
	}
}

// table is the latest polled table. The first call loads it and starts
// the poller, reading ahead from start, where the query is.
func (p *planner) table(ctx context.Context, start offset) (*table.Table, error) {
	p.mu.Lock()
	tbl := p.tbl
	p.mu.Unlock()
	if tbl == nil {
		var err error
		if tbl, err = p.s.load(ctx); err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.tbl, p.from = tbl, start
		p.mu.Unlock()
	}
	p.start.Do(func() {
		p.running.Store(true)
		go p.run()
	})
	return tbl, nil
}

// advance records the end of a planned batch and asks for the files after
// it to be read ahead.
func (p *planner) advance(end offset) {
	p.mu.Lock()
	p.from = end
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *planner) run() {
	defer close(p.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		p.preload(ctx)
		select {
		case <-p.stop:
			return
		case <-p.wake:
		case <-tick.C:
			if tbl, err := p.s.load(ctx); err != nil {
				if ctx.Err() == nil {
					p.s.log.Warn("iceberg source: background poll failed; planning goes on with the table as last loaded", "table", p.s.name, "err", err)
				}
			} else {
				p.mu.Lock()
				p.tbl = tbl
				p.mu.Unlock()
			}
		}
	}
}

// preload reads the manifests of the snapshots after the last planned
// batch until the preload limits are reached. Errors are left for the
// planning of the batch to report.
func (p *planner) preload(ctx context.Context) {
	p.mu.Lock()
	tbl, from := p.tbl, p.from
	p.mu.Unlock()
	if tbl == nil {
		return
	}
	files, rows := 0, int64(0)
	_ = p.s.walk(ctx, tbl, from, func(u unit) bool {
		files++
		rows += u.file.Count()
		return (p.fileLimit <= 0 || files < p.fileLimit) && (p.rowLimit <= 0 || rows < p.rowLimit)
	})
}

func (p *planner) close() {
	p.closeOnce.Do(func() {
		close(p.stop)
		p.start.Do(func() {}) // never start once closed
		if p.running.Load() {
			<-p.done
		}
	})
}
