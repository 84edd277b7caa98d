package write

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/ingest"
)

// BadRecordSchema is the dead-letter table's columns under on-bad-record:
// dead-letter (docs/writes.md, "Bad records"): where the record came from,
// what it held as read, and why it is no row.
var BadRecordSchema = arrow.NewSchema([]arrow.Field{
	{Name: DeadLetterErrorColumn, Type: arrow.BinaryTypes.String},
	{Name: DeadLetterFileColumn, Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: DeadLetterRowColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "_floe_topic", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "_floe_partition", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "_floe_offset", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "_floe_key", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "_floe_value", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "_floe_timestamp", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "_floe_batch", Type: arrow.PrimitiveTypes.Int64},
	{Name: "_floe_set_aside_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// BadRecordRows are the dead-letter rows of bad, set aside by batch at
// now.
func BadRecordRows(bad []ingest.BadRecord, batchID int64, now time.Time) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, BadRecordSchema)
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
