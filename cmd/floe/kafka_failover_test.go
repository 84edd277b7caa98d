package main_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// A cluster's hand-overs with the group timings a worker has when the
// options set none (docs/kafka.md, "Failover"): startClusterWorker passes
// no kafka.session.timeout.ms, heartbeat or rebalance timeout. Times are
// measured between the table's own snapshot timestamps; -kafka=apache
// measures them on the real broker.

// startFailoverCluster starts three workers (with extra arguments) under
// a producer, watching the table's commits, and waits for the first.
func startFailoverCluster(t *testing.T, b kafkatest.Backend, extra ...string) (*env, *kafkatest.Cluster, *commitWatch, *producer, []*clusterWorker) {
	t.Helper()
	e := newEnv(t)
	c := b.Start(t, "events", 6)
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	commits := watchCommits(t, cat)
	producer := startProducer(t, c, 6, 50*time.Millisecond, 31)
	var workers []*clusterWorker
	for range 3 {
		workers = append(workers, startClusterWorker(e, c, fmt.Sprint(len(workers)), extra...))
	}
	commits.wait(t, 1, "the first commit")
	return e, c, commits, producer, workers
}

// failoverLimit is the longest a cluster at a short interval goes without
// a commit when its coordinator is killed, as docs/kafka.md promises.
const failoverLimit = 10 * time.Second

// clusterCommit is one of the cluster's appends to db.events.
type clusterCommit struct {
	id int64
	at time.Time
}

// commitWatch records the cluster's appends to db.events, by the table's
// snapshot timestamps, as they appear: maintenance expires snapshots (by
// default from 25 down to the newest 10), so the table alone forgets them.
type commitWatch struct {
	cat  catalog.Catalog
	mu   sync.Mutex
	seen map[int64]time.Time
	err  error
}

// watchCommits polls the table until the test ends.
func watchCommits(t *testing.T, cat catalog.Catalog) *commitWatch {
	w := &commitWatch{cat: cat, seen: map[int64]time.Time{}}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			w.poll()
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-stopped
	})
	return w
}

func (w *commitWatch) poll() {
	tbl, err := w.cat.LoadTable(context.Background(), table.Identifier{"db", "events"})
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !errors.Is(err, catalog.ErrNoSuchTable) {
			w.err = err
		}
		return
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Operation == table.OpAppend {
			w.seen[s.SnapshotID] = time.UnixMilli(s.TimestampMs)
		}
	}
}

// list is the appends seen so far, oldest first.
func (w *commitWatch) list(t *testing.T) []clusterCommit {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("load db.events: %v", w.err)
	}
	out := make([]clusterCommit, 0, len(w.seen))
	for id, at := range w.seen {
		out = append(out, clusterCommit{id: id, at: at})
	}
	slices.SortFunc(out, func(a, b clusterCommit) int { return a.at.Compare(b.at) })
	return out
}

// wait waits for n appends after the newest seen now.
func (w *commitWatch) wait(t *testing.T, n int, what string) {
	t.Helper()
	var after time.Time
	if cs := w.list(t); len(cs) > 0 {
		after = cs[len(cs)-1].at
	}
	fixture.WaitFor(t, 60*time.Second, what, func() bool {
		newer := 0
		for _, c := range w.list(t) {
			if c.at.After(after) {
				newer++
			}
		}
		return newer >= n
	})
}

// committed tells whether the worker's progress lines name snapshot id
// as one it committed.
func (w *clusterWorker) committed(id int64) bool {
	return strings.Contains(w.stderr.String(), `"snapshotId":`+strconv.FormatInt(id, 10)+",")
}

// holdsPartitions tells whether the worker's progress says it holds
// partitions.
func (w *clusterWorker) holdsPartitions() bool {
	return holding.MatchString(w.stderr.String())
}

var holding = regexp.MustCompile(`"partitions":[1-9]`)

