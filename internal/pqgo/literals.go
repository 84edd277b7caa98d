package pqgo

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/klauspost/compress/huff0"
)

// appendLiterals appends to dst a zstd frame (RFC 8878) of src whose
// blocks hold src as Huffman-coded literals and no sequences: zstd's
// entropy stage without its match finder. A page of plain-encoded random
// strings (ids, tokens) gains nearly nothing from matches, since only the
// 4-byte length before each value repeats, yet makes the match finder
// stop at every value: coding its literals alone halves zstd's CPU on it
// for a few percent more bytes (see zstdColumn). Any zstd decoder reads
// the frame.
func appendLiterals(dst, src []byte) ([]byte, error) {
	s := scratches.Get().(*huff0.Scratch)
	defer scratches.Put(s)
	dst = appendFrameHeader(dst, len(src))
	if len(src) == 0 {
		return appendBlockHeader(dst, true, blockRaw, 0), nil
	}
	for len(src) > 0 {
		n := min(len(src), maxBlockSize)
		var err error
		if dst, err = appendLiteralsBlock(dst, src[:n], n == len(src), s); err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return dst, nil
}

// scratches are Huffman coders' buffers (a few hundred KiB each once
// used), shared by every column of every file rather than kept by each.
var scratches = sync.Pool{New: func() any { return new(huff0.Scratch) }}

// maxBlockSize is the most content a zstd block holds.
const maxBlockSize = 128 << 10

const (
	blockRaw        = 0
	blockRLE        = 1
	blockCompressed = 2
)

// appendFrameHeader appends the magic number and a frame header declaring
// size bytes of content, with no dictionary and no checksum. A frame of one
// block is a single segment; a larger one declares a window of one block,
// all that blocks of literals need (they refer to nothing before them):
// a single segment's window is its whole content, and decoders refuse a
// window over 128 MiB by default.
func appendFrameHeader(dst []byte, size int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0xFD2FB528)
	if size <= maxBlockSize {
		const singleSegment = 1 << 5
		switch {
		case size < 256:
			return append(dst, singleSegment, byte(size))
		case size < 1<<16+256:
			dst = append(dst, 1<<6|singleSegment)
			return binary.LittleEndian.AppendUint16(dst, uint16(size-256))
		}
		dst = append(dst, 2<<6|singleSegment)
		return binary.LittleEndian.AppendUint32(dst, uint32(size))
	}
	// Window_Descriptor: exponent 17-10, mantissa 0, a window of 128 KiB.
	const window = (17 - 10) << 3
	if uint64(size) < 1<<32 {
		dst = append(dst, 2<<6, window)
		return binary.LittleEndian.AppendUint32(dst, uint32(size))
	}
	dst = append(dst, 3<<6, window)
	return binary.LittleEndian.AppendUint64(dst, uint64(size))
}

// appendBlockHeader appends a block header: the last-block flag, the block
// type and the block's size (for an RLE block, the bytes it stands for).
func appendBlockHeader(dst []byte, last bool, typ, size int) []byte {
	h := uint32(size)<<3 | uint32(typ)<<1
	if last {
		h |= 1
	}
	return append(dst, byte(h), byte(h>>8), byte(h>>16))
}

// appendLiteralsBlock appends one block of b: a compressed block of
// Huffman-coded literals and zero sequences, or b raw when coding does not
// shrink it, or an RLE block when it is one byte repeated.
func appendLiteralsBlock(dst, b []byte, last bool, s *huff0.Scratch) ([]byte, error) {
	at := len(dst)
	dst = appendBlockHeader(dst, last, blockCompressed, 0)
	dst, typ, err := appendLiteralsSection(dst, b, s)
	if err != nil {
		return nil, err
	}
	content := len(dst) - at - blockHeaderSize + 1 // + the zero sequences byte
	switch {
	case typ == literalsRLE:
		return append(appendBlockHeader(dst[:at], last, blockRLE, len(b)), b[0]), nil
	case typ == literalsRaw || content >= len(b):
		return append(appendBlockHeader(dst[:at], last, blockRaw, len(b)), b...), nil
	}
	appendBlockHeader(dst[:at], last, blockCompressed, content)
	return append(dst, 0), nil
}

const blockHeaderSize = 3

const (
	literalsRaw        = 0
	literalsRLE        = 1
	literalsCompressed = 2
)

// appendLiteralsSection appends a block's literals section holding lits,
// and tells its type: Huffman-coded in four streams, or raw when that does
// not shrink them or they are too few to pay for four streams (1 KiB or
// so), or one byte repeated.
func appendLiteralsSection(dst, lits []byte, s *huff0.Scratch) ([]byte, int, error) {
	if len(lits) >= 1<<10 {
		s.Reuse = huff0.ReusePolicyNone
		out, _, err := huff0.Compress4X(lits, s)
		switch {
		case errors.Is(err, huff0.ErrUseRLE):
			return append(appendLiteralsHeader(dst, literalsRLE, len(lits)), lits[0]), literalsRLE, nil
		case err == nil:
			// The regenerated and compressed sizes in 14 or 18 bits each
			// (sections of 1 KiB and more need no 10-bit form).
			format, bits, headerLen := 2, 14, 4
			if max(len(lits), len(out)) >= 1<<14 {
				format, bits, headerLen = 3, 18, 5
			}
			if headerLen+len(out) < len(lits) {
				h := uint64(literalsCompressed) | uint64(format)<<2 | uint64(len(lits))<<4 | uint64(len(out))<<(4+bits)
				for i := range headerLen {
					dst = append(dst, byte(h>>(8*i)))
				}
				return append(dst, out...), literalsCompressed, nil
			}
		case !errors.Is(err, huff0.ErrIncompressible):
			return nil, 0, err
		}
	}
	return append(appendLiteralsHeader(dst, literalsRaw, len(lits)), lits...), literalsRaw, nil
}

// appendLiteralsHeader appends the header of a raw or RLE literals section
// of size bytes, in one, two or three bytes.
func appendLiteralsHeader(dst []byte, typ, size int) []byte {
	switch {
	case size < 1<<5:
		return append(dst, byte(typ|size<<3))
	case size < 1<<12:
		h := typ | 1<<2 | size<<4
		return append(dst, byte(h), byte(h>>8))
	}
	h := typ | 3<<2 | size<<4
	return append(dst, byte(h), byte(h>>8), byte(h>>16))
}
