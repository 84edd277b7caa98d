package write

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	"github.com/floe-io/floe/internal/ingest"
)

// pqarrow, which handles every type (nested ones included).
type fileEncoder interface {
	Write(rec arrow.RecordBatch) error
	// EncodedBytes is the size of the file so far, buffered pages included,
	// so that files roll at the target size of encoded bytes.
	EncodedBytes() int64
	// Close writes the footer and returns it, parsed.
	Close() (*metadata.FileMetaData, error)
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
	// pqgoCodec is shared by the batch's writers: building a zstd encoder
	// per file costs more than a small file's encode.
	pqgoCodec pqcompress.Codec
}

// newEncoder starts a data file; first is its first record.
func (o fileOptions) newEncoder(schema *arrow.Schema, out *countingWriter, first arrow.RecordBatch) (fileEncoder, error) {
	if o.parquetGo {
		return newPqgoEncoder(schema, out, o, first)
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
	opts := fileOptions{
		props:      parquet.NewWriterProperties(wopts...),
		arrowProps: pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(memoryPool)),
		target:     target,
		rowGroup:   rowGroup,
		codecName:  codecName,
		level:      level,
		parquetGo:  pqgoSupported(schema) && p.Get(ParquetEncoderKey, "parquet-go") == "parquet-go",
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
