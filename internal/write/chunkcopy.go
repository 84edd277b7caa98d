package write

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pq "github.com/parquet-go/parquet-go"
	pqcompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/pqgo"
)

// A Parquet input whose columns the table stores as the file does (same
// physical and logical types, same nullability, no column added, dropped
// or converted), in row groups large enough to keep, is written by
// copying its column chunks byte for byte under a new footer that carries
// the table's field ids: its values are never decoded nor encoded. The
// data file's statistics are the input's column statistics, which is what
// decoding would compute, so inputs whose statistics are incomplete, not
// in the type's order or too long to keep take the encoders' path. So do
// inputs in encodings not every reader decodes (commonPages), and
// tables with bloom filters, keep/drop/only and routing, and, into a
// partitioned table, inputs whose row groups' statistics do not prove one
// partition each (chunkcopy_partition.go). The pages keep their codec and
// encodings: a snappy input stays snappy. CopyChunksKey=false forces
// re-encoding.

// CopyChunksKey turns the copy of Parquet inputs' column chunks off
// ("false"); it is on by default.
const CopyChunksKey = "floe.write.copy-parquet-chunks"

// copyChunksFor decides whether d may take Parquet inputs by copy.
func (d *dest) copyChunksFor() {
	if len(d.opts.bloom) > 0 || !pqgoSupported(d.schema) ||
		strings.EqualFold(d.tbl.Properties().Get(CopyChunksKey, "true"), "false") {
		return
	}
	if d.part != nil {
		for _, f := range d.part.fields {
			// A float's statistics say nothing of its NaNs, which have a
			// partition of their own.
			if len(f.path) != 1 || f.kind == srcFloat {
				return
			}
		}
	}
	d.copyable = true
}

// copyPlan is how one input schema's columns become the table's: table
// column i is the file's top-level column cols[i].
type copyPlan struct {
	in   *arrow.Schema
	cols []int
}

// copyTemplate is the footer the encoders would write for the table, with
// no row group: its schema (field ids included), column orders, version
// and writer. Copied files take it, so that they describe the table's
// columns exactly as encoded files do.
func copyTemplate(schema *arrow.Schema) (*format.FileMetaData, error) {
	fields := make(pqgo.Group, len(schema.Fields()))
	for i, f := range schema.Fields() {
		leaf, err := pqgoLeaf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		node, err := pqgoColumn(f, leaf)
		if err != nil {
			return nil, err
		}
		fields[i] = pqgo.Field(node, f.Name)
	}
	var buf bytes.Buffer
	w := pq.NewGenericWriter[any](&buf, pq.NewSchema("table", fields), pq.CreatedBy("floe", "", ""))
	if err := w.Close(); err != nil {
		return nil, err
	}
	md, err := parseFooter(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("footer of the table's schema: %w", err)
	}
	return md, nil
}

// parseFooter decodes the footer at the end of b: a Parquet file, or its
// footer with the length and magic after it.
func parseFooter(b []byte) (*format.FileMetaData, error) {
	n := len(b)
	if n < 8 || string(b[n-4:]) != "PAR1" {
		return nil, errors.New("no Parquet footer")
	}
	size := int(binary.LittleEndian.Uint32(b[n-8:]))
	if size+8 > n {
		return nil, errors.New("the footer is longer than the file")
	}
	md := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[n-8-size:n-8], md); err != nil {
		return nil, err
	}
	return md, nil
}

// readFooter decodes the footer of an open Parquet file.
func readFooter(f ingest.ParquetFile) (*format.FileMetaData, error) {
	size := f.Size()
	if size < 12 {
		return nil, errors.New("the file is too short for Parquet")
	}
	tail := make([]byte, 8)
	if _, err := f.ReadAt(tail, size-8); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n+12 > size {
		return nil, errors.New("the footer is longer than the file")
	}
	b := make([]byte, n+8)
	if _, err := f.ReadAt(b, size-8-n); err != nil {
		return nil, err
	}
	return parseFooter(b)
}

