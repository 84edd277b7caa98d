package main_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// clusterWorker is one floe stream process of a cluster.
type clusterWorker struct {
	name   string
	stderr *syncBuffer
	cmd    interface {
		Wait() error
	}
	proc   func(sig syscall.Signal) error
	exited atomic.Bool
	code   int
}

const clusterInterval = 300 * time.Millisecond

func startClusterWorker(e *env, c *kafkatest.Cluster, name string, extra ...string) *clusterWorker {
	var stderr syncBuffer
	return watchWorker(name, &stderr, e.startFloe(&stderr, append(clusterWorkerArgs(e, c, name), extra...)...))
}

// clusterWorkerArgs are the arguments of worker name of the cluster
// writing db.events from c's topic events.
func clusterWorkerArgs(e *env, c *kafkatest.Cluster, name string) []string {
	return []string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + c.Name("events"),
		"-o", "kafka.group.id=" + c.Name("landers"),
		"--format", "json", "--table", "db.events", "--checkpoint", filepath.Join(e.Dir, "ck-"+name),
		"--trigger", "processing-time=" + clusterInterval.String(), "--progress", "json"}
}

// watchWorker is the worker whose started process is cmd, writing its
// stderr to stderr.
func watchWorker(name string, stderr *syncBuffer, cmd *exec.Cmd) *clusterWorker {
	w := &clusterWorker{name: name, stderr: stderr, cmd: cmd, proc: func(sig syscall.Signal) error { return cmd.Process.Signal(sig) }}
	go func() {
		_ = cmd.Wait()
		w.code = cmd.ProcessState.ExitCode()
		w.exited.Store(true)
	}()
	return w
}

// running lists the workers that have not exited.
func running(workers []*clusterWorker) []*clusterWorker {
	var out []*clusterWorker
	for _, w := range workers {
		if !w.exited.Load() {
			out = append(out, w)
		}
	}
	return out
}

// liveFilesOnce lists db.events's live data files, failing the test when
// one is referenced twice.
func liveFilesOnce(t *testing.T, e *env) []string {
	t.Helper()
	cat, _ := fixture.CatalogAt(t, e.Warehouse)
	return filesOnce(t, e.loadTable(context.Background(), cat, "db.events"))
}

// filesOnce lists tbl's live data files, failing the test when one is
// referenced twice (committed by two snapshots, or twice by one).
func filesOnce(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	var files []string
	for f, n := range fixture.DataFileRefs(t, tbl) {
		if n > 1 {
			t.Errorf("data file %s referenced %d times", f, n)
		}
		files = append(files, f)
	}
	return files
}

// every runs fn every d in the background until the returned stop, which
// waits for the run in progress.
func every(d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var running sync.WaitGroup
	running.Add(1)
	go func() {
		defer running.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(d):
			}
			fn()
		}
	}()
	return func() {
		close(done)
		running.Wait()
	}
}

// producer writes id messages in the background, n at a time.
type producer struct {
	produced atomic.Int64
	halt     func()
}

func startProducer(t *testing.T, c *kafkatest.Cluster, partitions int32, d time.Duration, n int64) *producer {
	p := &producer{}
	p.halt = every(d, func() {
		produceIDs(t, c, c.Name("events"), partitions, p.produced.Load(), n)
		p.produced.Add(n)
	})
	return p
}

// stop ends the production and returns how many messages were produced.
func (p *producer) stop() int64 {
	p.halt()
	return p.produced.Load()
}

// coordinating tells whether the worker's newest progress line says it
// coordinates.
func (w *clusterWorker) coordinating() bool {
	out := w.stderr.String()
	i := strings.LastIndex(out, `"coordinator":`)
	return i >= 0 && strings.HasPrefix(out[i+len(`"coordinator":`):], "true")
}

