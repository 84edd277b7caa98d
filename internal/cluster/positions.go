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
		p.next, p.pending = Offsets{}, map[TopicPartition][]published{}
	}
	keep := Offsets{}
	dropped := map[int64]bool{}
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

// Published records the ranges of an event sent at now: the next interval
// reads on from their ends.
func (p *Positions) Published(ranges []Range, now time.Time) {
	p.events++
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
