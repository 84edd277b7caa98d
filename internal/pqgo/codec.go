// Package pqgo holds what floe's parquet-go encoder builds on and the
// benchmarks that compare against bare parquet-go share: the zstd codec and
// a schema group that keeps the table's column order.
package pqgo

import (
	"runtime"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// ZstdCodec is zstd with all-literal entropy compression on: parquet-go's
// bundled codec leaves high-entropy pages (random ids, payloads) almost raw
// without it, measured +25% file size on events5.
type ZstdCodec struct {
	enc *zstd.Encoder
	// lean leaves a block's literals raw when it found no match: a fraction
	// of enc's CPU on a page that does not compress (random doubles), the
	// same bytes out for it; see Column.
	lean *zstd.Encoder
	dec  *zstd.Decoder
}

// NewZstd makes a codec compressing at the given zstd level.
func NewZstd(level int) (*ZstdCodec, error) {
	newEncoder := func(allLiterals bool) (*zstd.Encoder, error) {
		return zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithAllLitEntropyCompression(allLiterals),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	}
	enc, err := newEncoder(true)
	if err != nil {
		return nil, err
	}
	lean, err := newEncoder(false)
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &ZstdCodec{enc: enc, lean: lean, dec: dec}, nil
}

func (*ZstdCodec) String() string                            { return "ZSTD" }
func (*ZstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode and Decode are called by one writer goroutine at a time (each
// data file has its own encoder); EncodeAll is safe for concurrent use anyway.
func (c *ZstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}
func (c *ZstdCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.DecodeAll(src, dst[:0]) }

// Column returns the codec of one column of one data file, whose pages
// come one after another from one goroutine.
func (c *ZstdCodec) Column() compress.Codec { return &zstdColumn{ZstdCodec: c} }

// zstdColumn compresses a column's pages with the lean encoder after a
// page that entropy coding did not shrink by 2%: a column of random
// doubles or hashes stays as incompressible page after page, and trying
// cost as much CPU as compressing a page of text. After the k-th such page
// in a row the next 2^k-1 pages (at most 31) are compressed lean, then the
// full encoder tries again, so that a column that turns compressible loses
// little.
type zstdColumn struct {
	*ZstdCodec
	misses int // pages in a row the full encoder did not shrink
	lean   int // pages left to compress lean
}

// leanAfter caps the pages compressed lean before the full encoder tries
// again: 2^5-1.
const leanAfter = 5

func (c *zstdColumn) Encode(dst, src []byte) ([]byte, error) {
	if c.lean > 0 {
		c.lean--
		return c.ZstdCodec.lean.EncodeAll(src, dst[:0]), nil
	}
	out := c.enc.EncodeAll(src, dst[:0])
	if len(out) > len(src)-len(src)/50 {
		c.misses = min(c.misses+1, leanAfter)
		c.lean = 1<<c.misses - 1
	} else {
		c.misses = 0
	}
	return out, nil
}