// Workers of one consumer group share a topic's partitions while a
// producer writes: a fourth joins, the coordinator is killed, a worker is
// stopped past the group's session timeout and resumed (a zombie holding
// data it read before losing its partitions). Every message lands once,
// one commit per interval at most (not one per worker), and no data file
// is referenced twice.
func TestKafkaClusterExactlyOnce(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 8)
		producer := startProducer(t, c, 8, 50*time.Millisecond, 97)
		began := time.Now()
		workers := []*clusterWorker{}
		for i := range 3 {
			workers = append(workers, startClusterWorker(e, c, fmt.Sprint(i)))
		}
		alive := func() []*clusterWorker { return running(workers) }
		fixture.WaitFor(t, 60*time.Second, "the first commit", func() bool { return len(e.TableIDs("db.events")) > 0 })
		workers = append(workers, startClusterWorker(e, c, "3"))
		time.Sleep(3 * time.Second)

		coord := churn(t, workers, time.Sleep)

		total := producer.stop()
		fixture.WaitFor(t, 90*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= int(total) })
		elapsed := time.Since(began)
		for _, w := range alive() {
			_ = w.proc(syscall.SIGTERM)
		}
		for _, w := range workers {
			if w == coord {
				continue
			}
			fixture.WaitFor(t, 30*time.Second, "worker "+w.name+" to stop", w.exited.Load)
			if w.code != 0 {
				t.Errorf("worker %s exited %d:\n%s", w.name, w.code, w.stderr.String())
			}
		}
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, total); msg != "" {
			t.Fatalf("%d messages produced: %s", total, msg)
		}
		snaps := e.Snapshots("db.events")
		intervals := int(elapsed / clusterInterval)
		if len(snaps) > intervals+len(workers) {
			t.Errorf("%d snapshots in %d intervals of %d workers: more than one commit per interval", len(snaps), intervals, len(workers))
		}
		files := liveFilesOnce(t, e)
		t.Logf("%d messages, %d snapshots in %v (%d intervals), %d data files", total, len(snaps), elapsed.Round(time.Second), intervals, len(files))
	})
}

// churn kills the coordinator (SIGKILL), then stops another worker past
// the group's session timeout and resumes it: a zombie holding data it
// read before losing its partitions. wait lets the time pass (a test may
// check the table meanwhile). It returns the killed coordinator.
func churn(t *testing.T, workers []*clusterWorker, wait func(time.Duration)) *clusterWorker {
	t.Helper()
	var coord *clusterWorker
	fixture.WaitFor(t, 30*time.Second, "a coordinator", func() bool {
		for _, w := range running(workers) {
			if w.coordinating() {
				coord = w
				return true
			}
		}
		return false
	})
	t.Logf("killing the coordinator, worker %s", coord.name)
	_ = coord.proc(syscall.SIGKILL)
	wait(2 * time.Second)
	var zombie *clusterWorker
	for _, w := range running(workers) {
		if w != coord {
			zombie = w
			break
		}
	}
	if zombie == nil {
		for _, w := range workers {
			if w != coord {
				t.Logf("worker %s exited with %d:\n%s", w.name, w.code, w.stderr.String())
			}
		}
		t.Fatalf("no worker but the killed coordinator is running")
	}
	t.Logf("stopping worker %s past the session timeout", zombie.name)
	_ = zombie.proc(syscall.SIGSTOP)
	wait(9 * time.Second)
	_ = zombie.proc(syscall.SIGCONT)
	wait(3 * time.Second)
	return coord
}

// stopWorkers stops the workers with SIGTERM and checks they exit 0, and
// that their progress records are a single process's: the same fields,
// and timestamps in Spark's form.
func stopWorkers(t *testing.T, workers ...*clusterWorker) {
	t.Helper()
	for _, w := range workers {
		_ = w.proc(syscall.SIGTERM)
	}
	for _, w := range workers {
		fixture.WaitFor(t, 30*time.Second, "worker "+w.name+" to stop", w.exited.Load)
		if w.code != 0 {
			t.Errorf("worker %s exited %d:\n%s", w.name, w.code, w.stderr.String())
		}
		for _, line := range strings.Split(w.stderr.String(), "\n") {
			var pr floe.Progress
			if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &pr) != nil || pr.Cluster == nil {
				continue
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", pr.Timestamp); err != nil || pr.ID == "" || pr.RunID == "" {
				t.Errorf("worker %s's progress record has timestamp %q, id %q, run id %q; want a single process's form: %s", w.name, pr.Timestamp, pr.ID, pr.RunID, line)
			}
		}
	}
}

