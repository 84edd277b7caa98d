// Package kafkatest runs Kafka on 127.0.0.1 (or an address a test names)
// for tests, reachable by the built binary and by kcat, and breaks it as
// the world outside breaks Kafka: topics deleted and created again,
// messages deleted by retention, a broker restarted without its log.
//
// Two brokers serve (backend.go): franz-go's kfake, in the test process,
// and the Apache Kafka broker itself, a JVM in KRaft mode, whose group
// coordinator, session timeouts, topic ids and log start offsets are the
// ones floe meets in production.
package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a test's Kafka: a broker of its own, which stops when the
// test ends, or its share of one broker many tests use (Backend.Start on
// Apache), where its names carry a suffix of its own.
type Cluster struct {
	b      broker         // nil on a shared broker
	topics map[string]int // the topics its own broker seeds, with their partitions
	suffix string
	addrs  []string // the brokers' addresses, the same across restarts
}

// broker is a Kafka a cluster starts, stops and damages.
type broker interface {
	// boot starts the broker, on the ports it had before if any, with
	// topics created where they are not there already, and returns its
	// listen addresses.
	boot(t testing.TB, topics map[string]int) []string
	// stop stops the broker, as a broker that goes away.
	stop()
	// onDisk tells whether the broker keeps its state across boots.
	onDisk() bool
	// loseLogs deletes the stopped broker's partition logs, keeping its
	// metadata: the topics keep their ids.
	loseLogs(t testing.TB)
	// wipe deletes the stopped broker's state, metadata and all.
	wipe(t testing.TB)
}

// Start runs a cluster on the selected backend (Selected) with topic, of
// partitions partitions, created; topic's name on the broker is
// c.Name(topic).
func Start(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	return Selected(t).Start(t, topic, partitions)
}

// StartOnDisk is StartOnDisk of the selected backend: a broker of the
// test's own, which it may stop and restart.
func StartOnDisk(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	return Selected(t).StartOnDisk(t, topic, partitions)
}

// own starts b as the test's own broker, stopped when the test ends.
func own(t testing.TB, b broker, topic string, partitions int) *Cluster {
	t.Helper()
	c := &Cluster{b: b, topics: map[string]int{topic: partitions}}
	t.Cleanup(b.stop)
	c.addrs = b.boot(t, c.topics)
	return c
}

// Name is the name s (a topic's, a consumer group's) has on the cluster's
// broker: s itself on a broker of the test's own, s with the cluster's
// suffix on a shared one, so that tests sharing it do not meet.
func (c *Cluster) Name(s string) string { return s + c.suffix }

// Addr is the bootstrap servers' list, also while the cluster is stopped.
func (c *Cluster) Addr() string { return strings.Join(c.addrs, ",") }

// ownBroker is the test's own broker, or a failure naming the way to get
// one for what.
func (c *Cluster) ownBroker(t testing.TB, what string) broker {
	t.Helper()
	if c.b == nil {
		t.Fatalf("kafkatest: %s needs a broker of the test's own; start the cluster with StartOnDisk", what)
	}
	return c.b
}

// Stop shuts the test's own broker down, as a broker that goes away.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	c.ownBroker(t, "Stop").stop()
}

// Restart stops an on-disk cluster (StartOnDisk) and starts it again on
// the same address with its topics and messages: brokers briefly down.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	b := c.ownBroker(t, "Restart")
	if !b.onDisk() {
		t.Fatal("kafkatest: Restart needs a cluster started with StartOnDisk")
	}
	b.stop()
	c.boot(t)
}

// RestartEmpty stops the cluster and starts a new one on the same address
// with the same topics, empty and with new topic ids: a broker that lost
// its disk, metadata and all, and created its topics again.
func (c *Cluster) RestartEmpty(t testing.TB) {
	t.Helper()
	b := c.ownBroker(t, "RestartEmpty")
	b.stop()
	b.wipe(t)
	c.boot(t)
}

// RestartLosingLogs stops an on-disk cluster (StartOnDisk), deletes its
// partitions' logs and starts it again on the same address: the topics
// keep their ids and partitions, and their offsets start again at 0, as a
// broker restarted with an empty log directory whose controller kept the
// topics.
func (c *Cluster) RestartLosingLogs(t testing.TB) {
	t.Helper()
	b := c.ownBroker(t, "RestartLosingLogs")
	if !b.onDisk() {
		t.Fatal("kafkatest: RestartLosingLogs needs a cluster started with StartOnDisk")
	}
	b.stop()
	b.loseLogs(t)
	c.boot(t)
}

