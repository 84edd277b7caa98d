package kafka

import (
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ingest"
)

var _ ingest.BadRecorder = (*part)(nil)

// badRecord is what becomes of a message that cannot be read as a row:
// with on-bad-record: dead-letter it is set aside, for the dead-letter
// table, and nil lets the part go on; otherwise the error that stops the
// batch, naming the message.
func (p *part) badRecord(r *kgo.Record, err error) error {
	if !p.src.deadLetters {
		return p.bad(r.Offset, err)
	}
	p.asideMu.Lock()
	defer p.asideMu.Unlock()
	p.aside.Add(r.Offset, ingest.BadRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Err: err.Error()})
	return nil
}

// badAt is badRecord for the message at offset at.
func (p *part) badAt(at int64, err error) error {
	i, ok := slices.BinarySearchFunc(p.records, at, func(r *kgo.Record, at int64) int { return cmp.Compare(r.Offset, at) })
	if !ok {
		return p.bad(at, err)
	}
	return p.badRecord(p.records[i], err)
}

// setAside reports whether r was set aside already, by an earlier pass
// over the messages.
func (p *part) setAside(r *kgo.Record) bool { return p.setAsideAt(r.Offset) }

func (p *part) setAsideAt(at int64) bool {
	if !p.src.deadLetters {
		return false
	}
	p.asideMu.Lock()
	defer p.asideMu.Unlock()
	return p.aside.Has(at)
}

// BadRecords lists the messages set aside while the part was read.
func (p *part) BadRecords() []ingest.BadRecord {
	p.asideMu.Lock()
	defer p.asideMu.Unlock()
	return p.aside.List()
}

// completeRow completes row n of b, which a failed append left half
// written, with nulls, and reports whether the row exists: a message
// whose body did not decode appended nothing.
func completeRow(b *array.RecordBuilder, n int) bool {
	started := false
	for _, f := range b.Fields() {
		started = started || f.Len() > n
	}
	if !started {
		return false
	}
	for _, f := range b.Fields() {
		completeBuilder(f, n+1)
	}
	return true
}

// completeBuilder pads b to want entries with nulls, and a struct's
// fields to the struct's entries, so that the columns agree.
func completeBuilder(b array.Builder, want int) {
	for b.Len() < want {
		b.AppendNull()
	}
	if sb, ok := b.(*array.StructBuilder); ok {
		for i := 0; i < sb.NumField(); i++ {
			completeBuilder(sb.FieldBuilder(i), sb.Len())
		}
	}
}