// A cluster started on a table a single process has been writing from the
// same topic goes on where that process's record ends: nothing read twice.
func TestKafkaClusterTakesOverFromSingleProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	produceIDs(t, c, c.Name("events"), 4, 0, 2000)
	e.OK(kafkaStream(e, c)...)
	produceIDs(t, c, c.Name("events"), 4, 2000, 3000)
	workers := []*clusterWorker{startClusterWorker(e, c, "a"), startClusterWorker(e, c, "b")}
	fixture.WaitFor(t, 60*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= 5000 })
	stopWorkers(t, workers...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 5000); msg != "" {
		t.Fatal(msg)
	}
}

// Workers meeting a new field at once each evolve the table (add-columns);
// every row lands once, the new column holding the new messages' values.
func TestKafkaClusterSchemaEvolution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	produceIDs(t, c, c.Name("events"), 4, 0, 1000)
	workers := []*clusterWorker{startClusterWorker(e, c, "a", "--schema-evolution", "add-columns"), startClusterWorker(e, c, "b", "--schema-evolution", "add-columns")}
	fixture.WaitFor(t, 60*time.Second, "the first messages", func() bool { return len(e.TableIDs("db.events")) >= 1000 })
	recs := make([]*kgo.Record, 1000)
	for i := range recs {
		id := 1000 + i
		recs[i] = &kgo.Record{Topic: c.Name("events"), Partition: int32(id % 4), Value: fmt.Appendf(nil, `{"id":%d,"v":"m%d","extra":%d}`, id, id, 2*id)}
	}
	c.Produce(t, recs...)
	fixture.WaitFor(t, 60*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= 2000 })
	stopWorkers(t, workers...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000); msg != "" {
		t.Fatal(msg)
	}
	r := e.OK("scan", "db.events", "--filter", "extra IS NOT NULL", "--format", "csv")
	if n := strings.Count(strings.TrimSpace(r.Stdout), "\n"); n != 1000 {
		t.Fatalf("%d rows with the new column, want 1000:\n%.400s", n, r.Stdout)
	}
}

// A worker whose brokers are gone fails interval after interval, then
// exits 1 instead of running on with nothing committed.
func TestKafkaClusterWorkerFailsLoudly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.StartOnDisk(t, "events", 2)
	produceIDs(t, c, c.Name("events"), 2, 0, 100)
	w := startClusterWorker(e, c, "a", "--trigger", "processing-time=10ms")
	fixture.WaitFor(t, 60*time.Second, "the first messages", func() bool { return len(e.TableIDs("db.events")) >= 100 })
	c.Stop(t)
	fixture.WaitFor(t, 120*time.Second, "the worker to give up", w.exited.Load)
	if w.code != 1 || !strings.Contains(w.stderr.String(), "(10 in a row)") {
		t.Fatalf("exit %d, want 1 after 10 failed intervals:\n%s", w.code, w.stderr.String())
	}
}

// A worker the group's coordinator refuses, for a session timeout outside
// the broker's bounds or for a group whose members assign partitions by
// another protocol (a Java consumer's, here franz-go's range balancer),
// exits 2 naming the cause and the option to change, instead of running
// on with no partitions and nothing committed.
func TestKafkaClusterGroupRefuses(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		t.Run("session timeout", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := b.Start(t, "events", 2)
			produceIDs(t, c, c.Name("events"), 2, 0, 100)
			w := startClusterWorker(e, c, "a", "-o", "kafka.session.timeout.ms=3000")
			wantRefused(t, e, w, "kafka.session.timeout.ms 3000", "group.min.session.timeout.ms")
		})
		t.Run("another protocol", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := b.Start(t, "events", 2)
			produceIDs(t, c, c.Name("events"), 2, 0, 100)
			assigned := make(chan struct{}, 1)
			other, err := kgo.NewClient(kgo.SeedBrokers(c.Addr()), kgo.ConsumerGroup(c.Name("landers")), kgo.ConsumeTopics(c.Name("events")),
				kgo.Balancers(kgo.RangeBalancer()), kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
					select {
					case assigned <- struct{}{}:
					default:
					}
				}))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			go func() {
				for other.Context().Err() == nil {
					other.PollFetches(other.Context())
				}
			}()
			select {
			case <-assigned:
			case <-time.After(60 * time.Second):
				t.Fatal("the range-balanced consumer got no partitions within 60 s")
			}
			w := startClusterWorker(e, c, "a")
			wantRefused(t, e, w, "INCONSISTENT_GROUP_PROTOCOL", "kafka.group.id")
		})
	})
}

