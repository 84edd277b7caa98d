package cluster

import (
	"slices"
	"time"
)

// Positions is where one worker reads each partition the group gives it:
// the table's recorded end, or past the ranges it published that the table
// has not committed yet, so that it does not wait for the commit of one
// interval to read the next.
type Positions struct {
	// Stall is how long a published range may wait for its commit before
	// the worker reads its partition again from the table's end: the event
	// may have been lost (the control topic's retention) or be waiting on
	// a range that will never come.
	Stall time.Duration

	next    Offsets
	pending map[TopicPartition][]published
	events  int64
	// ranges are each waiting event's ranges, of partitions held or not.
	ranges map[int64][]Range
}

type published struct {
	from, until int64
	at          time.Time
	event       int64 // which Published call, to drop an event's ranges together
}

// Sync keeps the partitions held and lines each up with the table's
// record: ranges the record covers are done; a partition whose published
// ranges no longer continue from the record's end (another worker's range
// for it was committed, or one of its own was stale or stalled) is read
// again from that end, and so are the other partitions of the events it
// dropped, since an event commits all of its ranges or none. initial gives
// the start of partitions the record does not name yet.
func (p *Positions) Sync(held []TopicPartition, recorded, initial Offsets, now time.Time) {
	if p.next == nil {
		p.next, p.pending, p.ranges = Offsets{}, map[TopicPartition][]published{}, map[int64][]Range{}
	}
	keep := Offsets{}
	dropped := map[int64]bool{}
	for ev, ranges := range p.ranges {
		switch staleOrDone(ranges, recorded) {
		case done:
			delete(p.ranges, ev)
		case stale:
			// The record went past a range of the event on a partition
			// this worker may no longer hold: it never commits.
			dropped[ev] = true
			delete(p.ranges, ev)
		}
	}
	reset := func(tp TopicPartition, to int64) {
		for _, r := range p.pending[tp] {
			dropped[r.event] = true
		}
		keep.Set(tp, to)
		p.pending[tp] = nil
	}
	for _, tp := range held {
		rec, known := recorded.Get(tp)
		next, tracked := p.next.Get(tp)
		pend := p.pending[tp]
		if known {
			pend = slices.DeleteFunc(pend, func(r published) bool { return r.until <= rec })
		}
		p.pending[tp] = pend
		stalled := len(pend) > 0 && p.Stall > 0 && now.Sub(pend[0].at) > p.Stall
		switch {
		case !tracked:
			if !known {
				rec, _ = initial.Get(tp)
			}
			reset(tp, rec)
		case stalled && known, known && len(pend) == 0 && next != rec, known && len(pend) > 0 && pend[0].from != rec:
			reset(tp, rec)
		case stalled:
			reset(tp, pend[0].from)
		default:
			keep.Set(tp, next)
		}
	}
	for again := len(dropped) > 0; again; {
		again = false
		for _, tp := range held {
			pend := p.pending[tp]
			if slices.ContainsFunc(pend, func(r published) bool { return dropped[r.event] }) {
				to := pend[0].from
				if rec, known := recorded.Get(tp); known {
					to = rec
				}
				reset(tp, to)
				again = true
			}
		}
	}
	for tp := range p.pending {
		if _, ok := keep.Get(tp); !ok {
			delete(p.pending, tp)
		}
	}
	p.next = keep
}

// Start is where the next interval reads each held partition.
func (p *Positions) Start() Offsets { return p.next.Clone() }

// Idle is Start for the held partitions with no published range waiting
// for its commit.
func (p *Positions) Idle() Offsets {
	out := Offsets{}
	// next holds only partitions Sync set, all of them numbers.
	tps, _ := p.next.Partitions()
	for _, tp := range tps {
		if len(p.pending[tp]) == 0 {
			n, _ := p.next.Get(tp)
			out.Set(tp, n)
		}
	}
	return out
}

// Published records the ranges of an event sent at now: the next interval
// reads on from their ends.
func (p *Positions) Published(ranges []Range, now time.Time) {
	p.events++
	p.ranges[p.events] = ranges
	for _, r := range ranges {
		p.pending[r.TopicPartition] = append(p.pending[r.TopicPartition], published{from: r.From, until: r.Until, at: now, event: p.events})
		p.next.Set(r.TopicPartition, r.Until)
	}
}

// Waiting is the number of published ranges not committed yet and the age
// of the oldest: the commit lag.
func (p *Positions) Waiting(now time.Time) (n int, oldest time.Duration) {
	for _, pend := range p.pending {
		n += len(pend)
		if len(pend) > 0 {
			oldest = max(oldest, now.Sub(pend[0].at))
		}
	}
	return n, oldest
}

type eventState int

const (
	waiting eventState = iota
	done
	stale
)

// staleOrDone tells what the record says of an event's ranges: done when
// it covers every one (the event, or others with the same messages, was
// committed), stale when it went past the start of one while another is
// not covered (another event's range of that partition was committed
// first, so this one cannot chain), else waiting.
func staleOrDone(ranges []Range, recorded Offsets) eventState {
	covered, past := true, false
	for _, r := range ranges {
		rec, known := recorded.Get(r.TopicPartition)
		if !known || rec < r.Until {
			covered = false
		}
		if known && rec > r.From {
			past = true
		}
	}
	switch {
	case covered:
		return done
	case past:
		return stale
	}
	return waiting
}
