package kafka_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/source"
)

// A worker the group's coordinator refuses for its session timeout learns
// it from Assignment, as a configuration error naming the option, and
// holds nothing meanwhile; one the group takes holds every partition.
func TestJoinClusterRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k := kafkatest.Start(t, "events", 2)
	for _, c := range []struct {
		timeout string
		refused bool
	}{{"3000", true}, {"6000", false}} {
		src := openKafka(t, k, "kafka.group.id="+k.Name("g"+c.timeout), "kafka.session.timeout.ms="+c.timeout)
		m, ok, err := src.JoinCluster(ctx)
		if err != nil || !ok {
			t.Fatalf("join: %v, %v", ok, err)
		}
		var a cluster.Assignment
		for deadline := time.Now().Add(60 * time.Second); err == nil && len(a.Held) < 2; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("session timeout %s: neither refused nor assigned within 60 s: %+v", c.timeout, a)
			}
			a, err = m.Assignment(ctx)
		}
		m.Close()
		switch {
		case c.refused && (!errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "kafka.session.timeout.ms 3000")):
			t.Fatalf("session timeout 3000: want a configuration error naming it, got %v (holding %v)", err, a.Held)
		case !c.refused && err != nil:
			t.Fatalf("session timeout 6000: %v", err)
		}
	}
}
