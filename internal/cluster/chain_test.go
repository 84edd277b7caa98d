package cluster_test

import (
	"math/rand/v2"
	"testing"

	"github.com/floe-io/floe/internal/cluster"
)

func rng(p int32, from, until int64) cluster.Range {
	return cluster.Range{TopicPartition: cluster.TopicPartition{Topic: "t", Partition: p}, From: from, Until: until}
}

func pending(off int64, ranges ...cluster.Range) cluster.Pending {
	return cluster.Pending{Offset: off, Event: cluster.Event{Ranges: ranges}}
}

func offsetsOf(kv ...int64) cluster.Offsets {
	o := cluster.Offsets{}
	for i := 0; i < len(kv); i += 2 {
		o.Set(cluster.TopicPartition{Topic: "t", Partition: int32(kv[i])}, kv[i+1])
	}
	return o
}

func offsets(ps []cluster.Pending) []int64 {
	var out []int64
	for _, p := range ps {
		out = append(out, p.Offset)
	}
	return out
}

func TestChain(t *testing.T) {
	t.Parallel()
	reset := func(r cluster.Range, n int64) cluster.Range { r.Resets = n; return r }
	for _, c := range []struct {
		name              string
		end               cluster.Offsets
		resets            cluster.Offsets
		pending           []cluster.Pending
		take, stale, wait []int64
		after             cluster.Offsets
	}{
		{"in order", offsetsOf(0, 10, 1, 5), nil, []cluster.Pending{pending(1, rng(0, 10, 20)), pending(2, rng(1, 5, 9), rng(0, 20, 25))},
			[]int64{1, 2}, nil, nil, offsetsOf(0, 25, 1, 9)},
		{"out of order on the topic", offsetsOf(0, 10), nil, []cluster.Pending{pending(1, rng(0, 20, 30)), pending(2, rng(0, 10, 20))},
			[]int64{2, 1}, nil, nil, offsetsOf(0, 30)},
		{"a zombie's range after the new owner's", offsetsOf(0, 10), nil, []cluster.Pending{pending(1, rng(0, 10, 20)), pending(2, rng(0, 10, 25))},
			[]int64{1}, []int64{2}, nil, offsetsOf(0, 20)},
		{"committed already", offsetsOf(0, 30), nil, []cluster.Pending{pending(1, rng(0, 10, 20)), pending(2, rng(0, 20, 30))},
			nil, []int64{1, 2}, nil, offsetsOf(0, 30)},
		{"a gap waits", offsetsOf(0, 10), nil, []cluster.Pending{pending(1, rng(0, 20, 30))},
			nil, nil, []int64{1}, offsetsOf(0, 10)},
		{"all ranges of an event or none", offsetsOf(0, 10, 1, 5), nil, []cluster.Pending{pending(1, rng(0, 10, 20), rng(1, 7, 9))},
			nil, nil, []int64{1}, offsetsOf(0, 10, 1, 5)},
		{"one range behind makes the event stale", offsetsOf(0, 10, 1, 5), nil, []cluster.Pending{pending(1, rng(0, 10, 20), rng(1, 3, 9))},
			nil, []int64{1}, nil, offsetsOf(0, 10, 1, 5)},
		{"a partition the table has no offset of", offsetsOf(0, 10), nil, []cluster.Pending{pending(1, rng(3, 40, 50)), pending(2, rng(3, 0, 60))},
			[]int64{1}, []int64{2}, nil, offsetsOf(0, 10, 3, 50)},
		// Partition 0 was set back to its earliest offset once: a range of
		// its old log is stale wherever it starts, the first range of its
		// new log joins wherever the log starts, and a second one from the
		// same start (another worker's) is stale.
		{"set back: the old log's range is stale", offsetsOf(0, cluster.Earliest), offsetsOf(0, 1), []cluster.Pending{pending(1, rng(0, 3000, 3500))},
			nil, []int64{1}, nil, offsetsOf(0, cluster.Earliest)},
		{"set back: the new log's first range joins once", offsetsOf(0, cluster.Earliest), offsetsOf(0, 1),
			[]cluster.Pending{pending(1, reset(rng(0, 7, 20), 1)), pending(2, reset(rng(0, 7, 30), 1)), pending(3, reset(rng(0, 20, 25), 1))},
			[]int64{1, 3}, []int64{2}, nil, offsetsOf(0, 25)},
		{"set back: a range planned after the record's next reset waits", offsetsOf(0, 40), offsetsOf(0, 1), []cluster.Pending{pending(1, reset(rng(0, 40, 50), 2))},
			nil, nil, []int64{1}, offsetsOf(0, 40)},
		{"set back: an old range of the same offsets is stale", offsetsOf(0, 40), offsetsOf(0, 1), []cluster.Pending{pending(1, rng(0, 40, 50))},
			nil, []int64{1}, nil, offsetsOf(0, 40)},
	} {
		t.Run(c.name, func(t *testing.T) {
			take, stale, wait, after := cluster.Chain(cluster.State{Ends: c.end, Resets: c.resets}, c.pending, false)
			if g, w := offsets(take), c.take; !equal(g, w) {
				t.Errorf("take %v, want %v", g, w)
			}
			if g, w := offsets(stale), c.stale; !equal(g, w) {
				t.Errorf("stale %v, want %v", g, w)
			}
			if g, w := offsets(wait), c.wait; !equal(g, w) {
				t.Errorf("wait %v, want %v", g, w)
			}
			if !equal(flat(after), flat(c.after)) {
				t.Errorf("after %v, want %v", after, c.after)
			}
		})
	}
}

