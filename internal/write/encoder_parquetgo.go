package write

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"

	"github.com/floe-io/floe/internal/pqgo"
)

// The parquet-go encoder handles flat schemas of the types below; anything
// else (nested types, decimals, UUIDs) goes through arrow-go. Measured on
// events5 it encodes ~3x more rows per CPU-second than arrow-go with
// iceberg-go's settings at a smaller file size (docs/benchmarks.md).

// pqgoRowGroupRows bounds a row group by rows as well as bytes: parquet-go
// buffers a whole row group's pages before writing them out.
const pqgoRowGroupRows = 1 << 20

// pqgoSupported reports whether every column of schema can take the
// parquet-go path.
func pqgoSupported(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		switch t := f.Type.(type) {
		case *arrow.BooleanType, *arrow.Int32Type, *arrow.Int64Type, *arrow.Float32Type, *arrow.Float64Type,
			*arrow.StringType, *arrow.BinaryType, *arrow.Date32Type:
		case *arrow.TimestampType:
			if t.Unit != arrow.Microsecond {
				return false
			}
		case *arrow.Time64Type:
			if t.Unit != arrow.Microsecond {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// pqgoCodec returns parquet-go's codec for a table's compression setting.
func pqgoCodec(name string, level int) (compress.Codec, error) {
	switch name {
	case "zstd":
		return pqgo.SharedZstd(level)
	case "snappy":
		return &snappy.Codec{}, nil
	case "gzip":
		return &gzip.Codec{Level: gzipLevel(level)}, nil
	case "lz4", "lz4_raw":
		return &lz4.Codec{}, nil
	case "brotli":
		return &brotli.Codec{}, nil
	case "uncompressed", "none":
		return &uncompressed.Codec{}, nil
	}
	return nil, fmt.Errorf("codec %q is not supported", name)
}

func gzipLevel(level int) int {
	if level <= 0 {
		return 6
	}
	return level
}

// pqgoEncoder writes one data file with parquet-go, column by column.
type pqgoEncoder struct {
	rowGroups
	out      *countingWriter
	w        *pq.GenericWriter[any]
	cols     []arrow.Field
	defLevel []int
	values   []pq.Value
	// bounded are the string and binary columns whose bounds the file
	// records; see maxBoundBytes.
	bounded []int
}

// maxBoundBytes is the longest string or binary value whose column keeps its
// bounds, as parquet-mr and arrow-go drop statistics over 4 KiB: parquet-go
// records a column chunk's min and max whole, and a huge value would make
// every reader of the file parse a huge footer. parquet-go decides per
// column for the whole file, so a column meeting a longer value loses its
// bounds for the file, and a file that started with them is rolled.
const maxBoundBytes = 4096

// firstRows is what a data file's first rows tell the parquet-go encoder
// of string or binary column i: whether its values repeat enough for a
// dictionary, and how long its longest value is.
type firstRows interface {
	repetitive(i int) bool
	longest(i int) int64
}

// firstRecord is a file's first rows as an Arrow record.
type firstRecord struct{ arrow.RecordBatch }

func (r firstRecord) repetitive(i int) bool { return repetitive(r.Column(i)) }
func (r firstRecord) longest(i int) int64   { return longestValue(r.Column(i)) }

// newPqgoEncoder builds the Parquet schema in the table's column order with
// the table's field ids. first are the file's first rows: they decide which
// string columns get a dictionary, and which keep their bounds.
func newPqgoEncoder(schema *arrow.Schema, out *countingWriter, opts fileOptions, first firstRows) (*pqgoEncoder, error) {
	fields := make(pqgo.Group, len(schema.Fields()))
	e := &pqgoEncoder{out: out, cols: schema.Fields()}
	wopts := []pq.WriterOption{
		pq.Compression(opts.pqgoCodec),
		pq.CreatedBy("floe", "", ""),
		pq.PageBufferSize(1 << 20),
		// Row groups are cut by rowGroups, at record boundaries; this is a backstop.
		pq.MaxRowsPerRowGroup(2 * pqgoRowGroupRows),
		pq.DataPageStatistics(false),
	}
	if len(opts.bloom) > 0 {
		filters := make([]pq.BloomFilterColumn, len(opts.bloom))
		for i, b := range opts.bloom {
			filters[i] = pq.SplitBlockFilter(uint(math.Ceil(bloomBitsPerValue(b.fpp))), b.name)
		}
		wopts = append(wopts, pq.BloomFilters(filters...))
	}
	for i, f := range schema.Fields() {
		node, err := pqgoLeaf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		if f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY {
			// Plain, not parquet-go's default DELTA_LENGTH_BYTE_ARRAY:
			// Iceberg's vectorized reader (Spark's default) refuses that
			// encoding up to Iceberg 1.10, though it costs more CPU
			// (docs/benchmarks.md).
			if first.repetitive(i) {
				node = pq.Encoded(node, &pq.RLEDictionary)
			} else {
				node = pq.Encoded(node, &pq.Plain)
			}
			if first.longest(i) > maxBoundBytes {
				wopts = append(wopts, pq.SkipPageBounds(f.Name))
			} else {
				e.bounded = append(e.bounded, i)
			}
		}
		def := 0
		if f.Nullable {
			def = 1
		}
		e.defLevel = append(e.defLevel, def)
		if z, ok := opts.pqgoCodec.(*pqgo.ZstdCodec); ok {
			// Strings' widths vary, dictionary or not; other types are plain.
			node = pq.Compressed(node, z.Column(pqgo.PlainWidth(node.Type().Kind())))
		}
		if node, err = pqgoColumn(f, node); err != nil {
			return nil, err
		}
		fields[i] = pqgo.Field(node, f.Name)
	}
	e.w = pq.NewGenericWriter[any](out, append([]pq.WriterOption{pq.NewSchema("table", fields)}, wopts...)...)
	// parquet-go buffers its output: its own count is the file's size, the
	// bytes that reached out lag by up to its buffer.
	e.rowGroups = newRowGroups(e.w.Size, opts, opts.groupRows(pqgoRowGroupRows), e.put, e.w.Flush)
	return e, nil
}

// pqgoColumn declares a column's leaf as the table does: optional or
// required, with its field id.
func pqgoColumn(f arrow.Field, node pq.Node) (pq.Node, error) {
	if f.Nullable {
		node = pq.Optional(node)
	} else {
		node = pq.Required(node)
	}
	id, ok := fieldID(f)
	if !ok {
		return nil, fmt.Errorf("column %s has no field id", f.Name)
	}
	return pq.FieldID(node, id), nil
}

func fieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	var id int
	_, err := fmt.Sscanf(v, "%d", &id)
	return id, err == nil
}

func pqgoLeaf(t arrow.DataType) (pq.Node, error) {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return pq.Leaf(pq.BooleanType), nil
	case *arrow.Int32Type:
		return pq.Int(32), nil
	case *arrow.Int64Type:
		return pq.Int(64), nil
	case *arrow.Float32Type:
		return pq.Leaf(pq.FloatType), nil
	case *arrow.Float64Type:
		return pq.Leaf(pq.DoubleType), nil
	case *arrow.StringType:
		return pq.String(), nil
	case *arrow.BinaryType:
		return pq.Leaf(pq.ByteArrayType), nil
	case *arrow.Date32Type:
		return pq.Date(), nil
	case *arrow.TimestampType:
		return pq.TimestampAdjusted(pq.Microsecond, t.TimeZone != ""), nil
	case *arrow.Time64Type:
		return pq.TimeAdjusted(pq.Microsecond, false), nil
	}
	return nil, fmt.Errorf("type %s is not on the parquet-go path", t)
}

// repetitive samples a string column: a dictionary pays when values repeat
// and is pure cost on all-distinct ones (ids, payloads).
func repetitive(col arrow.Array) bool {
	n := min(col.Len(), 4096)
	if n == 0 {
		return true
	}
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		if col.IsNull(i) {
			continue
		}
		switch c := col.(type) {
		case *array.String:
			seen[c.Value(i)] = struct{}{}
		case *array.Binary:
			seen[string(c.Value(i))] = struct{}{}
		}
	}
	return len(seen) <= n/2
}