// planCopy decides whether files of schema in can be copied into d, and
// how their columns map onto the table's; nil when they cannot. The
// footer copied files take is made for the first plan.
func (d *dest) planCopy(in *arrow.Schema, opts conform.Options) (*copyPlan, error) {
	if !d.copyable && !d.values {
		return nil, nil
	}
	d.confMu.Lock()
	defer d.confMu.Unlock()
	for _, p := range d.plans {
		if p.in == in || p.in.Equal(in) {
			return p, nil
		}
	}
	p := planColumns(in, d.schema, opts)
	if p == nil {
		return nil, nil
	}
	if d.template == nil && d.copyable {
		t, err := copyTemplate(d.schema)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", d.name, err)
		}
		d.template = t
	}
	d.plans = append(d.plans, p)
	return p, nil
}

// planColumns maps in's columns onto the table's by name: every column of
// one is a column of the other, of the same type and nullability, in the
// table's order unless reordering is allowed (as the conformer would).
func planColumns(in, table *arrow.Schema, opts conform.Options) *copyPlan {
	if in.NumFields() != table.NumFields() {
		return nil
	}
	p := &copyPlan{in: in, cols: make([]int, table.NumFields())}
	for j, f := range table.Fields() {
		i := conform.FieldIndex(in.Fields(), f.Name)
		if i < 0 || in.Field(i).Name != f.Name || i != j && !opts.AllowReorder {
			return nil
		}
		g := in.Field(i)
		if g.Nullable != f.Nullable || !arrow.TypeEqual(g.Type, f.Type) {
			return nil
		}
		// A table's own data file names its columns by field id: a name
		// another column had before a rename is not this column.
		// Files without ids read as id -1.
		if id, ok := fieldID(g); ok && id >= 0 {
			if want, _ := fieldID(f); id != want {
				return nil
			}
		}
		p.cols[j] = i
	}
	return p
}

// physicalType is the Parquet type the encoders write an Arrow type as.
func physicalType(t arrow.DataType) format.Type {
	switch t.ID() {
	case arrow.BOOL:
		return format.Boolean
	case arrow.INT32, arrow.DATE32:
		return format.Int32
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return format.Int64
	case arrow.FLOAT32:
		return format.Float
	case arrow.FLOAT64:
		return format.Double
	}
	return format.ByteArray
}

// copySource is an input file's footer, checked for a copy by a plan,
// and the bytes of the chunks it copies.
type copySource struct {
	md         *format.FileMetaData
	groupBytes []int64 // the chunks' bytes of each row group
}

// checkSource returns the file's footer when its chunks can be copied by
// plan, nil when they cannot: a flat schema of the plan's columns,
// unencrypted chunks in codecs every reader has, and complete statistics
// in the type's order, which become the data file's.
func checkSource(f ingest.ParquetFile, plan *copyPlan, table *arrow.Schema, target, minRowGroup int64) (*copySource, error) {
	md, err := readFooter(f)
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet footer (%v); the file may be truncated or corrupt", err)
	}
	if md.EncryptionAlgorithm.Value != nil {
		return nil, nil
	}
	if len(md.Schema) != len(plan.cols)+1 || int(md.Schema[0].NumChildren.V) != len(plan.cols) {
		return nil, nil
	}
	// Without column orders, min_value and max_value have no defined
	// order: they cannot be the data file's bounds.
	if len(md.ColumnOrders) != len(plan.cols) {
		return nil, nil
	}
	for _, o := range md.ColumnOrders {
		if _, ok := o.Value.(*format.TypeDefinedOrder); !ok {
			return nil, nil
		}
	}
	arrowMD := f.Footer()
	if arrowMD == nil || arrowMD.NumRowGroups() != len(md.RowGroups) {
		return nil, errors.New("the Parquet footer changed while it was read")
	}
	for j, i := range plan.cols {
		el := md.Schema[1+i]
		if el.NumChildren.V > 0 || !el.Type.Valid || el.Type.V != physicalType(table.Field(j).Type) {
			return nil, nil
		}
	}
	if len(md.RowGroups) > math.MaxInt16 {
		return nil, nil
	}
	src := &copySource{md: md}
	var total int64
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if len(rg.Columns) != len(plan.cols) {
			return nil, fmt.Errorf("row group %d has %d columns, the schema %d", g, len(rg.Columns), len(plan.cols))
		}
		arg := arrowMD.RowGroup(g)
		var size int64
		for j, i := range plan.cols {
			if !copyableChunk(rg, arg, i, table.Field(j)) {
				return nil, nil
			}
			size += rg.Columns[i].MetaData.TotalCompressedSize
		}
		// A row group cannot be split without decoding it: one larger
		// than the files the table wants is encoded into smaller ones.
		if size > target {
			return nil, nil
		}
		total += size
		src.groupBytes = append(src.groupBytes, size)
	}
	// Small row groups slow every reader of the table: merging them is
	// worth decoding them.
	if len(md.RowGroups) > 0 && total/int64(len(md.RowGroups)) < minRowGroup {
		return nil, nil
	}
	return src, nil
}

