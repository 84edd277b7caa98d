package cluster_test

import (
	"testing"
	"time"

	"github.com/floe-io/floe/internal/cluster"
)

func TestPositions(t *testing.T) {
	t.Parallel()
	tp0 := cluster.TopicPartition{Topic: "t", Partition: 0}
	tp1 := cluster.TopicPartition{Topic: "t", Partition: 1}
	now := time.Unix(1000, 0)
	at := func(p *cluster.Positions, tp cluster.TopicPartition) int64 {
		n, _ := p.Start().Get(tp)
		return n
	}
	t.Run("reads past its own published ranges until they commit", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20)}, now)
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now)
		if n := at(&p, tp0); n != 20 {
			t.Fatalf("next %d, want 20", n)
		}
		p.Published([]cluster.Range{rng(0, 20, 30)}, now)
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 20), nil, now)
		if n, _ := p.Waiting(now); n != 1 || at(&p, tp0) != 30 {
			t.Fatalf("after the first commit: next %d, %d waiting", at(&p, tp0), n)
		}
	})
	t.Run("another worker's range committed: read again from the table", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20)}, now)
		// A zombie's (10, 15] was committed before this worker's range.
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 15), nil, now)
		if n, w := at(&p, tp0), 15; n != int64(w) {
			t.Fatalf("next %d, want %d", n, w)
		}
	})
	t.Run("a stalled range is read again", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20)}, now)
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now.Add(2*time.Minute))
		if n := at(&p, tp0); n != 10 {
			t.Fatalf("next %d, want 10", n)
		}
	})
	t.Run("a partition not held is forgotten; a new one starts at the table or the initial offset", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20)}, now)
		p.Sync([]cluster.TopicPartition{tp1}, offsetsOf(0, 10), offsetsOf(1, 7), now)
		if _, ok := p.Start().Get(tp0); ok {
			t.Fatal("a revoked partition is still planned")
		}
		if n := at(&p, tp1); n != 7 {
			t.Fatalf("new partition starts at %d, want the initial 7", n)
		}
		p.Sync([]cluster.TopicPartition{tp0, tp1}, offsetsOf(0, 10), nil, now)
		if n := at(&p, tp0); n != 10 {
			t.Fatalf("a partition held again starts at %d, want the table's 10", n)
		}
	})
	t.Run("an event dropped on one partition is read again on all of its partitions", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		held := []cluster.TopicPartition{tp0, tp1}
		p.Sync(held, offsetsOf(0, 10, 1, 50), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20), rng(1, 50, 60)}, now)
		// Another worker's (50, 55] of partition 1 was committed first:
		// the event is stale on partition 1, so partition 0's range of it
		// will never commit either.
		p.Sync(held, offsetsOf(0, 10, 1, 55), nil, now)
		if a, b := at(&p, tp0), at(&p, tp1); a != 10 || b != 55 {
			t.Fatalf("next %d and %d, want 10 and 55", a, b)
		}
		if n, _ := p.Waiting(now); n != 0 {
			t.Fatalf("%d ranges still waiting", n)
		}
	})
	t.Run("an event stale on a partition no longer held is read again on the ones held", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0, tp1}, offsetsOf(0, 10, 1, 50), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20), rng(1, 50, 60)}, now)
		// Partition 1 moved to another worker, and a zombie's (50, 55]
		// of it was committed first: partition 0's range never commits.
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10, 1, 55), nil, now)
		if a := at(&p, tp0); a != 10 {
			t.Fatalf("next %d, want 10", a)
		}
		if n, _ := p.Waiting(now); n != 0 {
			t.Fatalf("%d ranges still waiting", n)
		}
		if _, ok := p.Idle().Get(tp0); !ok {
			t.Fatal("partition 0 is not planned again")
		}
	})
	t.Run("an event committed on every partition is done", func(t *testing.T) {
		p := cluster.Positions{Stall: time.Minute}
		p.Sync([]cluster.TopicPartition{tp0, tp1}, offsetsOf(0, 10, 1, 50), nil, now)
		p.Published([]cluster.Range{rng(0, 10, 20), rng(1, 50, 60)}, now)
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 10, 1, 50), nil, now)
		if a := at(&p, tp0); a != 20 {
			t.Fatalf("waiting for its commit: next %d, want 20", a)
		}
		if _, ok := p.Idle().Get(tp0); ok {
			t.Fatal("partition 0 is planned while its range waits")
		}
		p.Sync([]cluster.TopicPartition{tp0}, offsetsOf(0, 20, 1, 60), nil, now)
		if a := at(&p, tp0); a != 20 {
			t.Fatalf("after its commit: next %d, want 20", a)
		}
	})
}
