package main_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/internal/s3test"
)

var networkPartition = flag.Bool("network-partition", false,
	"run TestKafkaClusterNetworkPartition: cluster workers in network namespaces cut off from the broker, the catalog and the object store (needs root and ip netns)")

// partitionMinCut is the least time a worker stays cut off: past the
// group's session timeout (6 s) and several of its failed intervals.
const partitionMinCut = 15 * time.Second

// Three workers of a cluster, each in a network namespace of its own,
// reach the broker, the catalog (floe serve) and the warehouse's object
// store (versitygw) only through a veth pair to the host, while a
// producer writes. The coordinator is cut off past the group's session
// timeout and comes back, then a worker that does not coordinate. While
// one is cut, the others take its partitions and go on committing; the
// cut worker comes back into the group, or gives up as the design says
// (exit 1 after 10 failed intervals in a row, naming them). Every message
// lands once, read back by iceberg-go's scan, and no data file is
// referenced twice. Run with -network-partition, as root.
func TestKafkaClusterNetworkPartition(t *testing.T) {
	if !*networkPartition {
		t.Skip("run with -network-partition (as root, with ip netns)")
	}
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		lab := fixture.NewNetLab(t, 3)
		e := newEnv(t)
		srv := s3test.StartOn(t, lab.Host)
		creds := append(hermeticAWSEnv(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey, "AWS_REGION="+srv.Region)
		store := []string{"-p", "s3.endpoint=" + srv.Endpoint}
		catalogDB := filepath.Join(e.Dir, "catalog.db")
		_, base := e.startServing(regexp.MustCompile(`uri=(http://[0-9.:]+)`), creds, append([]string{"serve", "--listen", net.JoinHostPort(lab.Host, "0"),
			"--warehouse", srv.URL("wh"), "--catalog-uri", catalogDB}, store...)...)
		c := b.StartOn(t, lab.Host, "events", 6)
		// The test reads the table as another engine would: the catalog's
		// database and the store directly, with iceberg-go's scan.
		cat := fixture.OpenCatalog(t, config.Catalog{Warehouse: srv.URL("wh"), URI: catalogDB, Properties: map[string]string{
			"s3.endpoint": srv.Endpoint, "s3.region": srv.Region, "s3.access-key-id": srv.AccessKey, "s3.secret-access-key": srv.SecretKey}})
		ids := func() map[int64]int {
			got, err := fixture.ReadIDs(context.Background(), cat, "db.events", "id")
			if err != nil {
				t.Fatalf("read the table: %v", err)
			}
			return got
		}
		commits := watchCommits(t, cat)

		producer := startProducer(t, c, 6, 100*time.Millisecond, 60)
		stopped := false
		t.Cleanup(func() {
			if !stopped {
				producer.stop()
			}
		})
		var workers []*clusterWorker
		for i := range 3 {
			var stderr syncBuffer
			cmd := lab.Command(i, floeBin, append(clusterWorkerArgs(e, c, fmt.Sprint(i)), append([]string{"--catalog-type", "rest", "--catalog-uri", base}, store...)...)...)
			cmd.Dir, cmd.Env, cmd.Stderr = e.Dir, creds, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w := watchWorker(fmt.Sprint(i), &stderr, cmd)
			workers = append(workers, w)
			t.Cleanup(func() {
				if !w.exited.Load() {
					_ = cmd.Process.Kill()
					fixture.WaitFor(t, 10*time.Second, "worker "+w.name+" killed", w.exited.Load)
				}
				if t.Failed() {
					t.Logf("worker %s (exit %d):\n%s", w.name, w.code, tail(w.stderr.String(), 6000))
				}
			})
		}
		fixture.WaitFor(t, 120*time.Second, "every worker holding partitions", func() bool {
			for _, w := range workers {
				if p, ok := lastInterval(w.stderr.String()); !ok || p.Partitions == 0 {
					return false
				}
			}
			return true
		})

		// cut cuts worker i off, keeps it cut until the others have
		// committed every message produced a second into the cut (those
		// of its partitions included, which only a takeover reads) and
		// partitionMinCut has passed, restores it, and waits until it is
		// back in the group, publishing in a later generation, or has
		// exited. Back, it never commits as a coordinator of its old
		// generation.
		var reports []string
		cut := func(i int, role string) {
			w := workers[i]
			held, _ := lastInterval(w.stderr.String())
			cutAt := time.Now()
			lab.Cut(t, i)
			t.Logf("cut off worker %s, the %s, holding %d partitions", w.name, role, held.Partitions)
			time.Sleep(time.Second)
			upTo := producer.produced.Load()
			took := fixture.WaitFor(t, 180*time.Second, fmt.Sprintf("the others to commit every message produced a second into the cut (%d)", upTo),
				atMostEvery(time.Second, func() bool { return allBelow(ids(), upTo) }))
			time.Sleep(partitionMinCut - time.Since(cutAt))
			restoredAt := time.Now()
			from := len(w.stderr.String())
			lab.Restore(t, i)
			back := fixture.WaitFor(t, 300*time.Second, "worker "+w.name+" to publish in a later generation or exit", func() bool {
				p, ok := lastInterval(w.stderr.String()[from:])
				return w.exited.Load() || ok && p.Published && p.Partitions > 0 && p.Generation > held.Generation
			})
			for _, p := range intervals(w.stderr.String()[from:]) {
				if p.Generation <= held.Generation && p.Committed != nil && p.Committed.SnapshotID != 0 {
					t.Errorf("worker %s, back from the cut, committed snapshot %d as the coordinator of generation %d", w.name, p.Committed.SnapshotID, p.Generation)
				}
			}
			n, gap := commits.during(cutAt, restoredAt)
			if n == 0 {
				t.Errorf("no commit while worker %s was cut off for %v", w.name, restoredAt.Sub(cutAt).Round(time.Second))
			}
			fate := fmt.Sprintf("back in the group %v after the restore", back.Round(100*time.Millisecond))
			if w.exited.Load() {
				fate = fmt.Sprintf("exited %d %v after the restore", w.code, back.Round(100*time.Millisecond))
			}
			reports = append(reports, fmt.Sprintf("%s (worker %s, %d partitions) cut for %v: %d commits meanwhile, the longest time without one %v; its partitions' messages committed by the others within %v of the cut; %d failed intervals, fenced %d times; %s",
				role, w.name, held.Partitions, restoredAt.Sub(cutAt).Round(100*time.Millisecond), n, gap.Round(10*time.Millisecond),
				(took+time.Second).Round(100*time.Millisecond), strings.Count(w.stderr.String(), " in a row), retrying"),
				strings.Count(w.stderr.String(), "coordinator fenced"), fate))
			t.Log(reports[len(reports)-1])
			// The cluster has caught up before anything else happens.
			caughtUp := producer.produced.Load()
			fixture.WaitFor(t, 180*time.Second, "the cluster to catch up after the restore",
				atMostEvery(time.Second, func() bool { return allBelow(ids(), caughtUp) }))
		}

		coord := -1
		fixture.WaitFor(t, 60*time.Second, "a coordinator", func() bool {
			for i, w := range workers {
				if w.coordinating() {
					coord = i
					return true
				}
			}
			return false
		})
		cut(coord, "coordinator")
		// Another worker than the one cut before, if it is still there.
		other := -1
		fixture.WaitFor(t, 60*time.Second, "a running worker that does not coordinate", func() bool {
			for i, w := range workers {
				if !w.exited.Load() && !w.coordinating() && (other < 0 || other == coord) {
					other = i
				}
			}
			return other >= 0
		})
		cut(other, "worker that does not coordinate")

		total, stopped := producer.stop(), true
		fixture.WaitFor(t, 180*time.Second, "every message in the table", atMostEvery(time.Second, func() bool { return len(ids()) >= int(total) }))
		for _, w := range workers {
			if !w.exited.Load() {
				_ = w.proc(syscall.SIGTERM)
			}
		}
		for _, w := range workers {
			fixture.WaitFor(t, 60*time.Second, "worker "+w.name+" to stop", w.exited.Load)
			// A worker cut off gives up after 10 failed intervals in a row
			// (docs/ARCHITECTURE.md, "Scale-out"); any other exit is a
			// failure.
			if w.code != 0 && (w.code != 1 || !strings.Contains(w.stderr.String(), "(10 in a row)")) {
				t.Errorf("worker %s exited %d:\n%s", w.name, w.code, tail(w.stderr.String(), 6000))
			}
			// The group is never started again here: a coordinator that
			// takes itself for one of a new group is a zombie the fence
			// let through.
			if strings.Contains(w.stderr.String(), "an earlier group of the same name") {
				t.Errorf("worker %s, back from the cut, took the table's newer generation for an earlier group's and committed as a coordinator of its old generation:\n%s", w.name, tail(w.stderr.String(), 6000))
			}
		}
		if msg := fixture.Exact(ids(), 0, total); msg != "" {
			t.Fatalf("%d messages produced: %s", total, msg)
		}
		tbl, err := cat.LoadTable(context.Background(), []string{"db", "events"})
		if err != nil {
			t.Fatal(err)
		}
		files := filesOnce(t, tbl)
		t.Logf("%s: %d messages, %d commits seen, %d live data files", b, total, commits.count(), len(files))
		for _, r := range reports {
			t.Log(r)
		}
	})
}