func (c *Cluster) boot(t testing.TB) {
	t.Helper()
	c.b.boot(t, c.topics)
}

// client is a client of the cluster as it is now.
func (c *Cluster) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := clientOf(c.addrs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func clientOf(addrs []string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
}

// Produce writes the records, each to its Partition, and waits for them.
func (c *Cluster) Produce(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	cl := c.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// Consume reads every message of topic, from each partition's start to
// its end as it is now.
func (c *Cluster) Consume(t testing.TB, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := c.client(t)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	from, left := map[int32]kgo.Offset{}, map[int32]int64{}
	starts.Each(func(o kadm.ListedOffset) {
		if end, ok := ends.Lookup(topic, o.Partition); ok && end.Offset > o.Offset {
			from[o.Partition], left[o.Partition] = kgo.NewOffset().At(o.Offset), end.Offset
		}
	})
	if len(from) == 0 {
		return nil
	}
	rd := c.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	defer rd.Close()
	var out []*kgo.Record
	for len(left) > 0 {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

// settle is how long a broker may take to show a topic created or
// deleted in its metadata: a real broker applies the controller's record
// a moment after it answers.
const settle = 30 * time.Second

// DeleteTopic deletes topic with its messages, and waits until the broker
// no longer lists it.
func (c *Cluster) DeleteTopic(t testing.TB, topic string) {
	t.Helper()
	cl := c.client(t)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.DeleteTopic(context.Background(), topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	if err := waitTopic(adm, topic, func(_ kadm.TopicDetail, found bool) bool { return !found }); err != nil {
		t.Fatal(err)
	}
}

// CreateTopic creates topic with partitions partitions, and waits until
// each has a leader; a new topic has a new id, even under the name of one
// deleted.
func (c *Cluster) CreateTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	cl := c.client(t)
	defer cl.Close()
	if err := createTopic(kadm.NewClient(cl), topic, partitions, true); err != nil {
		t.Fatal(err)
	}
}

// createTopic creates topic and waits until each of its partitions has a
// leader. A topic of that name already there is taken as it is, unless
// fresh: the name is then taken to be still held by a topic just deleted,
// which a broker deletes a moment after it answers, and the creation is
// tried again.
func createTopic(adm *kadm.Client, topic string, partitions int, fresh bool) error {
	for deadline := time.Now().Add(settle); ; time.Sleep(50 * time.Millisecond) {
		resp, err := adm.CreateTopic(context.Background(), int32(partitions), -1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err == nil || !fresh && errors.Is(err, kerr.TopicAlreadyExists) {
			break
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) || time.Now().After(deadline) {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	return waitTopic(adm, topic, func(d kadm.TopicDetail, found bool) bool {
		if !found || len(d.Partitions) != partitions {
			return false
		}
		for _, p := range d.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// waitTopic waits until the broker's metadata of topic satisfies ok.
func waitTopic(adm *kadm.Client, topic string, ok func(d kadm.TopicDetail, found bool) bool) error {
	var last string
	for deadline := time.Now().Add(settle); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m, err := adm.Metadata(context.Background(), topic)
		if err != nil {
			last = err.Error()
			continue
		}
		d, found := m.Topics[topic]
		found = found && !errors.Is(d.Err, kerr.UnknownTopicOrPartition)
		if ok(d, found) {
			return nil
		}
		last = fmt.Sprintf("%+v", d)
	}
	return fmt.Errorf("kafkatest: topic %s did not settle within %v: %s", topic, settle, last)
}

// Trim deletes the messages of topic's partition before offset before,
// as retention deletes old segments (DeleteRecords).
func (c *Cluster) Trim(t testing.TB, topic string, partition int32, before int64) {
	t.Helper()
	cl := c.client(t)
	defer cl.Close()
	var to kadm.Offsets
	to.Add(kadm.Offset{Topic: topic, Partition: partition, At: before})
	resp, err := kadm.NewClient(cl).DeleteRecords(context.Background(), to)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete records of %s/%d before %d: %v", topic, partition, before, err)
	}
}
