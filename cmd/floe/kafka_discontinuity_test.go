package main_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// A topic deleted and created again, with fewer messages than the query
// had read (and one partition of two) and with more: the default run exits
// 1 naming the topic, the partitions, the offsets read and the new log,
// and the option; with failOnDataLoss=false the run warns and reads the
// new topic from its first offset, and every message produced since lands
// exactly once.
func TestKafkaTopicRecreated(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		for _, c := range []struct {
			name       string
			partitions int32 // of the new topic
			after      int64 // messages in the new topic before the next run
			want       []string
		}{
			{"fewer", 1, 600, []string{"partition %[1]s/0 was read up to offset 1000 of the old topic, and the new one holds offsets 0 to 599", "partition %[1]s/1, read up to offset 1000, is gone"}},
			{"more", 2, 3000, []string{"partition %[1]s/0 was read up to offset 1000 of the old topic, and the new one holds offsets 0 to 1499", "%[1]s/1"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				k := b.Start(t, "events", 2)
				topic := k.Name("events")
				produceIDs(t, k, topic, 2, 0, 2000)
				e.OK(kafkaStream(e, k)...)
				k.DeleteTopic(t, topic)
				k.CreateTopic(t, topic, int(c.partitions))
				produceIDs(t, k, topic, c.partitions, 2000, c.after)
				var want []string
				for _, w := range append(c.want, "topic %[1]s was deleted and created again (its id was ") {
					want = append(want, fmt.Sprintf(w, topic))
				}
				wantDiscontinuity(t, e, e.Run(kafkaStream(e, k)...), want...)
				if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000); msg != "" {
					t.Fatalf("after the refused run: %s", msg)
				}
				r := e.OK(kafkaStream(e, k, "-o", "failOnDataLoss=false")...)
				if !strings.Contains(r.Stderr, "warning: kafka source: topic "+topic+" was deleted and created again") || !strings.Contains(r.Stderr, "reading again from the earliest offset") {
					t.Fatalf("want a warning naming the re-created topic:\n%s", r.Stderr)
				}
				if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000+c.after); msg != "" {
					t.Fatalf("after the run with failOnDataLoss=false: %s", msg)
				}
				// The query goes on from the new topic's offsets, by default too.
				produceIDs(t, k, topic, c.partitions, 2000+c.after, 500)
				e.OK(kafkaStream(e, k)...)
				if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2500+c.after); msg != "" {
					t.Fatalf("after the next run: %s", msg)
				}
			})
		}
	})
}

// A topic deleted and not created again: the default run exits 1 naming
// its partitions; with failOnDataLoss=false it warns once, and when the
// topic comes back its messages are read from its first offset.
func TestKafkaTopicDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.Start(t, "events", 2)
	topic := k.Name("events")
	produceIDs(t, k, topic, 2, 0, 1000)
	e.OK(kafkaStream(e, k)...)
	k.DeleteTopic(t, topic)
	wantDiscontinuity(t, e, e.Run(kafkaStream(e, k)...), "partition "+topic+"/0, read up to offset 500, is gone", "partition "+topic+"/1, read up to offset 500, is gone")
	lenient := kafkaStream(e, k, "-o", "failOnDataLoss=false")
	if r := e.OK(lenient...); strings.Count(r.Stderr, "warning: kafka source: partition "+topic+"/") != 2 {
		t.Fatalf("want one warning for each partition gone:\n%s", r.Stderr)
	}
	if r := e.OK(lenient...); strings.Contains(r.Stderr, "warning") {
		t.Fatalf("the partitions gone were named again:\n%s", r.Stderr)
	}
	k.CreateTopic(t, topic, 2)
	produceIDs(t, k, topic, 2, 1000, 300)
	e.OK(lenient...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 1300); msg != "" {
		t.Fatal(msg)
	}
}

// A broker restarted with an empty log whose controller kept the topics
// (same ids): the offsets the query read are above the partitions' ends.
// The default run exits 1 naming them; with failOnDataLoss=false every
// message produced after the restart lands exactly once.
func TestKafkaBrokerLostLog(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		brokerRestartedEmpty(t, b.StartOnDisk(t, "events", 2), (*kafkatest.Cluster).RestartLosingLogs, "its log was lost")
	})
}

// The same with the broker's metadata lost too: the topics are created
// again, with new ids.
func TestKafkaBrokerRestartedEmpty(t *testing.T) {
	t.Parallel()
	brokerRestartedEmpty(t, kafkatest.StartOnDisk(t, "events", 2), (*kafkatest.Cluster).RestartEmpty, "deleted and created again")
}

func brokerRestartedEmpty(t *testing.T, k *kafkatest.Cluster, restart func(*kafkatest.Cluster, testing.TB), why string) {
	e := newEnv(t)
	topic := k.Name("events")
	produceIDs(t, k, topic, 2, 0, 2000)
	e.OK(kafkaStream(e, k)...)
	restart(k, t)
	produceIDs(t, k, topic, 2, 2000, 400)
	wantDiscontinuity(t, e, e.Run(kafkaStream(e, k)...), topic+"/0", topic+"/1", "read up to offset 1000", why)
	e.OK(kafkaStream(e, k, "-o", "failOnDataLoss=false")...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2400); msg != "" {
		t.Fatalf("after the run with failOnDataLoss=false: %s", msg)
	}
	produceIDs(t, k, topic, 2, 2400, 2000)
	e.OK(kafkaStream(e, k)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 4400); msg != "" {
		t.Fatalf("after the next run: %s", msg)
	}
}