// minCopyRowGroup is the least stored size of a file's row groups, on
// average, for its chunks to be copied: a thirty-second of the table's
// write.parquet.row-group-size-bytes (4 MiB of the default 128 MiB).
func minCopyRowGroup(opts fileOptions) int64 { return opts.rowGroup / 32 }

// copyableChunk is checkSource for one column chunk.
func copyableChunk(rg *format.RowGroup, arg *metadata.RowGroupMetaData, i int, f arrow.Field) bool {
	cc := &rg.Columns[i]
	if cc.FilePath != "" || cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0 {
		return false // in another file, or encrypted
	}
	if chunkCodecs[cc.MetaData.Codec] == nil {
		return false // LZ4 with Hadoop's framing, which readers disagree on, or LZO
	}
	if !commonPages(&cc.MetaData) {
		return false // pages not every reader decodes
	}
	// arrow-go tells whether the null count was written at all; the
	// footer as decoded here reads a missing one as 0.
	acc, err := arg.ColumnChunk(i)
	if err != nil {
		return false
	}
	ok, err := acc.StatsSet()
	if err != nil || !ok {
		return false
	}
	st, err := acc.Statistics()
	if err != nil || st == nil || !st.HasNullCount() {
		return false
	}
	s := &cc.MetaData.Statistics
	if s.NullCount < cc.MetaData.NumValues && (s.MinValue == nil || s.MaxValue == nil) {
		return false
	}
	if !f.Nullable && s.NullCount != 0 {
		return false
	}
	if len(s.MinValue) > maxBoundBytes || len(s.MaxValue) > maxBoundBytes {
		return false // the encoders would write no bounds
	}
	if nanBound(cc.MetaData.Type, s.MinValue) || nanBound(cc.MetaData.Type, s.MaxValue) {
		return false // older writers let a NaN into the bounds, which would prune wrongly
	}
	return cc.MetaData.NumValues == rg.NumRows
}

// commonPages reports whether every page of a chunk is in an encoding
// every Iceberg reader decodes, those floe's encoders write: values plain
// or dictionary-encoded, levels RLE (BIT_PACKED is what older writers name
// the levels of a column that has none). Iceberg's vectorized reader,
// Spark's default, refuses a page of any other up to Iceberg 1.10, such
// as the delta encodings and the RLE booleans of Spark's and DuckDB's v2
// writers: such an input is decoded and encoded again rather than copied.
// The chunk's list of encodings mixes those of values and levels; the
// pages' encoding statistics tell them apart, and without them an RLE
// boolean column may have RLE values.
func commonPages(m *format.ColumnMetaData) bool {
	for _, e := range m.Encoding {
		switch e {
		case format.Plain, format.PlainDictionary, format.RLEDictionary, format.BitPacked:
		case format.RLE:
			if m.Type == format.Boolean && len(m.EncodingStats) == 0 {
				return false
			}
		default:
			return false
		}
	}
	for _, st := range m.EncodingStats {
		switch st.PageType {
		case format.DataPage, format.DataPageV2:
			if st.Encoding != format.Plain && st.Encoding != format.PlainDictionary && st.Encoding != format.RLEDictionary {
				return false
			}
		case format.DictionaryPage:
			if st.Encoding != format.Plain && st.Encoding != format.PlainDictionary {
				return false
			}
		}
	}
	return true
}

