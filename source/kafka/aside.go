package kafka

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

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

// syntaxError describes a value that is not JSON.
func syntaxError(v []byte) error {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return fmt.Errorf("the value is not valid JSON (%v)", err)
	}
	return fmt.Errorf("the value is not a JSON object")
}