// discontinuityError matches the failure of a run whose Kafka offsets no
// longer go on: exit 1, the partitions, the offsets and the option.
var discontinuityError = regexp.MustCompile(`kafka source: .*failOnDataLoss=false`)

// wantDiscontinuity fails unless r is the refusal of a discontinuity
// naming each of want.
func wantDiscontinuity(t *testing.T, e *env, r fixture.Result, want ...string) {
	t.Helper()
	if r.Code != 1 || !discontinuityError.MatchString(r.Stderr) {
		t.Fatalf("want exit 1 naming the discontinuity and failOnDataLoss=false, got %s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Fatalf("the refusal does not name %q:\n%s", w, r.Stderr)
		}
	}
}

// The same in a cluster: with the topic deleted and created again under
// two workers, both exit 1 naming it; workers started again with
// failOnDataLoss=false read the new topic from its first offset, and every
// message lands exactly once.
func TestKafkaClusterTopicRecreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.Start(t, "events", 2)
	topic := k.Name("events")
	produceIDs(t, k, topic, 2, 0, 1000)
	workers := []*clusterWorker{startClusterWorker(e, k, "a"), startClusterWorker(e, k, "b")}
	fixture.WaitFor(t, 60*time.Second, "the first messages in the table", func() bool { return len(e.TableIDs("db.events")) >= 1000 })
	k.DeleteTopic(t, topic)
	k.CreateTopic(t, topic, 2)
	produceIDs(t, k, topic, 2, 1000, 300)
	for _, w := range workers {
		fixture.WaitFor(t, 60*time.Second, "worker "+w.name+" to stop", w.exited.Load)
		if w.code != 1 || !strings.Contains(w.stderr.String(), "topic "+topic+" was deleted and created again") || !strings.Contains(w.stderr.String(), "failOnDataLoss=false") {
			t.Fatalf("worker %s: exit %d, want 1 naming the topic created again:\n%s", w.name, w.code, w.stderr.String())
		}
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 1000); msg != "" {
		t.Fatalf("after the workers stopped: %s", msg)
	}
	workers = []*clusterWorker{startClusterWorker(e, k, "a", "-o", "failOnDataLoss=false"), startClusterWorker(e, k, "b", "-o", "failOnDataLoss=false")}
	fixture.WaitFor(t, 60*time.Second, "the new topic's messages in the table", func() bool { return len(e.TableIDs("db.events")) >= 1300 })
	produceIDs(t, k, topic, 2, 1300, 500)
	fixture.WaitFor(t, 60*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= 1800 })
	stopWorkers(t, workers...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 1800); msg != "" {
		t.Fatal(msg)
	}
	var warned bool
	for _, w := range workers {
		warned = warned || strings.Contains(w.stderr.String(), "reading again from the earliest offset, as failOnDataLoss is false")
	}
	if !warned {
		t.Fatal("no worker warned of the topic created again")
	}
}

// A batch planned and not committed (a kill in its commit) meets brokers
// that are down when the next run starts: the run fails naming the
// brokers, not the checkpoint (exit 1, not 2); once they are back the
// batch is run again and every message lands once.
func TestKafkaPendingBatchBrokersDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.StartOnDisk(t, "events", 2)
	topic := k.Name("events")
	produceIDs(t, k, topic, 2, 0, 100)
	e.OK(kafkaStream(e, k)...)
	produceIDs(t, k, topic, 2, 100, 100)
	if r := e.RunEnv(e.Bin, []string{"FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1"}, kafkaStream(e, k)...); r.Code != 137 {
		t.Fatalf("want the run killed in its commit, got %s", r)
	}
	k.Stop(t)
	r := e.Run(kafkaStream(e, k)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "connection refused") || strings.Contains(r.Stderr, "does not match") {
		t.Fatalf("want exit 1 naming the brokers out of reach, got %s", r)
	}
	k.Restart(t)
	e.OK(kafkaStream(e, k)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 200); msg != "" {
		t.Fatal(msg)
	}
}

// A batch planned and not committed whose topic is deleted and created
// again before it is run again: the run exits 1 naming the planned
// offsets the new topic does not hold; with failOnDataLoss=false the
// batch reads nothing of the old topic, and the new topic is read from its
// first offset.
func TestKafkaPendingBatchTopicRecreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.Start(t, "events", 2)
	topic := k.Name("events")
	produceIDs(t, k, topic, 2, 0, 100)
	e.OK(kafkaStream(e, k)...)
	produceIDs(t, k, topic, 2, 100, 100) // planned, never committed: lost with the topic
	if r := e.RunEnv(e.Bin, []string{"FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1"}, kafkaStream(e, k)...); r.Code != 137 {
		t.Fatalf("want the run killed in its commit, got %s", r)
	}
	k.DeleteTopic(t, topic)
	k.CreateTopic(t, topic, 2)
	produceIDs(t, k, topic, 2, 200, 300)
	wantDiscontinuity(t, e, e.Run(kafkaStream(e, k)...), "topic "+topic+" was deleted and created again", "after offsets 50 to 99 of partition "+topic+"/0 were planned")
	e.OK(kafkaStream(e, k, "-o", "failOnDataLoss=false")...)
	ids := e.TableIDs("db.events")
	if len(ids) != 400 {
		t.Fatalf("%d distinct ids, want 400 (0-99 and 200-499)", len(ids))
	}
	for id := int64(0); id < 500; id++ {
		if want := map[bool]int{true: 1, false: 0}[id < 100 || id >= 200]; ids[id] != want {
			t.Fatalf("id %d is in the table %d times, want %d (ids 0-99 and 200-499 once)", id, ids[id], want)
		}
	}
}