// put appends rec to the open row group.
func (e *pqgoEncoder) put(rec arrow.RecordBatch) error {
	for _, c := range e.bounded {
		if longestValue(rec.Column(c)) > maxBoundBytes {
			return errNewFile
		}
	}
	n := int(rec.NumRows())
	if cap(e.values) < n {
		e.values = make([]pq.Value, n)
	}
	vals := e.values[:n]
	writers := e.w.ColumnWriters()
	for c, col := range rec.Columns() {
		if err := fillValues(vals, col, e.defLevel[c], c); err != nil {
			return fmt.Errorf("column %s: %w", e.cols[c].Name, err)
		}
		if _, err := writers[c].WriteRowValues(vals); err != nil {
			return fmt.Errorf("column %s: %w", e.cols[c].Name, err)
		}
	}
	return nil
}

// longestValue is the length of the longest value of a string or binary
// column.
func longestValue(a arrow.Array) int64 {
	switch c := a.(type) {
	case *array.String:
		n, _ := longest(c.ValueOffsets())
		return n
	case *array.Binary:
		n, _ := longest(c.ValueOffsets())
		return n
	}
	return 0
}

// span is the bytes of values a slice's offsets cover.
func span[T int32 | int64](offs []T) int64 {
	if len(offs) == 0 {
		return 0
	}
	return int64(offs[len(offs)-1] - offs[0])
}

