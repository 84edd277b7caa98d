package kafka_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/kafka"
)

// A worker the group's coordinator refuses for its session timeout learns
// it from Assignment, as a configuration error naming the option, and
// holds nothing meanwhile; one the group takes holds every partition.
func TestJoinClusterRefused(t *testing.T) {
	t.Parallel()
	k := kafkatest.Start(t, "events", 2)
	for _, c := range []struct {
		timeout string
		refused bool
	}{{"3000", true}, {"6000", false}} {
		a, err := joinOrRefused(t, openKafka(t, k, "kafka.group.id="+k.Name("g"+c.timeout), "kafka.session.timeout.ms="+c.timeout), 2)
		switch {
		case c.refused && (!errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "kafka.session.timeout.ms 3000")):
			t.Fatalf("session timeout 3000: want a configuration error naming it, got %v (holding %v)", err, a.Held)
		case !c.refused && err != nil:
			t.Fatalf("session timeout 6000: %v", err)
		}
	}
}

// Brokers whose group.min.session.timeout.ms is above a cluster's default
// session timeout refuse a worker that sets none, which is told the
// default it asked for and the option to set.
func TestJoinClusterDefaultRefused(t *testing.T) {
	t.Parallel()
	// kfake changes the bound at run time; the Apache broker reads it at
	// start only.
	k := kafkatest.KFake.Start(t, "events", 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	least := "10000"
	if _, err := kadm.NewClient(cl).AlterBrokerConfigsState(t.Context(), []kadm.AlterConfig{{Name: "group.min.session.timeout.ms", Value: &least}}); err != nil {
		t.Fatal(err)
	}
	a, err := joinOrRefused(t, openKafka(t, k, "kafka.group.id="+k.Name("g")), 2)
	if !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "kafka.session.timeout.ms 6000 (a cluster's default)") ||
		!strings.Contains(err.Error(), "set source.options.kafka.session.timeout.ms") {
		t.Fatalf("want a configuration error naming the default session timeout and the option, got %v (holding %v)", err, a.Held)
	}
}

// joinOrRefused joins src's group and waits until Assignment fails or
// holds all of the topic's partitions.
func joinOrRefused(t *testing.T, src *kafka.Source, partitions int) (cluster.Assignment, error) {
	t.Helper()
	m, ok, err := src.JoinCluster(t.Context())
	if err != nil || !ok {
		t.Fatalf("join: %v, %v", ok, err)
	}
	defer m.Close()
	var a cluster.Assignment
	for deadline := time.Now().Add(60 * time.Second); err == nil && len(a.Held) < partitions; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("neither refused nor assigned within 60 s: %+v", a)
		}
		a, err = m.Assignment(t.Context())
	}
	return a, err
}