// nanBound reports whether a float or double bound is NaN.
func nanBound(t format.Type, b []byte) bool {
	switch {
	case t == format.Float && len(b) == 4:
		return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case t == format.Double && len(b) == 8:
		return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return false
}

// chunkEncoder writes a data file of copied column chunks. It is an
// open file of a slot of its own, so that rolling, finishing and aborting
// go as for encoded files; it takes no records.
type chunkEncoder struct {
	out      *countingWriter
	template *format.FileMetaData
	groups   []format.RowGroup
	rows     int64
	buf      []byte // a chunk read
	dec      []byte // a page decompressed
}

func newChunkEncoder(out *countingWriter, template *format.FileMetaData) (*chunkEncoder, error) {
	if _, err := out.Write([]byte("PAR1")); err != nil {
		return nil, err
	}
	return &chunkEncoder{out: out, template: template}, nil
}

func (e *chunkEncoder) Write(arrow.RecordBatch) (int64, bool, error) {
	return 0, false, errors.New("a file of copied column chunks takes no rows")
}

// errCorruptChunk marks a column chunk whose pages do not add up.
var errCorruptChunk = errors.New("corrupt column chunk")

// copyFile appends row groups of src, their chunks in the table's column
// order, and returns the rows copied. Each chunk's pages are checked
// first: their sizes must add up to the chunk's and their values to its
// count, each must decompress to its size, and a page's CRC, when
// written, must match.
func (e *chunkEncoder) copyFile(f ingest.ParquetFile, src *copySource, plan *copyPlan, table *arrow.Schema, groups []int) (int64, error) {
	var rows int64
	for _, g := range groups {
		rg := &src.md.RowGroups[g]
		out := format.RowGroup{NumRows: rg.NumRows, Ordinal: int16(len(e.groups)), FileOffset: e.out.n}
		for j, i := range plan.cols {
			cc := rg.Columns[i]
			m := &cc.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize <= 0 || start+m.TotalCompressedSize > f.Size() {
				return rows, &badInput{fmt.Errorf("%w: row group %d column %s lies outside the file", errCorruptChunk, g, table.Field(j).Name)}
			}
			if int64(cap(e.buf)) < m.TotalCompressedSize {
				e.buf = make([]byte, m.TotalCompressedSize)
			}
			b := e.buf[:m.TotalCompressedSize]
			if _, err := f.ReadAt(b, start); err != nil {
				return rows, &badInput{fmt.Errorf("cannot read the file: %w", err)}
			}
			if err := e.checkPages(b, m.NumValues, chunkCodecs[m.Codec]); err != nil {
				return rows, &badInput{fmt.Errorf("%w: row group %d column %s: %v", errCorruptChunk, g, table.Field(j).Name, err)}
			}
			at := e.out.n
			if _, err := e.out.Write(b); err != nil {
				return rows, err
			}
			shift := at - start
			m.DataPageOffset += shift
			if m.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset += shift
			}
			m.IndexPageOffset = 0
			m.BloomFilterOffset, m.BloomFilterLength = 0, 0
			m.PathInSchema = []string{table.Field(j).Name}
			cc.FileOffset = at
			cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0
			cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
			out.Columns = append(out.Columns, cc)
			out.TotalByteSize += m.TotalUncompressedSize
			out.TotalCompressedSize += m.TotalCompressedSize
		}
		e.groups = append(e.groups, out)
		e.rows += rg.NumRows
		rows += rg.NumRows
	}
	return rows, nil
}

