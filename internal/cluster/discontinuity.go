package cluster

import (
	"fmt"
	"strings"
)

// Discontinuity is a partition whose log no longer goes on from the offset
// a query read it up to: the partition is gone, its topic was deleted and
// created again (another topic id), or its log ends before that offset (a
// broker that lost its log, or a topic created again by a broker that
// gives no topic ids). Messages the query had not read may be lost, and
// the offsets it holds mean nothing in the new log.
type Discontinuity struct {
	TopicPartition
	// Read is the offset the query read the partition up to.
	Read int64
	// Gone is set when the partition no longer exists; otherwise Start and
	// End are its log now: its first offset and the next to be written.
	Gone       bool
	Start, End int64
	// OldID and NewID are the topic's recorded and current ids when they
	// differ.
	OldID, NewID string
}

func (d Discontinuity) String() string {
	if d.OldID != d.NewID && !d.Gone {
		return d.recreated() + ": " + d.partition()
	}
	return d.partition()
}

func (d Discontinuity) recreated() string {
	return fmt.Sprintf("topic %s was deleted and created again (its id was %s, now %s)", d.Topic, d.OldID, d.NewID)
}

// partition tells what became of the partition.
func (d Discontinuity) partition() string {
	switch {
	case d.Gone:
		return fmt.Sprintf("partition %s, read up to offset %d, is gone (its topic, or the partition, was deleted)", d.TopicPartition, d.Read)
	case d.OldID != d.NewID:
		return fmt.Sprintf("partition %s was read up to offset %d of the old topic, and the new one %s", d.TopicPartition, d.Read, d.holds())
	}
	return fmt.Sprintf("partition %s was read up to offset %d but now ends at offset %d and %s: its log was lost (the topic deleted and created again, or a broker restarted with an empty log)",
		d.TopicPartition, d.Read, d.End, d.holds())
}

// Describe says what became of the partitions, one sentence per topic
// created again (naming each of its partitions) and per other partition.
func Describe(ds []Discontinuity) []string {
	var out []string
	for i := 0; i < len(ds); i++ {
		d := ds[i]
		if d.OldID == d.NewID || d.Gone {
			out = append(out, d.partition())
			continue
		}
		parts := []string{d.partition()}
		for i+1 < len(ds) && ds[i+1].Topic == d.Topic && ds[i+1].OldID == d.OldID && ds[i+1].NewID == d.NewID && !ds[i+1].Gone {
			i++
			parts = append(parts, ds[i].partition())
		}
		out = append(out, d.recreated()+": "+strings.Join(parts, ", "))
	}
	return out
}

func (d Discontinuity) holds() string {
	if d.End <= d.Start {
		return fmt.Sprintf("holds no message (its next offset is %d)", d.End)
	}
	return fmt.Sprintf("holds offsets %d to %d", d.Start, d.End-1)
}

// Log is a partition's log as listed: its first offset and the next one to
// be written.
type Log struct{ Start, End int64 }

// FindDiscontinuities holds the offsets a query read up to, of topics
// with the recorded ids (none for a record without them), against the
// partitions' logs and the topics' ids now, in partition order. A
// partition set back to Earliest goes on from whatever log it has.
func FindDiscontinuities(read Offsets, recorded TopicIDs, logs map[TopicPartition]Log, now TopicIDs) ([]Discontinuity, error) {
	tps, err := read.Partitions()
	if err != nil {
		return nil, err
	}
	var out []Discontinuity
	for _, tp := range tps {
		n, _ := read.Get(tp)
		if n == Earliest {
			continue
		}
		l, ok := logs[tp]
		old, cur := recorded[tp.Topic], now[tp.Topic]
		switch {
		case !ok:
			out = append(out, Discontinuity{TopicPartition: tp, Read: n, Gone: true})
		case old != "" && cur != "" && old != cur:
			out = append(out, Discontinuity{TopicPartition: tp, Read: n, Start: l.Start, End: l.End, OldID: old, NewID: cur})
		case n > l.End:
			out = append(out, Discontinuity{TopicPartition: tp, Read: n, Start: l.Start, End: l.End})
		}
	}
	return out, nil
}
