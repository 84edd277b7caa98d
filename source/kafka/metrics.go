package kafka

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/floe-io/floe/source"
)

// Metrics reports how far a batch ending at end is behind the partitions'
// ends as the last plan listed them: Spark's avgOffsetsBehindLatest,
// maxOffsetsBehindLatest and minOffsetsBehindLatest, and the lag of every
// partition (offsetsBehindLatest, in the offsets' JSON shape), with the
// latest offsets themselves; and commitLagMs, the time from the newest
// message the batch read (its Kafka timestamp) to now, after the commit;
// and numMessages and numPartitions, what the batch read in Kafka's terms.
func (s *Source) Metrics(end source.Offset) (source.Offset, map[string]string) {
	s.mu.Lock()
	latest := s.latest
	s.mu.Unlock()
	if len(latest) == 0 {
		return nil, nil
	}
	at, err := source.DecodeOffset[Offsets](end, "kafka source")
	if err != nil {
		return nil, nil
	}
	ends, behind := Offsets{}, Offsets{}
	var sum, lo, hi int64
	first := true
	for tp, l := range latest {
		ends.Set(tp, l.end)
		n := l.end - l.start // a partition the query has not read yet
		if off, ok := at.Get(tp); ok && off != earliest {
			n = l.end - off
		}
		n = max(n, 0)
		behind.Set(tp, n)
		sum += n
		if first || n < lo {
			lo = n
		}
		if first || n > hi {
			hi = n
		}
		first = false
	}
	lag, err := json.Marshal(behind)
	if err != nil {
		return nil, nil
	}
	out := map[string]string{
		"avgOffsetsBehindLatest": strconv.FormatFloat(float64(sum)/float64(len(latest)), 'f', 1, 64),
		"maxOffsetsBehindLatest": strconv.FormatInt(hi, 10),
		"minOffsetsBehindLatest": strconv.FormatInt(lo, 10),
		"offsetsBehindLatest":    string(lag),
	}
	if msgs, parts := s.fetched.take(); msgs > 0 {
		out["numMessages"] = strconv.FormatInt(msgs, 10)
		out["numPartitions"] = strconv.Itoa(parts)
	}
	if ts := s.newestTs.Swap(0); ts > 0 {
		out["commitLagMs"] = strconv.FormatInt(max(time.Now().UnixMilli()-ts, 0), 10)
	}
	return source.EncodeOffset(ends), out
}

// sawTimestamp keeps the newest message timestamp a batch read, for the
// commit lag: how long the newest message of a batch waited to be in the
// table.
func (s *Source) sawTimestamp(ms int64) {
	for {
		old := s.newestTs.Load()
		if ms <= old || s.newestTs.CompareAndSwap(old, ms) {
			return
		}
	}
}

// fetchCount counts the messages a batch fetched and the partitions they
// came from, for its progress record.
type fetchCount struct {
	mu       sync.Mutex
	messages int64
	parts    map[TopicPartition]bool
}

func (c *fetchCount) add(tp TopicPartition, n int) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts == nil {
		c.parts = map[TopicPartition]bool{}
	}
	c.messages += int64(n)
	c.parts[tp] = true
}

// take returns the counts and starts them again for the next batch.
func (c *fetchCount) take() (messages int64, partitions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	messages, partitions = c.messages, len(c.parts)
	c.messages, c.parts = 0, nil
	return messages, partitions
}
