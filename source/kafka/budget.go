package kafka

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/source"
)

// A message costs a batch its key, value and headers, and about this much
// more while it is read and turned into rows (the fetched record, its row
// in Arrow, the offsets kept): a batch of 1M messages of 200 bytes peaked
// at 0.65 GB.
const messageOverhead = 512

// firstMessageBytes is the size a batch plans with before any message was
// read: large, so that the first batch of a backlog stays small.
const firstMessageBytes = 1024

// sizes is the running account of the messages read: their bytes and
// count, by which a batch's byte budget becomes a number of offsets.
type sizes struct {
	bytes, messages atomic.Int64
}

// note adds the messages fetched.
func (z *sizes) note(recs []*kgo.Record) {
	var n int64
	for _, r := range recs {
		n += int64(len(r.Key) + len(r.Value))
		for _, h := range r.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	z.bytes.Add(n)
	z.messages.Add(int64(len(recs)))
}

// average is the mean message size so far, or firstMessageBytes.
func (z *sizes) average() int64 {
	m := z.messages.Load()
	if m == 0 {
		return firstMessageBytes
	}
	return max(z.bytes.Load()/m, 1)
}

// maxMessages is the number of offsets a batch takes under limit: the
// fewer of maxOffsetsPerTrigger (MaxRows) and the messages the byte budget
// (MaxBytes, soft: at least one message) holds at their average size and
// overhead; 0 for no limit.
func (z *sizes) maxMessages(limit source.ReadLimit) int64 {
	n := limit.MaxRows
	if limit.MaxBytes > 0 {
		b := max(limit.MaxBytes/(z.average()+messageOverhead), 1)
		if n == 0 || b < n {
			n = b
		}
	}
	return n
}