// rawSize is the memory of a's values, as a slice sees them: a slice of a
// larger record counts its own rows, not its parent's buffers.
func rawSize(a arrow.Array) int64 {
	n := int64(a.Len())
	switch c := a.(type) {
	case *array.String:
		return span(c.ValueOffsets()) + 4*n + n/8
	case *array.Binary:
		return span(c.ValueOffsets()) + 4*n + n/8
	case *array.LargeString:
		return span(c.ValueOffsets()) + 8*n + n/8
	case *array.LargeBinary:
		return span(c.ValueOffsets()) + 8*n + n/8
	case *array.Struct:
		size := n / 8
		for i := range c.NumField() {
			size += rawSize(c.Field(i))
		}
		return size
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return n*int64(fw.BitWidth())/8 + n/8
	}
	// Lists, maps, dictionaries: their buffers, scaled to the slice.
	var total int64
	for _, b := range a.Data().Buffers() {
		if b != nil {
			total += int64(b.Len())
		}
	}
	for _, ch := range a.Data().Children() {
		for _, b := range ch.Buffers() {
			if b != nil {
				total += int64(b.Len())
			}
		}
	}
	if whole := int64(a.Data().Offset()) + n; whole > 0 {
		return total * n / whole
	}
	return total
}

// fillValues turns one Arrow column into parquet-go values, without copying
// variable-length data (the writer copies it into its pages). Each type has
// its own loop over Arrow's buffers: a closure call and Value.Level's copy
// per value were a quarter of ingest CPU (docs/benchmarks.md).
func fillValues(vals []pq.Value, col arrow.Array, maxDef, c int) error {
	rows := nullRows{maxDef: maxDef, c: c}
	if col.NullN() > 0 {
		rows.valid, rows.offset = col.NullBitmapBytes(), col.Data().Offset()
	}
	switch a := col.(type) {
	case *array.Boolean:
		fillWith(vals, rows, func(i int) pq.Value { return pq.BooleanValue(a.Value(i)) })
	case *array.Int32:
		fillInt32s(vals, rows, a.Int32Values())
	case *array.Date32:
		fillInt32s(vals, rows, a.Date32Values())
	case *array.Int64:
		fillInt64s(vals, rows, a.Int64Values())
	case *array.Timestamp:
		fillInt64s(vals, rows, a.TimestampValues())
	case *array.Time64:
		fillInt64s(vals, rows, a.Time64Values())
	case *array.Float32:
		raw := a.Float32Values()
		for i := range vals {
			if rows.null(vals, i) {
				continue
			}
			vals[i] = pq.FloatValue(raw[i])
			rows.level(&vals[i])
		}
	case *array.Float64:
		raw := a.Float64Values()
		for i := range vals {
			if rows.null(vals, i) {
				continue
			}
			vals[i] = pq.DoubleValue(raw[i])
			rows.level(&vals[i])
		}
	case *array.String:
		fillByteArrays(vals, rows, a.ValueOffsets(), stringData(a))
	case *array.Binary:
		fillByteArrays(vals, rows, a.ValueOffsets(), binaryData(a))
	default:
		return fmt.Errorf("arrow type %s is not on the parquet-go path", col.DataType())
	}
	return nil
}

