// Package kafkatest runs an in-process Kafka cluster (franz-go's kfake) on
// 127.0.0.1 for tests, reachable by the built binary and by kcat, and
// breaks it as the world outside breaks Kafka: topics deleted and created
// again, messages deleted by retention, a broker restarted without its
// log.
package kafkatest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a running cluster; it stops when the test ends, or at Stop.
type Cluster struct {
	mu      sync.Mutex
	c       *kfake.Cluster
	stopped bool
	ports   []int
	addrs   []string       // the brokers' addresses, the same across restarts
	topics  map[string]int // the topics seeded at start, with their partitions
	dataDir string         // where an on-disk cluster keeps its state
}

// Start runs a cluster with topic, of partitions partitions, created.
func Start(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	return start(t, topic, partitions, "")
}

// StartOnDisk is Start with the cluster's state kept in a directory, so
// that RestartLosingLogs can restart it with its topics and without their
// messages.
func StartOnDisk(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	return start(t, topic, partitions, t.TempDir())
}

func start(t testing.TB, topic string, partitions int, dataDir string) *Cluster {
	k := &Cluster{topics: map[string]int{topic: partitions}, dataDir: dataDir}
	k.boot(t)
	t.Cleanup(k.Stop)
	return k
}

// boot starts kfake on the cluster's ports (any free one the first time)
// and seeds its topics where they are not there already.
func (c *Cluster) boot(t testing.TB) {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	for topic, n := range c.topics {
		opts = append(opts, kfake.SeedTopics(int32(n), topic))
	}
	if c.ports != nil {
		opts = append(opts, kfake.Ports(c.ports...))
	}
	if c.dataDir != "" {
		opts = append(opts, kfake.DataDir(c.dataDir))
	}
	kc, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.c, c.stopped = kc, false
	c.mu.Unlock()
	if c.ports == nil {
		c.addrs = kc.ListenAddrs()
		for _, a := range c.addrs {
			_, p, err := net.SplitHostPort(a)
			n, perr := strconv.Atoi(p)
			if err != nil || perr != nil {
				t.Fatalf("kfake listens on %q", a)
			}
			c.ports = append(c.ports, n)
		}
	}
}

// Stop shuts the cluster down, as a broker that goes away.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.c.Close()
		c.stopped = true
	}
}

// Restart stops an on-disk cluster (StartOnDisk) and starts it again on
// the same address with its topics and messages: brokers briefly down.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	if c.dataDir == "" {
		t.Fatal("kafkatest: Restart needs a cluster started with StartOnDisk")
	}
	c.Stop()
	c.boot(t)
}

// RestartEmpty stops the cluster and starts a new one on the same address
// with the same topics, empty and with new topic ids: a broker that lost
// its disk, metadata and all, and created its topics again.
func (c *Cluster) RestartEmpty(t testing.TB) {
	t.Helper()
	c.Stop()
	if c.dataDir != "" {
		if err := os.RemoveAll(c.dataDir); err != nil {
			t.Fatal(err)
		}
	}
	c.boot(t)
}

// RestartLosingLogs stops an on-disk cluster (StartOnDisk), deletes its
// partitions' logs and starts it again on the same address: the topics
// keep their ids and partitions, and their offsets start again at 0, as a
// broker restarted with an empty log directory whose controller kept the
// topics.
func (c *Cluster) RestartLosingLogs(t testing.TB) {
	t.Helper()
	if c.dataDir == "" {
		t.Fatal("kafkatest: RestartLosingLogs needs a cluster started with StartOnDisk")
	}
	c.Stop()
	if err := os.RemoveAll(filepath.Join(c.dataDir, "partitions")); err != nil {
		t.Fatal(err)
	}
	c.boot(t)
}

// Addr is the bootstrap servers' list, also while the cluster is stopped.
func (c *Cluster) Addr() string { return strings.Join(c.addrs, ",") }

// client is a client of the cluster as it is now.
func (c *Cluster) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.Addr(), ",")...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
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

// DeleteTopic deletes topic with its messages.
func (c *Cluster) DeleteTopic(t testing.TB, topic string) {
	t.Helper()
	cl := c.client(t)
	defer cl.Close()
	resp, err := kadm.NewClient(cl).DeleteTopic(context.Background(), topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
}

// CreateTopic creates topic with partitions partitions; a new topic has a
// new id, even under the name of one deleted.
func (c *Cluster) CreateTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	cl := c.client(t)
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), int32(partitions), -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
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