// The coordinator of three workers is killed with SIGKILL while a
// producer writes, once per round (a new worker replacing it each time):
// the next commit comes within failoverLimit of its last one, with the
// group's default timings, and every message lands exactly once.
func TestFaultKafkaClusterCoordinatorKilled(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e, c, commits, producer, workers := startFailoverCluster(t, b)
		var gaps []time.Duration
		for round := range *faultRounds {
			// Every worker holds partitions and the coordinator has
			// committed since: the group is settled.
			for _, w := range running(workers) {
				fixture.WaitFor(t, 60*time.Second, "worker "+w.name+"'s partitions", w.holdsPartitions)
			}
			commits.wait(t, 3, "commits before the kill")
			var coord *clusterWorker
			fixture.WaitFor(t, 30*time.Second, "the worker that made the newest commit", func() bool {
				cs := commits.list(t)
				for _, w := range running(workers) {
					if w.committed(cs[len(cs)-1].id) {
						coord = w
						return true
					}
				}
				return false
			})
			// At any point of the coordinator's interval.
			time.Sleep(rand.N(clusterInterval))
			killed := time.Now()
			_ = coord.proc(syscall.SIGKILL)
			var before, after clusterCommit
			fixture.WaitFor(t, 60*time.Second, "a commit after the kill", func() bool {
				for _, cm := range commits.list(t) {
					if cm.at.Before(killed) {
						before = cm
					} else {
						after = cm
						return true
					}
				}
				return false
			})
			for _, w := range running(workers) {
				if w.committed(before.id) {
					t.Fatalf("round %d: worker %s, not the killed %s, made the last commit before the kill: no coordinator was killed", round, w.name, coord.name)
				}
			}
			gap := after.at.Sub(before.at)
			gaps = append(gaps, gap)
			t.Logf("round %d: coordinator %s killed %v after its last commit; the next commit %v after that one", round, coord.name, killed.Sub(before.at).Round(time.Millisecond), gap)
			if gap >= failoverLimit {
				t.Errorf("round %d: no commit for %v after the coordinator's last one (killed %v after it); want under %v", round, gap, killed.Sub(before.at).Round(time.Millisecond), failoverLimit)
			}
			// The replacement joins before anything stops it: a signal sent
			// while a process still starts kills it before floe can stop
			// cleanly.
			w := startClusterWorker(e, c, fmt.Sprint(len(workers)))
			workers = append(workers, w)
			fixture.WaitFor(t, 60*time.Second, "worker "+w.name+"'s partitions", w.holdsPartitions)
		}
		total := producer.stop()
		fixture.WaitFor(t, 90*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= int(total) })
		stopWorkers(t, running(workers)...)
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, total); msg != "" {
			t.Fatalf("%d messages produced: %s", total, msg)
		}
		liveFilesOnce(t, e)
		slices.Sort(gaps)
		t.Logf("%d messages; gaps after a kill: %v (median %v)", total, gaps, gaps[len(gaps)/2])
	})
}

// Every worker of three is stopped with SIGTERM and replaced by a new one,
// one at a time, as a rolling restart does, while a producer writes: no
// interval passes without a commit (the largest gap between commits stays
// under two intervals) and every message lands exactly once.
func TestKafkaClusterRollingRestart(t *testing.T) {
	t.Parallel()
	const interval = 2 * time.Second
	trigger := []string{"--trigger", "processing-time=" + interval.String()}
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e, c, commits, producer, workers := startFailoverCluster(t, b, trigger...)
		commits.wait(t, 2, "commits before the restart")
		began := time.Now()
		// What the restart did when, for the gaps' report.
		type step struct {
			at   time.Time
			what string
		}
		var steps []step
		for _, old := range slices.Clone(workers) {
			// Late in the coordinator's interval, when its next commit is
			// due: the hand-over a stop costs most.
			commits.wait(t, 1, "a commit before stopping worker "+old.name)
			time.Sleep(interval - 250*time.Millisecond)
			steps = append(steps, step{time.Now(), "SIGTERM to worker " + old.name})
			_ = old.proc(syscall.SIGTERM)
			fixture.WaitFor(t, 60*time.Second, "worker "+old.name+" to stop", old.exited.Load)
			steps = append(steps, step{time.Now(), "worker " + old.name + " exited"})
			if old.code != 0 {
				t.Fatalf("worker %s exited %d:\n%s", old.name, old.code, old.stderr.String())
			}
			w := startClusterWorker(e, c, fmt.Sprint(len(workers)), trigger...)
			workers = append(workers, w)
			steps = append(steps, step{time.Now(), "worker " + w.name + " started"})
			fixture.WaitFor(t, 60*time.Second, "worker "+w.name+"'s partitions", w.holdsPartitions)
			steps = append(steps, step{time.Now(), "worker " + w.name + " holds partitions"})
		}
		ended := time.Now()
		commits.wait(t, 2, "commits after the restart")
		total := producer.stop()
		fixture.WaitFor(t, 90*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= int(total) })
		stopWorkers(t, running(workers)...)
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, total); msg != "" {
			t.Fatalf("%d messages produced: %s", total, msg)
		}
		liveFilesOnce(t, e)

		// The gaps between the last commit before the restart began and
		// the first after it ended.
		var during []clusterCommit
		for _, cm := range commits.list(t) {
			switch {
			case cm.at.Before(began):
				during = []clusterCommit{cm}
			case len(during) > 0:
				during = append(during, cm)
			}
			if cm.at.After(ended) {
				break
			}
		}
		committer := func(id int64) string {
			for _, w := range workers {
				if w.committed(id) {
					return "worker " + w.name
				}
			}
			return "an unknown worker"
		}
		var largest time.Duration
		for i := 1; i < len(during); i++ {
			from, to := during[i-1], during[i]
			gap := to.at.Sub(from.at)
			largest = max(largest, gap)
			if gap >= 2*interval {
				t.Errorf("no commit for %v during the rolling restart: an interval of %v passed without one", gap, interval)
			}
			if gap > interval*5/4 {
				var between []string
				for _, s := range steps {
					if s.at.After(from.at) && s.at.Before(to.at) {
						between = append(between, fmt.Sprintf("%s at +%v", s.what, s.at.Sub(from.at).Round(time.Millisecond)))
					}
				}
				t.Logf("a gap of %v from %s's commit to %s's; between them: %s", gap, committer(from.id), committer(to.id), strings.Join(between, ", "))
			}
		}
		t.Logf("%d messages; %d commits during a restart of %v, the largest gap %v", total, len(during), ended.Sub(began).Round(time.Millisecond), largest)
	})
}