// checkPages walks a chunk's pages and decompresses each, as decoding
// would: a page whose bytes do not decompress to the size its header says
// is as corrupt as one a reader could not decode, and is refused here
// rather than found by the first reader of the table.
func (e *chunkEncoder) checkPages(b []byte, values int64, codec pqcompress.Codec) error {
	r := new(thrift.CompactProtocol).NewReaderFromBytes(b)
	var seen int64
	for pos := 0; pos < len(b); {
		r.ResetBytes(b[pos:])
		var h format.PageHeader
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			return fmt.Errorf("page header at byte %d: %v", pos, err)
		}
		body := pos + r.BytesRead()
		end := body + int(h.CompressedPageSize)
		if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || end > len(b) {
			return fmt.Errorf("page at byte %d runs past the chunk", pos)
		}
		if h.CRC != 0 && int32(crc32.ChecksumIEEE(b[body:end])) != h.CRC {
			return fmt.Errorf("page at byte %d fails its CRC", pos)
		}
		// A v2 page's levels come first, never compressed.
		page, size, compressed := b[body:end], int(h.UncompressedPageSize), true
		switch h.Type {
		case format.DataPage:
			seen += int64(h.DataPageHeader.V.NumValues)
		case format.DataPageV2:
			v2 := h.DataPageHeaderV2.V
			seen += int64(v2.NumValues)
			levels := int(v2.DefinitionLevelsByteLength) + int(v2.RepetitionLevelsByteLength)
			if levels < 0 || levels > len(page) || levels > size {
				return fmt.Errorf("page at byte %d has levels longer than the page", pos)
			}
			page, size = page[levels:], size-levels
			compressed = !v2.IsCompressed.Valid || v2.IsCompressed.V
		}
		if compressed {
			var err error
			if e.dec, err = codec.Decode(e.dec[:0], page); err != nil {
				return fmt.Errorf("page at byte %d does not decompress: %v", pos, err)
			}
			page = e.dec
		}
		if len(page) != size {
			return fmt.Errorf("page at byte %d holds %d bytes, its header says %d", pos, len(page), size)
		}
		pos = end
	}
	if seen != values {
		return fmt.Errorf("its pages hold %d values, its metadata says %d", seen, values)
	}
	return nil
}

// chunkCodecs decompress the codecs copyableChunk accepts; each keeps a
// pool of decoders, shared by the batch's goroutines.
var chunkCodecs = map[format.CompressionCodec]pqcompress.Codec{
	format.Uncompressed: &uncompressed.Codec{},
	format.Snappy:       &snappy.Codec{},
	format.Gzip:         &gzip.Codec{},
	format.Zstd:         &zstd.Codec{},
	format.Lz4Raw:       &lz4.Codec{},
	format.Brotli:       &brotli.Codec{},
}

// Close writes the footer: the template's schema with the row groups.
func (e *chunkEncoder) Close() (*metadata.FileMetaData, error) {
	md := *e.template
	md.NumRows = e.rows
	md.RowGroups = e.groups
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err == nil {
		e.out.keepTail = true
		footer = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
		_, err = e.out.Write(append(footer, "PAR1"...))
	}
	var meta *metadata.FileMetaData
	if err == nil {
		meta, err = e.out.footer()
	}
	return meta, errors.Join(err, e.out.Close())
}

var _ fileEncoder = (*chunkEncoder)(nil)

// copySlot keys a writer goroutine's slot for files of copied chunks of
// a partition (nil unpartitioned), apart from its slots for encoded rows.
type copySlot struct {
	worker int
	key    *partitionKey
}

