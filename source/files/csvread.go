package files

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/internal/textnum"
	"github.com/floe-io/floe/internal/texttime"
)

// csvValues reads CSV records straight into typed columns, as arrow-go's
// CSV reader does with an empty value read as null, for the types nearly
// every CSV file has: arrow-go's reader appends each value through a
// generic builder one call at a time, which was most of a CSV ingest's
// CPU. Files with other types read through arrow-go's reader.
type csvValues struct {
	refs   atomic.Int64
	r      csvRecords
	schema *arrow.Schema // csvReadSchema's: time and null columns as strings
	cols   []csvColumn
	header bool
	cur    arrow.RecordBatch
	err    error
	done   bool
	// size is the bytes of the file when known (an uncompressed file),
	// else 0: each chunk's columns are then sized from its first records,
	// where growing them by doubling copied them over and over.
	size int64
}

// csvColumn is one column's values of the chunk being read.
type csvColumn struct {
	typ   arrow.DataType
	id    arrow.Type
	valid []bool
	nulls int
	ints  []int64   // integers, timestamps, dates
	flts  []float64 // floats
	bools []bool
	data  []byte // strings
	ends  []int32
	// sized is set when each chunk's values are sized by reserve, which
	// array then leaves to it.
	sized bool
}

// csvValuesSchema is the schema csvValues reads a file of the given
// columns with, time and null columns as strings (converted after, as for
// arrow-go's reader), or nil when it cannot read one of them.
func csvValuesSchema(file *arrow.Schema) *arrow.Schema {
	fields := file.Fields()
	for i, f := range fields {
		switch f.Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
			arrow.BOOL, arrow.STRING, arrow.DATE32, arrow.TIMESTAMP:
		case arrow.TIME32, arrow.TIME64, arrow.NULL:
			fields[i].Type = arrow.BinaryTypes.String
		default:
			return nil
		}
	}
	return arrow.NewSchema(fields, nil)
}

// newCSVValues reads r, of size bytes (0 when unknown), as schema's
// columns.
func newCSVValues(r io.Reader, size int64, schema *arrow.Schema, delim rune, header bool) *csvValues {
	v := &csvValues{r: newCSVRecords(r, delim), schema: schema, header: header, cols: make([]csvColumn, schema.NumFields()), size: size}
	for i, f := range schema.Fields() {
		v.cols[i].typ, v.cols[i].id, v.cols[i].sized = f.Type, f.Type.ID(), size > 0
	}
	v.refs.Add(1)
	return v
}

func (v *csvValues) Schema() *arrow.Schema          { return v.schema }
func (v *csvValues) RecordBatch() arrow.RecordBatch { return v.cur }
func (v *csvValues) Record() arrow.RecordBatch      { return v.cur }
func (v *csvValues) Err() error                     { return v.err }
func (v *csvValues) Retain()                        { v.refs.Add(1) }

func (v *csvValues) Release() {
	if v.refs.Add(-1) == 0 && v.cur != nil {
		v.cur.Release()
		v.cur = nil
	}
}

func (v *csvValues) Next() bool {
	if v.cur != nil {
		v.cur.Release()
		v.cur = nil
	}
	if v.done || v.err != nil {
		return false
	}
	if v.header {
		v.header = false
		rec, err := v.r.Read()
		if err != nil {
			v.err, v.done = fmt.Errorf("arrow/csv: could not read header from file: %w", err), true
			return false
		}
		if len(rec) != len(v.cols) {
			v.err, v.done = arrowcsv.ErrMismatchFields, true
			return false
		}
	}
	n := 0
	start := v.r.InputOffset()
	for n < jsonrows.BatchRows {
		if n == jsonrows.SizingRows && v.size > 0 {
			off := v.r.InputOffset()
			rows := min(jsonrows.BatchRows, jsonrows.ExpectedRows(n, off-start, v.size-start))
			for i := range v.cols {
				v.cols[i].reserve(n, rows)
			}
		}
		rec, err := v.r.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				v.err = err
			}
			v.done = true
			break
		}
		if len(rec) != len(v.cols) {
			v.err, v.done = arrowcsv.ErrMismatchFields, true
			break
		}
		for i, s := range rec {
			if err := v.cols[i].append(s); err != nil && v.err == nil {
				// As arrow-go's reader: the chunk is read to its end, the
				// first bad value its error.
				v.err = &jsonrows.LineError{Line: v.r.StartLine(), Err: &jsonrows.ValueError{
					Column: v.schema.Field(i).Name, Value: strconv.Quote(s), Type: v.cols[i].typ, Err: err}}
			}
		}
		n++
	}
	if v.err != nil {
		v.done = true
	}
	if n == 0 {
		return false
	}
	cols := make([]arrow.Array, len(v.cols))
	for i := range v.cols {
		cols[i] = v.cols[i].array(n)
	}
	v.cur = array.NewRecordBatch(v.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return true
}