// nullRows is what every fill loop needs of a column: its validity bitmap
// and the levels of its values.
type nullRows struct {
	valid  []byte // nil when the column has no nulls
	offset int
	maxDef int
	c      int
}

// null writes the null value of row i and reports whether there was one.
func (r nullRows) null(vals []pq.Value, i int) bool {
	if r.valid == nil || bitutil.BitIsSet(r.valid, r.offset+i) {
		return false
	}
	vals[i] = pq.NullValue()
	vals[i].SetColumnIndex(r.c)
	return true
}

// level sets a non-null value's levels in place: the single-field setters
// inline where Value.Level's copy does not.
func (r nullRows) level(v *pq.Value) {
	v.SetDefinitionLevel(r.maxDef)
	v.SetColumnIndex(r.c)
}

func fillWith(vals []pq.Value, rows nullRows, value func(i int) pq.Value) {
	for i := range vals {
		if rows.null(vals, i) {
			continue
		}
		vals[i] = value(i)
		rows.level(&vals[i])
	}
}

func fillInt32s[T ~int32](vals []pq.Value, rows nullRows, raw []T) {
	for i := range vals {
		if rows.null(vals, i) {
			continue
		}
		vals[i] = pq.Int32Value(int32(raw[i]))
		rows.level(&vals[i])
	}
}

func fillInt64s[T ~int64](vals []pq.Value, rows nullRows, raw []T) {
	for i := range vals {
		if rows.null(vals, i) {
			continue
		}
		vals[i] = pq.Int64Value(int64(raw[i]))
		rows.level(&vals[i])
	}
}

// fillByteArrays takes offsets as Arrow keeps them, relative to the start
// of data: a sliced column's first offset need not be 0.
func fillByteArrays(vals []pq.Value, rows nullRows, offs []int32, data []byte) {
	for i := range vals {
		if rows.null(vals, i) {
			continue
		}
		vals[i] = pq.ByteArrayValue(data[offs[i]:offs[i+1]:offs[i+1]])
		rows.level(&vals[i])
	}
}

// stringData and binaryData are a column's whole value buffer, which its
// offsets index.
func stringData(a *array.String) []byte { return valueBuffer(a.Data()) }
func binaryData(a *array.Binary) []byte { return valueBuffer(a.Data()) }

func valueBuffer(d arrow.ArrayData) []byte {
	if b := d.Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

func (e *pqgoEncoder) Close() (*metadata.FileMetaData, error) {
	// The open row group goes out before the tail is kept: parquet-go
	// writes a whole group at once, and keeping it would copy it.
	err := e.w.Flush()
	e.out.keepTail = true
	if err == nil {
		err = e.w.Close()
	}
	var meta *metadata.FileMetaData
	if err == nil {
		meta, err = e.out.footer()
	}
	// The sink is closed whatever happened: an unclosed object-store upload
	// is never finished, an unclosed file keeps its descriptor.
	return meta, errors.Join(err, e.out.Close())
}

var _ io.Writer = (*countingWriter)(nil)
