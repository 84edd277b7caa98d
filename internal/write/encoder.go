package write

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	pqcompress "github.com/parquet-go/parquet-go/compress"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// fileEncoder encodes the records of one Parquet data file. Two exist: the
// parquet-go encoder, about 3x cheaper per row on flat schemas, and arrow-go's
// pqarrow, which handles every type (nested ones included).
type fileEncoder interface {
	// Write encodes rows of rec from the first and returns how many it
	// took; full reports that the file reached its target size (or cannot
	// take the next row) and must be rolled before the rest is written.
	Write(rec arrow.RecordBatch) (taken int64, full bool, err error)
	// Close writes the footer and returns it, parsed.
	Close() (*metadata.FileMetaData, error)
}

// errNewFile is put's way of saying that a record cannot go into the open
// file as it was started, and fits a new one.
var errNewFile = errors.New("record needs a new data file")

// rowGroups cuts a file's row groups and tells when the file is full, for
// both encoders. An encoder holds a whole row group before writing it out,
// so the open group's encoded size is estimated: its raw bytes times the
// ratio of encoded to raw bytes measured on the file's previous groups.
// Records are written in slices that fit the open group and what is left of
// the target, so that a file overshoots its target only by the estimate's
// error on its last group, not by whole records.
type rowGroups struct {
	// written is the size of the file's closed groups, read after each cut.
	written func() int64
	closed  int64
	target  int64
	limit   int64 // encoded bytes of a row group
	maxRows int64 // rows of a row group; 0 for no bound
	put     func(arrow.RecordBatch) error
	cut     func() error // writes the open group out
	pending int64        // raw bytes in the open group
	rows    int64        // rows in the open group
	ratio   float64
	// measured is set once a group was cut: until then ratio is a guess,
	// and the first group is kept small so that a wrong guess costs little.
	measured bool
}

// ratioGuess is encoded bytes per raw byte before a file's first group is
// cut: typical of zstd on event data.
const ratioGuess = 0.25

func newRowGroups(written func() int64, opts fileOptions, maxRows int64, put func(arrow.RecordBatch) error, cut func() error) rowGroups {
	return rowGroups{written: written, target: opts.target, limit: min(opts.rowGroup, max(1, opts.target/4)), maxRows: maxRows, put: put, cut: cut, ratio: ratioGuess}
}

// EncodedBytes is the size of the file so far, the open group estimated.
func (g *rowGroups) EncodedBytes() int64 { return g.closed + int64(float64(g.pending)*g.ratio) }

func (g *rowGroups) Write(rec arrow.RecordBatch) (int64, bool, error) {
	n, size := rec.NumRows(), recordSize(rec)
	return g.write(n, size, func(from, to int64) (int64, error) {
		if from == 0 && to == n {
			return size, g.put(rec)
		}
		part := rec.NewSlice(from, to)
		defer part.Release()
		return recordSize(part), g.put(part)
	})
}

// write puts rows [0, n) of raw bytes in slices that fit the open group and
// the file; put writes rows [from, to) and returns their raw bytes, or
// errNewFile having written none of them.
func (g *rowGroups) write(n, raw int64, put func(from, to int64) (int64, error)) (int64, bool, error) {
	if n == 0 {
		return 0, false, nil
	}
	perRow := float64(raw) / float64(n)
	var done int64
	for done < n {
		limit := g.limit
		if !g.measured {
			limit = min(limit, max(1, g.target/8))
		}
		est := perRow * g.ratio
		k := n - done
		if est > 0 {
			room := min(float64(limit)-float64(g.pending)*g.ratio, float64(g.target-g.EncodedBytes()))
			k = min(k, max(1, int64(room/est)))
		}
		if g.maxRows > 0 {
			k = min(k, max(1, g.maxRows-g.rows))
		}
		raw, err := put(done, done+k)
		if errors.Is(err, errNewFile) {
			return done, true, nil
		}
		if err != nil {
			return done, false, err
		}
		g.pending += raw
		g.rows += k
		done += k
		est = perRow * g.ratio
		if float64(g.target-g.EncodedBytes()) < est {
			// The last group is written by Close.
			return done, true, nil
		}
		if float64(g.pending)*g.ratio+est > float64(limit) || g.maxRows > 0 && g.rows >= g.maxRows {
			if err := g.flush(); err != nil {
				return done, false, err
			}
		}
	}
	return done, false, nil
}

// flush cuts the open group and measures its ratio.
func (g *rowGroups) flush() error {
	if err := g.cut(); err != nil {
		return err
	}
	before := g.closed
	g.closed = g.written()
	if g.pending > 0 && g.closed > before {
		g.ratio = float64(g.closed-before) / float64(g.pending)
		g.measured = true
	}
	g.pending, g.rows = 0, 0
	return nil
}

