// Package kafkatest runs an in-process Kafka cluster (franz-go's kfake) on
// 127.0.0.1 for tests, reachable by the built binary and by kcat.
package kafkatest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a running cluster; it stops when the test ends, or at Stop.
type Cluster struct {
	c    *kfake.Cluster
	stop sync.Once
}

// Start runs a cluster with topic, of partitions partitions, created.
func Start(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		t.Fatal(err)
	}
	k := &Cluster{c: c}
	t.Cleanup(k.Stop)
	return k
}

// Stop shuts the cluster down, as a broker that goes away.
func (c *Cluster) Stop() { c.stop.Do(c.c.Close) }

// Addr is the bootstrap servers' list.
func (c *Cluster) Addr() string { return strings.Join(c.c.ListenAddrs(), ",") }

// Produce writes the records, each to its Partition, and waits for them.
func (c *Cluster) Produce(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