// wantRefused waits for worker w to exit and fails unless it exited 2
// naming each of want, with nothing committed.
func wantRefused(t *testing.T, e *env, w *clusterWorker, want ...string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !w.exited.Load(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = w.proc(syscall.SIGKILL)
			fixture.WaitFor(t, 10*time.Second, "the killed worker", w.exited.Load)
			t.Fatalf("the refused worker still runs after 60 s:\n%s", w.stderr.String())
		}
	}
	if w.code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", w.code, w.stderr.String())
	}
	for _, s := range want {
		if !strings.Contains(w.stderr.String(), s) {
			t.Fatalf("the refusal does not name %q:\n%s", s, w.stderr.String())
		}
	}
	if ids := e.TableIDs("db.events"); len(ids) != 0 {
		t.Fatalf("the refused worker committed %d ids", len(ids))
	}
}

var clusterChaos = flag.Int("cluster-chaos", 0, "actions of TestKafkaClusterRandomFailures (kills, stops, joins); 0 skips it")

// Random kills, restarts, stops past the session timeout and joins of
// workers while a producer writes: every message lands exactly once and
// no data file is referenced twice. Run with -cluster-chaos 30.
func TestKafkaClusterRandomFailures(t *testing.T) {
	if *clusterChaos == 0 {
		t.Skip("run with -cluster-chaos N")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 6)
	producer := startProducer(t, c, 6, 40*time.Millisecond, 61)
	var workers []*clusterWorker
	next := 0
	start := func() {
		workers = append(workers, startClusterWorker(e, c, fmt.Sprint(next)))
		next++
	}
	alive := func() []*clusterWorker { return running(workers) }
	for range 3 {
		start()
	}
	for i := range *clusterChaos {
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		live := alive()
		switch op := rng.IntN(4); {
		case op == 0 && len(live) > 1:
			w := live[rng.IntN(len(live))]
			t.Logf("action %d: kill -9 worker %s", i, w.name)
			_ = w.proc(syscall.SIGKILL)
			start()
		case op == 1 && len(live) > 1:
			w := live[rng.IntN(len(live))]
			d := time.Duration(1000+rng.IntN(8000)) * time.Millisecond
			t.Logf("action %d: stop worker %s for %v", i, w.name, d)
			_ = w.proc(syscall.SIGSTOP)
			time.Sleep(d)
			_ = w.proc(syscall.SIGCONT)
		case op == 2 && len(live) < 6:
			t.Logf("action %d: a worker joins", i)
			start()
		case len(live) > 2:
			w := live[rng.IntN(len(live))]
			t.Logf("action %d: stop worker %s (SIGTERM)", i, w.name)
			_ = w.proc(syscall.SIGTERM)
		}
	}
	total := producer.stop()
	for deadline := time.Now().Add(120 * time.Second); len(e.TableIDs("db.events")) < int(total); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			for _, w := range alive() {
				// SIGQUIT makes a Go program print its goroutines.
				_ = w.proc(syscall.SIGQUIT)
			}
			time.Sleep(2 * time.Second)
			for _, w := range workers {
				f := filepath.Join(os.TempDir(), fmt.Sprintf("floe-cluster-chaos-%d-worker-%s.log", seed, w.name))
				_ = os.WriteFile(f, []byte(w.stderr.String()), 0o644)
				t.Logf("worker %s (exited %v, code %d): stderr in %s", w.name, w.exited.Load(), w.code, f)
			}
			t.Fatalf("%d of %d messages in the table after 120 s", len(e.TableIDs("db.events")), total)
		}
	}
	for _, w := range workers {
		if !w.exited.Load() {
			_ = w.proc(syscall.SIGTERM)
		}
	}
	for _, w := range workers {
		fixture.WaitFor(t, 30*time.Second, "worker "+w.name+" to stop", w.exited.Load)
		if w.code != 0 && w.code != -1 {
			t.Errorf("worker %s exited %d:\n%s", w.name, w.code, w.stderr.String())
		}
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, total); msg != "" {
		t.Fatalf("%d messages produced: %s", total, msg)
	}
	files := liveFilesOnce(t, e)
	t.Logf("%d messages, %d workers started, %d data files", total, next, len(files))
}