// Encoder defaults beside Iceberg's own.
const (
	rowGroupBytesDefault = 128 << 20
	// zstd's fastest level: measured ~1.75x faster than level 3 for ~2.5%
	// larger files on the events5 dataset (docs/benchmarks.md).
	zstdLevelDefault = 1
)

// fileOptions are the per-table encoder settings, resolved once a batch.
type fileOptions struct {
	props      *parquet.WriterProperties
	arrowProps pqarrow.ArrowWriterProperties
	target     int64
	rowGroup   int64
	codecName  string
	level      int
	parquetGo  bool
	// pqgoCodec is shared by the batch's writers (zstd's by the process):
	// building a zstd encoder per file costs more than a small file's
	// encode.
	pqgoCodec pqcompress.Codec
	// bloom are the columns written with a bloom filter; bloomRows bounds
	// a row group's rows so that each filter holds its rows at its fpp
	// within write.parquet.bloom-filter-max-bytes (0 without filters).
	bloom     []bloomColumn
	bloomRows int64
}

// bloomColumn is a column written with a Parquet bloom filter.
type bloomColumn struct {
	name string // the Parquet path, dotted
	fpp  float64
}

// bloomFPPDefault is Iceberg's false-positive rate of a bloom filter.
const bloomFPPDefault = 0.01

// bloomBitsPerValue is the size per distinct value of a split-block bloom
// filter with false-positive rate fpp (the Parquet spec's formula).
func bloomBitsPerValue(fpp float64) float64 {
	return -8 / math.Log(1-math.Pow(fpp, 1.0/8))
}

// bloomFilters reads the table's bloom filter properties: the columns of
// schema whose write.parquet.bloom-filter-enabled.column.<col> is true,
// with their fpp, the rows a row group may hold and the largest filter.
func bloomFilters(p iceberg.Properties, schema *arrow.Schema) (cols []bloomColumn, rows, maxBytes int64, err error) {
	if maxBytes, err = intProp(p, table.ParquetBloomFilterMaxBytesKey, table.ParquetBloomFilterMaxBytesDefault); err != nil {
		return nil, 0, 0, err
	}
	for _, key := range slices.Sorted(maps.Keys(p)) {
		name, ok := strings.CutPrefix(key, config.BloomFilterEnabledPrefix)
		if !ok || !strings.EqualFold(p[key], "true") || !hasLeaf(schema, name) {
			continue
		}
		fpp := bloomFPPDefault
		if v, ok := p[config.BloomFilterFPPPrefix+name]; ok {
			if fpp, err = strconv.ParseFloat(v, 64); err != nil || !(fpp > 0 && fpp < 1) {
				return nil, 0, 0, fmt.Errorf("%w: table property %s%s=%q must be a probability between 0 and 1", ingest.ErrConfig, config.BloomFilterFPPPrefix, name, v)
			}
		}
		cols = append(cols, bloomColumn{name: name, fpp: fpp})
		// Whole bits, as the parquet-go encoder sizes its filters.
		r := max(1, maxBytes*8/int64(math.Ceil(bloomBitsPerValue(fpp))))
		if rows == 0 || r < rows {
			rows = r
		}
	}
	return cols, rows, maxBytes, nil
}

// hasLeaf reports whether name is the dotted path of a primitive column of
// schema reached through structs alone.
func hasLeaf(schema *arrow.Schema, name string) bool {
	fields := schema.Fields()
	for {
		var f *arrow.Field
		rest := ""
		for i := range fields {
			if fields[i].Name == name {
				f = &fields[i]
				break
			}
			if r, ok := strings.CutPrefix(name, fields[i].Name+"."); ok {
				f, rest = &fields[i], r
				break
			}
		}
		if f == nil {
			return false
		}
		st, isStruct := f.Type.(*arrow.StructType)
		if rest == "" {
			return !isStruct && !arrow.IsNested(f.Type.ID())
		}
		if !isStruct {
			return false
		}
		fields, name = st.Fields(), rest
	}
}

// groupRows bounds a row group's rows by an encoder's own bound (0 for
// none) and by what its bloom filters hold.
func (o fileOptions) groupRows(bound int64) int64 {
	if o.bloomRows == 0 || bound != 0 && bound < o.bloomRows {
		return bound
	}
	return o.bloomRows
}

// newEncoder starts a data file; first is its first record.
func (o fileOptions) newEncoder(schema *arrow.Schema, out *countingWriter, first arrow.RecordBatch) (fileEncoder, error) {
	if o.parquetGo {
		return newPqgoEncoder(schema, out, o, firstRecord{first})
	}
	return newArrowEncoder(schema, out, o)
}

