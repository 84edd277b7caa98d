package engine

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/source"
)

// The dead-letter table's columns (docs/writes.md, "Bad records"): where
// the record came from, what it held as read, and why it is no row. The
// error, file and line columns are the ones a template's unroutable rows
// carry too.
var deadLetterSchema = arrow.NewSchema([]arrow.Field{
	{Name: write.DeadLetterErrorColumn, Type: arrow.BinaryTypes.String},
	{Name: write.DeadLetterFileColumn, Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: write.DeadLetterRowColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "_floe_topic", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "_floe_partition", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "_floe_offset", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "_floe_key", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "_floe_value", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "_floe_timestamp", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "_floe_batch", Type: arrow.PrimitiveTypes.Int64},
	{Name: "_floe_set_aside_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// badRecords gathers the records the batch's parts set aside.
func badRecords(parts []ingest.Part) []ingest.BadRecord {
	var out []ingest.BadRecord
	for _, p := range parts {
		if br, ok := p.(ingest.BadRecorder); ok {
			out = append(out, br.BadRecords()...)
		}
	}
	return out
}

// writeDeadLetters writes the records the batch's parts set aside into
// the dead-letter table, adding its files to w: the batch commits them
// with its rows, the dead-letter table first (commit.Tables.Commit), so
// that a table holding the batch means its dead letters are held too. A
// source that sends dead letters itself (a Kafka dead-letter topic) gets
// them instead, before the table commit.
func (e *Engine) writeDeadLetters(ctx context.Context, entry checkpoint.OffsetEntry, parts []ingest.Part, w *Written) error {
	if e.Config.OnBadRecord != "dead-letter" {
		return nil
	}
	bad := badRecords(parts)
	if len(bad) == 0 {
		return nil
	}
	batchID := entry.BatchID
	if dw, ok := e.Source.(source.DeadLetterWriter); ok && dw.SendsDeadLetters() {
		if err := dw.SendDeadLetters(ctx, e.Checkpoint.Metadata.ID, batchID, entry.TimestampMs, bad); err != nil {
			return err
		}
		w.deadLetters = int64(len(bad))
		return nil
	}
	rec := deadLetterRecord(bad, batchID, time.Now())
	defer rec.Release()
	name := e.Config.Sink.DeadLetterTable
	wr := &write.Writer{Tables: e.Tables, Name: name, FilePrefix: fmt.Sprintf("%s-%05d-dead", e.Checkpoint.Metadata.ID[:8], batchID)}
	res, err := wr.Write(ctx, []ingest.Part{recordPart{name: "dead letters of batch " + fmt.Sprint(batchID), rec: rec}})
	if err != nil {
		return fmt.Errorf("dead-letter table %s: %w", name, err)
	}
	w.Files = append(w.Files, res.Files...)
	if w.Tables == nil {
		w.Tables = map[string]*table.Table{}
	}
	maps.Copy(w.Tables, res.Tables)
	w.deadLetters = int64(len(bad))
	return nil
}

// deadLetterRecord builds the dead-letter rows of bad.
func deadLetterRecord(bad []ingest.BadRecord, batchID int64, now time.Time) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, deadLetterSchema)
	defer b.Release()
	str := func(i int, v string, ok bool) {
		if ok {
			b.Field(i).(*array.StringBuilder).Append(v)
		} else {
			b.Field(i).AppendNull()
		}
	}
	i64 := func(i int, v int64, ok bool) {
		if ok {
			b.Field(i).(*array.Int64Builder).Append(v)
		} else {
			b.Field(i).AppendNull()
		}
	}
	bin := func(i int, v []byte) {
		if v == nil {
			b.Field(i).AppendNull()
		} else {
			b.Field(i).(*array.BinaryBuilder).Append(v)
		}
	}
	for _, r := range bad {
		msg := r.Topic != ""
		str(0, r.Err, true)
		str(1, r.File, !msg)
		i64(2, r.Line, !msg)
		str(3, r.Topic, msg)
		if msg {
			b.Field(4).(*array.Int32Builder).Append(r.Partition)
		} else {
			b.Field(4).AppendNull()
		}
		i64(5, r.Offset, msg)
		bin(6, r.Key)
		bin(7, r.Value)
		if r.Timestamp.IsZero() {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp.UnixMicro()))
		}
		b.Field(9).(*array.Int64Builder).Append(batchID)
		b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(now.UnixMicro()))
	}
	return b.NewRecordBatch()
}

// recordPart is rows already in memory, as a part the writer reads.
type recordPart struct {
	name string
	rec  arrow.RecordBatch
}

func (p recordPart) Name() string     { return p.name }
func (p recordPart) SizeBytes() int64 { return -1 }
func (p recordPart) Open(context.Context) (array.RecordReader, error) {
	return array.NewRecordReader(p.rec.Schema(), []arrow.RecordBatch{p.rec})
}
