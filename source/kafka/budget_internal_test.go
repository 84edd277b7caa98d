package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/source"
)

// A batch's byte budget becomes offsets at the messages' average size and
// overhead, planned large before any message was read; the fewer of that
// and maxOffsetsPerTrigger wins, and a budget below one message still
// takes one.
func TestBatchBudget(t *testing.T) {
	var z sizes
	mib := int64(1 << 20)
	if got, want := z.maxMessages(source.ReadLimit{MaxBytes: 256 * mib}), 256*mib/(firstMessageBytes+messageOverhead); got != want {
		t.Fatalf("before any message: %d messages, want %d", got, want)
	}
	recs := make([]*kgo.Record, 1000)
	for i := range recs {
		recs[i] = &kgo.Record{Key: make([]byte, 8), Value: make([]byte, 180), Headers: []kgo.RecordHeader{{Key: "k", Value: make([]byte, 11)}}}
	}
	z.note(recs)
	if got, want := z.maxMessages(source.ReadLimit{MaxBytes: 256 * mib}), 256*mib/(200+messageOverhead); got != want {
		t.Fatalf("after 200-byte messages: %d messages, want %d", got, want)
	}
	if got := z.maxMessages(source.ReadLimit{MaxBytes: 256 * mib, MaxRows: 500}); got != 500 {
		t.Fatalf("with maxOffsetsPerTrigger 500: %d messages", got)
	}
	if got := z.maxMessages(source.ReadLimit{MaxBytes: 10}); got != 1 {
		t.Fatalf("a budget below one message: %d messages, want 1", got)
	}
	if got := z.maxMessages(source.ReadLimit{}); got != 0 {
		t.Fatalf("no limits: %d messages, want 0 (all)", got)
	}
}