func newFileOptions(tbl *table.Table, schema *arrow.Schema) (fileOptions, error) {
	p := tbl.Properties()
	target, err := intProp(p, table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	if err != nil {
		return fileOptions{}, err
	}
	rowGroup, err := intProp(p, table.ParquetRowGroupSizeBytesKey, rowGroupBytesDefault)
	if err != nil {
		return fileOptions{}, err
	}
	codecName := strings.ToLower(p.Get(table.ParquetCompressionKey, "zstd"))
	var codec compress.Compression
	switch codecName {
	case "zstd":
		codec = compress.Codecs.Zstd
	case "snappy":
		codec = compress.Codecs.Snappy
	case "gzip":
		codec = compress.Codecs.Gzip
	case "lz4", "lz4_raw":
		codec = compress.Codecs.Lz4Raw
	case "brotli":
		codec = compress.Codecs.Brotli
	case "uncompressed", "none":
		codec = compress.Codecs.Uncompressed
	default:
		return fileOptions{}, fmt.Errorf("%w: table property %s=%q is not a known codec; use zstd, snappy, gzip, lz4, brotli or uncompressed", ingest.ErrConfig, table.ParquetCompressionKey, codecName)
	}
	level := compress.DefaultCompressionLevel
	if codecName == "zstd" {
		level = zstdLevelDefault
	}
	if v, ok := p[table.ParquetCompressionLevelKey]; ok && v != "" {
		if level, err = strconv.Atoi(v); err != nil {
			return fileOptions{}, fmt.Errorf("%w: table property %s=%q is not an integer", ingest.ErrConfig, table.ParquetCompressionLevelKey, v)
		}
	}
	wopts := []parquet.WriterProperty{
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(level),
		parquet.WithStats(true),
		parquet.WithCreatedBy("floe"),
		// Dictionaries pay only on repetitive columns; on all-distinct ones
		// (ids, measurements, payloads) they are pure cost, so arrow-go keeps
		// them for string and binary columns alone.
		parquet.WithDictionaryDefault(false),
	}
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY {
			wopts = append(wopts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	bloom, bloomRows, bloomBytes, err := bloomFilters(p, schema)
	if err != nil {
		return fileOptions{}, err
	}
	if len(bloom) > 0 {
		wopts = append(wopts, parquet.WithMaxBloomFilterBytes(bloomBytes))
	}
	for _, b := range bloom {
		// arrow-go sizes a filter for the rows it is given only when it is
		// adaptive: otherwise every row group's filter takes the maximum
		// size. Its candidates halve from the maximum, as many as it needs
		// to reach the smallest.
		wopts = append(wopts, parquet.WithBloomFilterEnabledFor(b.name, true), parquet.WithBloomFilterFPPFor(b.name, b.fpp),
			parquet.WithAdaptiveBloomFilterEnabledFor(b.name, true), parquet.WithBloomFilterCandidatesFor(b.name, 32))
	}
	opts := fileOptions{
		props:      parquet.NewWriterProperties(wopts...),
		arrowProps: pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(memoryPool)),
		target:     target,
		rowGroup:   rowGroup,
		codecName:  codecName,
		level:      level,
		parquetGo:  pqgoSupported(schema) && p.Get(ParquetEncoderKey, "parquet-go") == "parquet-go",
		bloom:      bloom,
		bloomRows:  bloomRows,
	}
	if opts.parquetGo {
		if opts.pqgoCodec, err = pqgoCodec(codecName, level); err != nil {
			return fileOptions{}, err
		}
	}
	return opts, nil
}

func intProp(p iceberg.Properties, key string, def int64) (int64, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: table property %s=%q must be a positive integer", ingest.ErrConfig, key, v)
	}
	return n, nil
}

// countingWriter counts the bytes of a data file and keeps its tail, where
// the footer is, so that an encoder's footer can be parsed without reading
// the file back from storage.
type countingWriter struct {
	w    io.WriteCloser
	n    int64
	tail []byte
	// keepTail is set just before the footer is written: copying the
	// whole file into tail would cost a memmove of every byte.
	keepTail bool
}

const tailKeep = 4 << 20

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if !c.keepTail {
		return n, err
	}
	c.tail = append(c.tail, p[:n]...)
	if len(c.tail) > 2*tailKeep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-tailKeep:]...)
	}
	return n, err
}

// Close is called by the encoder once the footer is written.
func (c *countingWriter) Close() error { return c.w.Close() }

// footer parses the footer of the file written so far.
func (c *countingWriter) footer() (*metadata.FileMetaData, error) {
	t := c.tail
	if len(t) < 12 || !bytes.Equal(t[len(t)-4:], []byte("PAR1")) {
		return nil, errors.New("no Parquet footer at the end of the file")
	}
	n := int(binary.LittleEndian.Uint32(t[len(t)-8:]))
	if n+8 > len(t) {
		return nil, fmt.Errorf("Parquet footer of %d bytes is larger than the %d bytes kept", n, len(t))
	}
	return metadata.NewFileMetaData(t[len(t)-8-n:len(t)-8], nil)
}
