package cluster

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Offsets are per topic and partition the next offset to read, in Spark's
// shape: {"events":{"0":123,"1":45}}. encoding/json sorts map keys, so
// equal offsets encode to equal bytes.
type Offsets map[string]map[string]int64

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Get is the offset of tp and whether it is there.
func (o Offsets) Get(tp TopicPartition) (int64, bool) {
	n, ok := o[tp.Topic][strconv.Itoa(int(tp.Partition))]
	return n, ok
}

// Set records the offset of tp.
func (o Offsets) Set(tp TopicPartition, n int64) {
	if o[tp.Topic] == nil {
		o[tp.Topic] = map[string]int64{}
	}
	o[tp.Topic][strconv.Itoa(int(tp.Partition))] = n
}

// Partitions lists the partitions of o in topic and partition order.
func (o Offsets) Partitions() ([]TopicPartition, error) {
	var tps []TopicPartition
	for _, t := range slices.Sorted(maps.Keys(o)) {
		for p := range o[t] {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("topic %s: partition %q is not a partition number", t, p)
			}
			tps = append(tps, TopicPartition{t, int32(n)})
		}
	}
	slices.SortFunc(tps, CompareTP)
	return tps, nil
}

func CompareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// Clone copies o.
func (o Offsets) Clone() Offsets {
	c := Offsets{}
	for t, ps := range o {
		c[t] = maps.Clone(ps)
	}
	return c
}

// Earliest in offsets is a partition to be read again from its first
// offset (Spark's -2 in startingOffsets): it was set back there after a
// discontinuity (failOnDataLoss false), since its old offsets mean nothing
// in its new log.
const Earliest = -2

// Range is what one batch reads of a partition: the offsets [From, Until).
type Range struct {
	TopicPartition
	From, Until int64
	// Resets is, in a cluster's event, how many times the table's record
	// had set the partition back to Earliest when the range was planned
	// (State.Resets): a range of an older log is never committed.
	Resets int64 `json:",omitempty"`
}

// Size is the number of offsets in the range.
func (r Range) Size() int64 { return r.Until - r.From }

// Limit cuts the ranges to at most limit offsets in all, split across the
// partitions in proportion to their backlog as Spark's
// KafkaMicroBatchStream.rateLimit does: a partition's share below one is
// rounded up, so that every partition with a backlog moves; above one it is
// rounded down. Zero is no limit.
func Limit(ranges []Range, limit int64) []Range {
	var total int64
	for _, r := range ranges {
		total += max(r.Size(), 0)
	}
	if limit <= 0 || total <= limit {
		return ranges
	}
	out := make([]Range, len(ranges))
	for i, r := range ranges {
		out[i] = r
		if r.Size() <= 0 {
			continue
		}
		share := float64(limit) * (float64(r.Size()) / float64(total))
		n := int64(math.Floor(share))
		if share < 1 {
			n = int64(math.Ceil(share))
		}
		out[i].Until = min(r.Until, r.From+n)
	}
	return out
}
