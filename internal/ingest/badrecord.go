package ingest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BadRecord is one input record a source could not read as a row, set
// aside by on-bad-record: dead-letter instead of failing the batch. A
// file's record names File and Line; a message names Topic, Partition and
// Offset.
type BadRecord struct {
	File      string
	Line      int64
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	// Value is the record as it was read: the message's value, the line.
	Value []byte
	// Timestamp is the message's time; zero for a file's record.
	Timestamp time.Time
	Err       string
}

// BadRecorder is implemented by parts that set bad records aside while
// they are read: once the part's reader is done, BadRecords lists them,
// each once however often the part was opened.
type BadRecorder interface {
	BadRecords() []BadRecord
}

// BadRecords keeps a part's bad records by position, so that a part read
// twice (its schema, then its rows) lists each once. Its zero value is
// ready; it is not safe for concurrent use.
type BadRecords struct {
	seen map[int64]bool
	list []BadRecord
}

// Add records r, found at position at (a line or an offset), unless a
// record at that position was added already.
func (b *BadRecords) Add(at int64, r BadRecord) {
	if b.seen[at] {
		return
	}
	if b.seen == nil {
		b.seen = map[int64]bool{}
	}
	b.seen[at] = true
	b.list = append(b.list, r)
}

// Has reports whether a record at position at was set aside.
func (b *BadRecords) Has(at int64) bool { return b.seen[at] }

// List is the records added, in the order they were found.
func (b *BadRecords) List() []BadRecord { return b.list }

// WithoutRows is rec without its rows dead (sorted): the rows of records
// set aside, which a reader completed with nulls to keep its columns
// aligned. It takes rec over.
func WithoutRows(rec arrow.RecordBatch, dead []int) (arrow.RecordBatch, error) {
	if len(dead) == 0 {
		return rec, nil
	}
	defer rec.Release()
	keep := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer keep.Release()
	keep.Reserve(int(rec.NumRows()))
	for row := 0; row < int(rec.NumRows()); row++ {
		_, out := slices.BinarySearch(dead, row)
		keep.UnsafeAppend(!out)
	}
	mask := keep.NewBooleanArray()
	defer mask.Release()
	kept, err := compute.FilterRecordBatch(context.Background(), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("leave the records set aside out: %w", err)
	}
	return kept, nil
}