// append reads s, a view of the reader's buffer, as the column's next
// value; its error must not keep s (strconv's and time's copy it).
func (c *csvColumn) append(s string) error {
	if s == "" {
		c.valid = append(c.valid, false)
		c.nulls++
		c.pushNull()
		return nil
	}
	var err error
	switch c.id {
	case arrow.INT64:
		var i int64
		i, err = strconv.ParseInt(s, 10, 64)
		c.ints = append(c.ints, i)
	case arrow.FLOAT64:
		var f float64
		f, err = textnum.ParseFloat(s)
		c.flts = append(c.flts, f)
	case arrow.STRING:
		c.data = append(c.data, s...)
		c.ends = append(c.ends, int32(len(c.data)))
	case arrow.TIMESTAMP:
		var ts arrow.Timestamp
		ts, err = csvTimestamp(s, c.typ.(*arrow.TimestampType))
		c.ints = append(c.ints, int64(ts))
	case arrow.INT8, arrow.INT16, arrow.INT32:
		var i int64
		i, err = strconv.ParseInt(s, 10, c.typ.(arrow.FixedWidthDataType).BitWidth())
		c.ints = append(c.ints, i)
	case arrow.FLOAT32:
		var f float64
		f, err = strconv.ParseFloat(s, 32)
		c.flts = append(c.flts, f)
	case arrow.BOOL:
		var b bool
		if b, err = strconv.ParseBool(s); err != nil {
			err = fmt.Errorf("%w: unrecognized boolean: %s", err, s)
		}
		c.bools = append(c.bools, b)
	case arrow.DATE32:
		var d arrow.Date32
		d, err = texttime.Date(s)
		c.ints = append(c.ints, int64(d))
	}
	c.valid = append(c.valid, err == nil)
	if err != nil {
		c.nulls++
	}
	return err
}

// pushNull appends a null's placeholder value.
func (c *csvColumn) pushNull() {
	switch c.typ.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		c.flts = append(c.flts, 0)
	case arrow.BOOL:
		c.bools = append(c.bools, false)
	case arrow.STRING:
		c.ends = append(c.ends, int32(len(c.data)))
	default:
		c.ints = append(c.ints, 0)
	}
}

// reserve makes room for rows values, n of them read: the strings' bytes
// at the length of those so far.
func (c *csvColumn) reserve(n, rows int) {
	c.valid = slices.Grow(c.valid, rows-len(c.valid))
	switch c.id {
	case arrow.FLOAT32, arrow.FLOAT64:
		c.flts = slices.Grow(c.flts, rows-len(c.flts))
	case arrow.BOOL:
		c.bools = slices.Grow(c.bools, rows-len(c.bools))
	case arrow.STRING:
		c.ends = slices.Grow(c.ends, rows-len(c.ends))
		c.data = slices.Grow(c.data, len(c.data)*(rows-n)/max(1, n)*17/16)
	default:
		c.ints = slices.Grow(c.ints, rows-len(c.ints))
	}
}

// room is the values the next chunk starts with room for: as many as this
// one's, likely as long, unless reserve sizes it.
func (c *csvColumn) room(n int) int {
	if c.sized {
		return 0
	}
	return n
}

// array builds the column's n values and starts the next chunk.
func (c *csvColumn) array(n int) arrow.Array {
	defer func() {
		c.valid, c.bools, c.ends, c.nulls = c.valid[:0], c.bools[:0], c.ends[:0], 0
	}()
	switch c.typ.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.FLOAT64, arrow.STRING:
		// The values' own memory, handed to the array; the next chunk,
		// likely as long, gets room for its values at once.
		var bitmap *memory.Buffer
		if c.nulls > 0 {
			bits := make([]byte, bitutil.BytesForBits(int64(n)))
			for i, ok := range c.valid {
				if ok {
					bitutil.SetBit(bits, i)
				}
			}
			bitmap = memory.NewBufferBytes(bits)
		}
		var bufs []*memory.Buffer
		switch c.typ.ID() {
		case arrow.FLOAT64:
			bufs = []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(c.flts))}
			c.flts = make([]float64, 0, c.room(cap(c.flts)))
		case arrow.STRING:
			offs := make([]int32, n+1)
			copy(offs[1:], c.ends)
			bufs = []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(c.data)}
			c.data = make([]byte, 0, c.room(cap(c.data)+cap(c.data)/8))
		default:
			bufs = []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.ints))}
			c.ints = make([]int64, 0, c.room(cap(c.ints)))
		}
		data := array.NewData(c.typ, n, bufs, nil, c.nulls, 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	// The narrower types, rarer, through arrow-go's builders.
	b := array.NewBuilder(memory.DefaultAllocator, c.typ)
	defer b.Release()
	switch bld := b.(type) {
	case *array.Int8Builder:
		bld.AppendValues(narrow[int8](c.ints), c.valid)
	case *array.Int16Builder:
		bld.AppendValues(narrow[int16](c.ints), c.valid)
	case *array.Int32Builder:
		bld.AppendValues(narrow[int32](c.ints), c.valid)
	case *array.Date32Builder:
		bld.AppendValues(narrow[arrow.Date32](c.ints), c.valid)
	case *array.Float32Builder:
		vals := make([]float32, len(c.flts))
		for i, x := range c.flts {
			vals[i] = float32(x)
		}
		bld.AppendValues(vals, c.valid)
	case *array.BooleanBuilder:
		bld.AppendValues(c.bools, c.valid)
	}
	c.ints, c.flts = c.ints[:0], c.flts[:0]
	return b.NewArray()
}

func narrow[T int8 | int16 | int32 | arrow.Date32](xs []int64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// csvTimestamp reads a CSV value as arrow-go's CSV reader does (its
// TimestampBuilder): an integer as the value itself, else a timestamp
// that names a zone exactly when the type has one.
func csvTimestamp(s string, t *arrow.TimestampType) (arrow.Timestamp, error) {
	if texttime.Integer(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return arrow.Timestamp(i), nil
		}
	}
	ts, zoned, err := texttime.Timestamp(s, t.Unit)
	switch {
	case err != nil:
		return 0, err
	case zoned != (t.TimeZone != "") && t.TimeZone != "":
		return 0, fmt.Errorf("%w: timestamp value %q for type %s must include a zone offset", arrow.ErrInvalid, s, t)
	case zoned != (t.TimeZone != ""):
		return 0, fmt.Errorf("%w: timestamp value %q for type %s must not include a zone offset", arrow.ErrInvalid, s, t)
	}
	return ts, nil
}
