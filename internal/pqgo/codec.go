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

// zstdColumn compresses a column's pages with zstd, and with a cheaper
// coding of the same format for the pages after one that proved the full
// encoder's work wasted:
//   - lean, after a page that entropy coding did not shrink by 2%: a
//     column of random doubles or hashes stays incompressible page after
//     page, and trying cost as much CPU as compressing a page of text;
//   - literals alone (appendLiterals), after a page coded so within 1/16
//     of the full encoder's size, at the fastest level only: plain-encoded
//     random strings, whose matches (the 4-byte lengths) save a few
//     percent and cost the match finder most of its time.
//
// After the k-th page in a row that a cheap coding suits, the next 2^k-1
// pages (at most 31) are coded so, then the full encoder tries again, so
// that a column whose values change loses little. After literals alone
// lost on k pages in a row they are tried again 2^k-1 pages later, so that
// a column they do not suit pays for them rarely.
type zstdColumn struct {
	*ZstdCodec
	cheap coding // of the pages left
	left  int    // pages left to code cheaply
	wins  int    // pages in a row cheap suited
	// literalLosses is the pages in a row literals alone lost on, and
	// untilLiterals the pages before they are tried again.
	literalLosses, untilLiterals int
}

// coding is a cheaper coding than the full encoder's.
type coding int

const (
	codingLean coding = iota
	codingLiterals
)

// maxWins caps the pages coded cheaply before the full encoder tries
// again, and the pages before literals alone are tried again after they
// lost: 2^5-1.
const maxWins = 5

func (c *zstdColumn) Encode(dst, src []byte) ([]byte, error) {
	if c.left > 0 {
		c.left--
		if c.cheap == codingLean {
			return c.lean.EncodeAll(src, dst[:0]), nil
		}
		// Should Huffman coding fail, the full encoder codes the page.
		if lits, err := appendLiterals(dst[:0], src); err == nil {
			return lits, nil
		}
	}
	out := c.enc.EncodeAll(src, dst[:0])
	if len(out) > len(src)-len(src)/50 {
		c.suits(codingLean)
		return out, nil
	}
	if !c.fastest || c.untilLiterals > 0 {
		c.untilLiterals = max(c.untilLiterals-1, 0)
		c.wins = 0
		return out, nil
	}
	// The literals go after out in the same buffer, parquet-go's, so that
	// no column keeps one of its own; out stays as it is, and is coded
	// should Huffman coding fail.
	if both, err := appendLiterals(out, src); err == nil {
		if lits := both[len(out):]; len(lits) <= len(out)+len(out)/16 {
			c.literalLosses = 0
			c.suits(codingLiterals)
			return append(both[:0], lits...), nil
		}
	}
	c.literalLosses = min(c.literalLosses+1, maxWins)
	c.untilLiterals = 1<<c.literalLosses - 1
	c.wins = 0
	return out, nil
}

// suits starts a run of pages coded cheaply: one page longer per win in a
// row, up to 2^maxWins-1.
func (c *zstdColumn) suits(cheap coding) {
	if cheap != c.cheap {
		c.wins = 0
	}
	c.wins = min(c.wins+1, maxWins)
	c.cheap, c.left = cheap, 1<<c.wins-1
}
