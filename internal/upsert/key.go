package upsert

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ingest"
)

// A key column's values are compared in a form that does not depend on
// how the column is stored: the batch's input may hold a long key as
// int32 and a timestamp in milliseconds, while the table's Parquet files
// hold int64 and microseconds. Integers, dates, times and timestamps
// compare as int64 (timestamps in microseconds, dates in days); strings,
// binaries and UUIDs as their bytes.

// intColumn reads a column of the integer family as int64.
type intColumn func(i int) int64

// asInts returns the reader of a's values as int64, or nil when a is not
// of the integer family.
func asInts(a arrow.Array) intColumn {
	switch a := a.(type) {
	case *array.Int64:
		return func(i int) int64 { return a.Value(i) }
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Date32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Date64:
		return func(i int) int64 { return int64(a.Value(i)) / 86_400_000 }
	case *array.Time32:
		mul := micros(a.DataType().(*arrow.Time32Type).Unit)
		return func(i int) int64 { return int64(a.Value(i)) * mul }
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		if unit == arrow.Nanosecond {
			return func(i int) int64 { return int64(a.Value(i)) / 1000 }
		}
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		switch unit {
		case arrow.Nanosecond:
			return func(i int) int64 { return int64(a.Value(i)) / 1000 }
		case arrow.Microsecond:
			return func(i int) int64 { return int64(a.Value(i)) }
		default:
			mul := micros(unit)
			return func(i int) int64 { return int64(a.Value(i)) * mul }
		}
	}
	return nil
}

// micros is how many microseconds one unit of u is; nanoseconds are
// handled by division where they occur.
func micros(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1_000_000
	case arrow.Millisecond:
		return 1000
	}
	return 1
}

// bytesColumn appends the bytes of value i to buf.
type bytesColumn func(buf []byte, i int) []byte

// asBytes returns the reader of a's values as bytes: the encoding of the
// integer family, or the bytes of a string, binary or fixed-size binary.
func asBytes(a arrow.Array) (bytesColumn, error) {
	if ints := asInts(a); ints != nil {
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint64(buf, uint64(ints(i))) }, nil
	}
	switch a := a.(type) {
	case *array.String:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.LargeString:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.StringView:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.Binary:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.LargeBinary:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.FixedSizeBinary:
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }, nil
	case *array.Boolean:
		return func(buf []byte, i int) []byte {
			if a.Value(i) {
				return append(buf, 1)
			}
			return append(buf, 0)
		}, nil
	case *array.Decimal128:
		return func(buf []byte, i int) []byte {
			v := a.Value(i)
			buf = binary.BigEndian.AppendUint64(buf, uint64(v.HighBits()))
			return binary.BigEndian.AppendUint64(buf, v.LowBits())
		}, nil
	case array.ExtensionArray:
		return asBytes(a.Storage())
	case *array.Dictionary:
		dict, err := asBytes(a.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(buf []byte, i int) []byte { return dict(buf, a.GetValueIndex(i)) }, nil
	}
	return nil, fmt.Errorf("a key column of type %s cannot be compared; use integer, date, timestamp, string, binary, uuid, boolean or decimal key columns", a.DataType())
}

// floatKeyError refuses key column name of floating-point type typ, on a
// new table (from its input) as on an existing one (from its schema).
func floatKeyError(name, typ string) error {
	return fmt.Errorf("%w: key column %s is %s: Iceberg forbids float and double identifier fields, since equal values need not compare equal (NaN, -0.0 and 0.0); key on an integer, string, date, timestamp, uuid or decimal column", ingest.ErrConfig, name, typ)
}

// checkKeyType refuses a key column the input holds as floating point.
func checkKeyType(name string, dt arrow.DataType) error {
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32:
		return floatKeyError(name, "float")
	case arrow.FLOAT64:
		return floatKeyError(name, "double")
	case arrow.EXTENSION:
		return checkKeyType(name, dt.(arrow.ExtensionType).StorageType())
	case arrow.DICTIONARY:
		return checkKeyType(name, dt.(*arrow.DictionaryType).ValueType)
	}
	return nil
}

// keyReader reads the key of each row of one record: its key columns'
// values, as one int64 when the key is a single integer-family column,
// else as bytes.
type keyReader struct {
	arrays []arrow.Array
	ints   intColumn // set for a single integer-family key
	bytes  []bytesColumn
}

func newKeyReader(arrays []arrow.Array, intKey bool) (*keyReader, error) {
	r := &keyReader{arrays: arrays}
	if intKey {
		if r.ints = asInts(arrays[0]); r.ints == nil {
			return nil, fmt.Errorf("key column is %s, not an integer", arrays[0].DataType())
		}
		return r, nil
	}
	for _, a := range arrays {
		b, err := asBytes(a)
		if err != nil {
			return nil, err
		}
		r.bytes = append(r.bytes, b)
	}
	return r, nil
}

// null returns the position in the key of a null value of row i, or -1.
func (r *keyReader) null(i int) int {
	for c, a := range r.arrays {
		if a.IsNull(i) {
			return c
		}
	}
	return -1
}

// int is row i's key of a single integer-family column.
func (r *keyReader) int(i int) int64 { return r.ints(i) }

// appendBytes appends row i's key to buf: each column's bytes, those of
// all but the last prefixed by their length so that keys of several
// columns cannot run into one another.
func (r *keyReader) appendBytes(buf []byte, i int) []byte {
	last := len(r.bytes) - 1
	for c, b := range r.bytes {
		if c == last {
			return b(buf, i)
		}
		start := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		buf = b(buf, i)
		binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-4))
	}
	return buf
}

// isIntKey reports whether a key of these table columns is read as one
// int64.
func isIntKey(fields []iceberg.NestedField) bool {
	if len(fields) != 1 {
		return false
	}
	switch fields[0].Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType,
		iceberg.TimestampType, iceberg.TimestampTzType:
		return true
	}
	return false
}
