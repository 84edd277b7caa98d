package cluster

import (
	"slices"

	"github.com/floe-io/floe/internal/ingest"
)

// Pending is an event read from the control topic and not yet committed.
type Pending struct {
	// Offset is the event's place on the control topic.
	Offset int64
	Event  Event
	// files are the event's data files, read once; keys its key set,
	// once read (upserts).
	files []ingest.DataFile
	keys  []byte
}

// Chain resolves pending events, in control-topic order, against st, where
// the table's record says the cluster stands. An event whose every range
// starts exactly where its partition ends (or at a partition the table has
// no offset of yet, or one set back to Earliest) joins the chain and moves
// those ends. A range planned before its partition was last set back
// (Range.Resets) is of a log that is gone, and stale. An event with a range
// starting before its partition's end holds messages the table has
// already, from a worker that lost the partition, a worker that re-read
// after a stall, or an event committed earlier: it is stale, and never
// committed. The rest wait for the ranges before them. Since an event
// commits only where the table's ends are, no message is committed twice
// and none is skipped, whoever publishes or commits. With once, a
// partition's ranges join one at a time: the rows of an upsert's next
// range replace rows of its previous one, which the commit adding both
// could not delete.
func Chain(st State, pending []Pending, once bool) (take, stale, wait []Pending, after Offsets) {
	after = st.Ends.Clone()
	moved := map[TopicPartition]bool{}
	again := func(ranges []Range) bool {
		return once && slices.ContainsFunc(ranges, func(r Range) bool { return moved[r.TopicPartition] })
	}
	rest := pending
	for more := true; more; {
		more = false
		next := rest[:0:0]
		for _, p := range rest {
			switch f := fits(after, st.Resets, p.Event.Ranges); {
			case f == joins && again(p.Event.Ranges):
				next = append(next, p)
			case f == joins:
				take = append(take, p)
				for _, r := range p.Event.Ranges {
					after.Set(r.TopicPartition, r.Until)
					moved[r.TopicPartition] = true
				}
				more = true
			case f == behind:
				stale = append(stale, p)
			default:
				next = append(next, p)
			}
		}
		rest = next
	}
	return take, stale, rest, after
}

type fit int

const (
	joins fit = iota
	behind
	ahead
)

// fits tells where ranges stand against the ends: behind when any starts
// before its partition's end or was planned before the partition was last
// set back, joins when every one starts at it.
func fits(end, resets Offsets, ranges []Range) fit {
	f := joins
	for _, r := range ranges {
		n, ok := end.Get(r.TopicPartition)
		e, _ := resets.Get(r.TopicPartition)
		switch {
		case r.Resets < e:
			return behind
		case r.Resets > e:
			f = ahead
		case !ok, n == Earliest:
		case r.From < n:
			return behind
		case r.From > n:
			f = ahead
		}
	}
	return f
}