// parquetPart writes a Parquet part by copying its column chunks, or else
// by its values (values.go), and reports false, having written nothing,
// when neither is allowed (the part is then read as Arrow records).
func (b *batch) parquetPart(ctx context.Context, worker int, p ingest.ParquetPart) (bool, error) {
	if b.w.Route != nil || b.w.Project != nil {
		return false, nil
	}
	in, err := p.Schema(ctx)
	if err != nil {
		return false, err
	}
	d := b.fixed
	if d == nil {
		if d, err = b.destFor(ctx, b.w.Name, in); err != nil {
			return false, err
		}
	}
	plan, err := d.planCopy(in, b.w.Conform)
	if err != nil || plan == nil {
		return false, err
	}
	values := d.values && valuesPlan(plan)
	if !d.copyable && !values {
		return false, nil
	}
	f, err := p.OpenParquet(ctx)
	if err != nil {
		return false, err
	}
	var parts []rowGroupsOf
	var src *copySource
	// A file smaller than the least row group a copy keeps is not worth
	// reading its footer for.
	if d.copyable && p.SizeBytes() >= minCopyRowGroup(d.opts) {
		src, err = checkSource(f, plan, d.schema, d.opts.target, minCopyRowGroup(d.opts))
		if err != nil {
			return false, errors.Join(&ingest.BadFileError{Path: p.Name(), Err: err}, f.Close())
		}
		if src != nil && d.part == nil {
			parts = []rowGroupsOf{{groups: allGroups(len(src.md.RowGroups))}}
		} else if src != nil {
			if parts, err = d.partitionsOf(ctx, src, plan); err != nil {
				return false, errors.Join(err, f.Close())
			}
		}
	}
	if parts == nil && !values {
		return false, f.Close()
	}
	var rows int64
	if parts == nil {
		rows, err = b.writeFileValues(d, worker, f)
	}
	for _, part := range parts {
		n, werr := b.copyInto(d, worker, part, f, src, plan)
		rows += n
		if err = werr; err != nil {
			break
		}
	}
	// A file that changed while it was read is unstable, whatever was
	// made of it: it is read again in a later batch, not set aside.
	if cerr := f.Close(); err == nil || errors.As(cerr, new(*ingest.UnstableFileError)) {
		err = cerr
	}
	d.mu.Lock()
	d.rows += rows
	d.mu.Unlock()
	var bad *badInput
	if errors.As(err, &bad) && ctx.Err() == nil {
		return true, &ingest.BadFileError{Path: p.Name(), Err: bad.err}
	}
	return true, err
}

// badInput marks what copyFile met in its input, as opposed to a failure
// to write the data file.
type badInput struct{ err error }

func (e *badInput) Error() string { return e.err.Error() }
func (e *badInput) Unwrap() error { return e.err }

// rowGroupsOf are the row groups of an input that go to one partition
// (key nil for an unpartitioned table).
type rowGroupsOf struct {
	key    *partitionKey
	groups []int
}

func allGroups(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// copyInto copies part's row groups into the data file of the worker's
// slot for its partition. An unpartitioned table's file takes input after
// input up to the target size; a partition's file is closed after each
// input, so that a batch of many partitions holds no file open.
func (b *batch) copyInto(d *dest, worker int, part rowGroupsOf, f ingest.ParquetFile, src *copySource, plan *copyPlan) (int64, error) {
	s := d.slot(copySlot{b.fileOf(worker), part.key}, part.key)
	s.mu.Lock()
	defer s.mu.Unlock()
	var size int64
	for _, g := range part.groups {
		size += src.groupBytes[g]
	}
	// Row group ordinals are 16 bits.
	if s.file != nil && (s.file.out.n+size > d.opts.target || len(s.file.enc.(*chunkEncoder).groups)+len(part.groups) > math.MaxInt16) {
		if err := b.roll(d, s, false); err != nil {
			return 0, err
		}
	}
	if s.file == nil {
		var err error
		if s.file, err = b.createCopy(d, s.dir); err != nil {
			return 0, err
		}
	}
	rows, err := s.file.enc.(*chunkEncoder).copyFile(f, src, plan, d.schema, part.groups)
	s.file.rows += rows
	if err == nil && part.key != nil {
		err = b.roll(d, s, false)
	}
	return rows, err
}

// createCopy opens a data file for copied chunks in dir.
func (b *batch) createCopy(d *dest, dir string) (*openFile, error) {
	return b.openFile(d, dir, func(out *countingWriter) (fileEncoder, error) {
		return newChunkEncoder(out, d.template)
	})
}
