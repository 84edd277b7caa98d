// Package pqgo holds what floe's parquet-go encoder builds on and the
// benchmarks that compare against bare parquet-go share: the zstd codec and
// a schema group that keeps the table's column order.
package pqgo

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"
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
	// fastest is zstd's fastest level (any below 3), which trades size for
	// speed: there, and only there, pages may be coded as literals alone.
	fastest bool
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
	fastest := zstd.EncoderLevelFromZstd(level) == zstd.SpeedFastest
	return &ZstdCodec{enc: enc, lean: lean, dec: dec, fastest: fastest}, nil
}

// shared holds the process's codec of each level, by level.
var shared sync.Map

// SharedZstd is the process's codec at level, made the first time it is
// asked for. Its encoders keep their history buffers from one batch to the
// next: a stream of small batches building a codec each spent 3% of its
// CPU allocating and clearing them.
func SharedZstd(level int) (*ZstdCodec, error) {
	if c, ok := shared.Load(level); ok {
		return c.(*ZstdCodec), nil
	}
	c, err := NewZstd(level)
	if err != nil {
		return nil, err
	}
	got, _ := shared.LoadOrStore(level, c)
	return got.(*ZstdCodec), nil
}

func (*ZstdCodec) String() string                            { return "ZSTD" }
func (*ZstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode and Decode may be called by several goroutines at once: the
// encoders' and decoder's EncodeAll and DecodeAll are safe for it.
func (c *ZstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}
func (c *ZstdCodec) Decode(dst, src []byte) ([]byte, error) { return c.dec.DecodeAll(src, dst[:0]) }

// Column returns the codec of one column of one data file, whose pages
// come one after another from one goroutine. width is the bytes of each of
// the column's plain values, 4 or 8, or 0 when they vary.
func (c *ZstdCodec) Column(width int) compress.Codec {
	col := &zstdColumn{ZstdCodec: c, fast: CodingLiterals}
	if width == 4 || width == 8 {
		col.fast, col.width = CodingStride, width
	}
	return col
}

// PlainWidth is the width of a plain-encoded value of kind, for Column: 4
// or 8 bytes, or 0 when values vary in width or are bits.
func PlainWidth(kind pq.Kind) int {
	switch kind {
	case pq.Int32, pq.Float:
		return 4
	case pq.Int64, pq.Double:
		return 8
	}
	return 0
}

// zstdColumn compresses a column's pages with zstd, and with a cheaper
// coding of the same format for the pages after one that proved the full
// encoder's work wasted:
//   - lean, after a page that entropy coding did not shrink by 2%: a
//     column of random doubles or hashes stays incompressible page after
//     page, and trying cost as much CPU as compressing a page of text;
//   - at the fastest level only, after a page coded so within 1/16 of the
//     full encoder's size: literals alone (appendLiterals) for a column of
//     strings, plain-encoded random ones, whose matches (the 4-byte
//     lengths) save a few percent and cost the match finder most of its
//     time; matches with the value before alone (appendStride) for a
//     column of fixed width, ids and timestamps, whose every value the
//     match finder stops at.
//
// After the k-th page in a row that a cheap coding suits, the next 2^k-1
// pages (at most 31) are coded so, then the full encoder tries again, so
// that a column whose values change loses little. After the fastest
// level's coding lost on k pages in a row it is tried again 2^k-1 pages
// later, so that a column it does not suit pays for it rarely.
type zstdColumn struct {
	*ZstdCodec
	fast  Coding // the fastest level's coding of the column
	width int    // of the column's values, for CodingStride
	cheap Coding // of the pages left
	left  int    // pages left to code cheaply
	wins  int    // pages in a row cheap suited
	// fastLosses is the pages in a row the fastest level's coding lost
	// on, and untilFast the pages before it is tried again.
	fastLosses, untilFast int
}

// Coding is how a page is coded: by the full encoder, or more cheaply in
// the same format.
type Coding int

// The codings of a column's pages (see zstdColumn).
const (
	CodingFull     Coding = iota - 1 // klauspost's encoder, every literal entropy coded
	CodingLean                       // klauspost's encoder, a block's literals raw when it found no match
	CodingLiterals                   // literals alone: appendLiterals
	CodingStride                     // matches with the value before alone: appendStride
)

// Codings are every coding a page may take, for the tests that decode
// each in every decoder users run.
var Codings = []Coding{CodingFull, CodingLean, CodingLiterals, CodingStride}

func (c Coding) String() string {
	switch c {
	case CodingFull:
		return "full"
	case CodingLean:
		return "lean"
	case CodingLiterals:
		return "literals"
	case CodingStride:
		return "stride"
	}
	return fmt.Sprintf("coding %d", int(c))
}

// EncodeAs appends to dst the zstd frame of src coded as coding says, as a
// column's pages are once it chose that coding; width is the bytes of each
// of the page's plain values, 4 or 8, which CodingStride needs.
func (c *ZstdCodec) EncodeAs(coding Coding, dst, src []byte, width int) ([]byte, error) {
	switch coding {
	case CodingFull:
		return c.enc.EncodeAll(src, dst), nil
	case CodingLean:
		return c.lean.EncodeAll(src, dst), nil
	case CodingLiterals:
		return appendLiterals(dst, src)
	case CodingStride:
		if width != 4 && width != 8 {
			return nil, fmt.Errorf("zstd stride coding of values %d bytes wide: it codes values of 4 or 8 bytes", width)
		}
		return appendStride(dst, src, width)
	}
	return nil, fmt.Errorf("zstd: no %v", coding)
}

// maxWins caps the pages coded cheaply before the full encoder tries
// again, and the pages before literals alone are tried again after they
// lost: 2^5-1.
const maxWins = 5

// probeBytes is the most of a page the full encoder tries: a column's
// values are alike through a page, and trying the whole of a 1 MiB page
// cost as much as coding it.
const probeBytes = 128 << 10

func (c *zstdColumn) Encode(dst, src []byte) ([]byte, error) {
	if c.left > 0 {
		c.left--
		return c.encode(c.cheap, dst, src), nil
	}
	sample := src
	if len(src) >= 2*probeBytes {
		sample = src[:probeBytes]
	}
	out := c.enc.EncodeAll(sample, dst[:0])
	coding, cheap := c.try(out, sample)
	if len(sample) < len(src) {
		return c.encode(coding, dst, src), nil
	}
	if cheap != nil {
		return append(out[:0], cheap...), nil
	}
	return out, nil
}

// try tells the coding that suits the page sample, which the full encoder
// coded as out, and starts the run of pages it suits. The fastest level's
// coding of the sample, when it suits, goes after out in the same buffer,
// parquet-go's, so that no column keeps one of its own; out stays as it
// is.
func (c *zstdColumn) try(out, sample []byte) (Coding, []byte) {
	if len(out) > len(sample)-len(sample)/50 {
		c.suits(CodingLean)
		return CodingLean, nil
	}
	if !c.fastest || c.untilFast > 0 {
		c.untilFast = max(c.untilFast-1, 0)
		c.wins = 0
		return CodingFull, nil
	}
	if both, err := c.code(out, sample); err == nil {
		if cheap := both[len(out):]; len(cheap) <= len(out)+len(out)/16 {
			c.fastLosses = 0
			c.suits(c.fast)
			return c.fast, cheap
		}
	}
	c.fastLosses = min(c.fastLosses+1, maxWins)
	c.untilFast = 1<<c.fastLosses - 1
	c.wins = 0
	return CodingFull, nil
}

// encode codes src as coding says; should Huffman coding fail, the full
// encoder codes it.
func (c *zstdColumn) encode(coding Coding, dst, src []byte) []byte {
	if out, err := c.EncodeAs(coding, dst[:0], src, c.width); err == nil {
		return out
	}
	return c.enc.EncodeAll(src, dst[:0])
}

// code appends src coded by the fastest level's coding of the column.
func (c *zstdColumn) code(dst, src []byte) ([]byte, error) {
	return c.EncodeAs(c.fast, dst, src, c.width)
}

// suits starts a run of pages coded cheaply: one page longer per win in a
// row, up to 2^maxWins-1.
func (c *zstdColumn) suits(cheap Coding) {
	if cheap != c.cheap {
		c.wins = 0
	}
	c.wins = min(c.wins+1, maxWins)
	c.cheap, c.left = cheap, 1<<c.wins-1
}