// With once (upserts), a partition's second range waits for the next
// commit, and so does the event holding it, while other partitions'
// ranges join.
func TestChainOnce(t *testing.T) {
	t.Parallel()
	ps := []cluster.Pending{pending(1, rng(0, 0, 10)), pending(2, rng(0, 10, 20), rng(1, 0, 5)), pending(3, rng(3, 0, 7)), pending(4, rng(2, 0, 3))}
	take, stale, wait, after := cluster.Chain(cluster.State{Ends: offsetsOf(0, 0, 1, 0)}, ps, true)
	if !equal(offsets(take), []int64{1, 3, 4}) || !equal(offsets(wait), []int64{2}) || len(stale) != 0 {
		t.Fatalf("take %v wait %v stale %v, want take [1 3 4], wait [2]", offsets(take), offsets(wait), offsets(stale))
	}
	if !equal(flat(after), flat(offsetsOf(0, 10, 1, 0, 2, 3, 3, 7))) {
		t.Fatalf("after %v", after)
	}
	// The next commit takes it.
	take, _, _, after = cluster.Chain(cluster.State{Ends: after}, wait, true)
	if !equal(offsets(take), []int64{2}) || !equal(flat(after), flat(offsetsOf(0, 20, 1, 5, 2, 3, 3, 7))) {
		t.Fatalf("take %v after %v, want [2]", offsets(take), after)
	}
	take, _, _, _ = cluster.Chain(cluster.State{Ends: offsetsOf(0, 0, 1, 0)}, ps, false)
	if !equal(offsets(take), []int64{1, 2, 3, 4}) {
		t.Fatalf("without once: take %v, want [1 2 3 4]", offsets(take))
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func flat(o cluster.Offsets) []int64 {
	var out []int64
	tps, _ := o.Partitions()
	for _, tp := range tps {
		n, _ := o.Get(tp)
		out = append(out, int64(tp.Partition), n)
	}
	return out
}

// A model of workers that lose and regain partitions, fall asleep as
// zombies, re-read after stalls and publish out of order, and of
// coordinators that commit whatever chains: every offset of every
// partition is committed exactly once, in order, whatever happens.
func TestChainRandomWorkersCommitEachOffsetOnce(t *testing.T) {
	t.Parallel()
	const parts = 4
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, seed))
		end := cluster.Offsets{}
		for p := range parts {
			end.Set(cluster.TopicPartition{Topic: "t", Partition: int32(p)}, 0)
		}
		committed := make([]int64, parts) // offsets committed per partition, to check order and once
		var topic []cluster.Pending
		// Each worker's idea of where it reads, which may be stale.
		workers := make([]cluster.Offsets, 3)
		for w := range workers {
			workers[w] = end.Clone()
		}
		var next int64
		for step := range 300 {
			w := r.IntN(len(workers))
			switch r.IntN(5) {
			case 0: // re-sync with the table, as after a rebalance or a stall
				workers[w] = end.Clone()
			case 1, 2, 3: // read and publish some partitions
				var ranges []cluster.Range
				for p := range parts {
					if r.IntN(2) == 0 {
						continue
					}
					tp := cluster.TopicPartition{Topic: "t", Partition: int32(p)}
					from, _ := workers[w].Get(tp)
					n := int64(1 + r.IntN(5))
					ranges = append(ranges, rng(int32(p), from, from+n))
					workers[w].Set(tp, from+n)
				}
				if len(ranges) > 0 {
					topic = append(topic, pending(next, ranges...))
					next++
				}
			case 4: // a coordinator commits what chains
				take, _, wait, after := cluster.Chain(cluster.State{Ends: end}, topic, false)
				for _, p := range take {
					for _, rg := range p.Event.Ranges {
						if rg.From != committed[rg.Partition] {
							t.Fatalf("seed %d step %d: partition %d committed from %d, the table ended at %d", seed, step, rg.Partition, rg.From, committed[rg.Partition])
						}
						committed[rg.Partition] = rg.Until
					}
				}
				end, topic = after, wait
			}
		}
		for p := range parts {
			n, _ := end.Get(cluster.TopicPartition{Topic: "t", Partition: int32(p)})
			if n != committed[p] {
				t.Fatalf("seed %d: partition %d ends at %d, its committed ranges at %d", seed, p, n, committed[p])
			}
		}
	}
}