// intervals are the cluster progress records in a worker's stderr.
func intervals(stderr string) []floe.ClusterProgress {
	var out []floe.ClusterProgress
	for line := range strings.Lines(stderr) {
		var p floe.Progress
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &p) == nil && p.Cluster != nil {
			out = append(out, *p.Cluster)
		}
	}
	return out
}

// lastInterval is the newest cluster progress record in a worker's
// stderr.
func lastInterval(stderr string) (floe.ClusterProgress, bool) {
	all := intervals(stderr)
	if len(all) == 0 {
		return floe.ClusterProgress{}, false
	}
	return all[len(all)-1], true
}

// allBelow tells whether ids holds every id below n.
func allBelow(ids map[int64]int, n int64) bool {
	for id := range n {
		if ids[id] == 0 {
			return false
		}
	}
	return true
}

// atMostEvery is cond evaluated at most once per d, false between: a
// condition reading the whole table is too dear for WaitFor's polls.
func atMostEvery(d time.Duration, cond func() bool) func() bool {
	var last time.Time
	return func() bool {
		if time.Since(last) < d {
			return false
		}
		last = time.Now()
		return cond()
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// during counts the commits between from and to, and the longest time
// in that span without one.
func (w *commitWatch) during(from, to time.Time) (int, time.Duration) {
	w.mu.Lock()
	var in []time.Time
	for _, at := range w.seen {
		if at.After(from) && at.Before(to) {
			in = append(in, at)
		}
	}
	w.mu.Unlock()
	slices.SortFunc(in, time.Time.Compare)
	gap, prev := time.Duration(0), from
	for _, at := range append(in, to) {
		gap, prev = max(gap, at.Sub(prev)), at
	}
	return len(in), gap
}

func (w *commitWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}
