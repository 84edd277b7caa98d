package pqgo

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/huff0"
)

// appendStride appends to dst a zstd frame (RFC 8878) of src, a page of
// plain values of width bytes each, whose only matches are with the value
// before: an id or a timestamp differs from the one before it in its low
// bytes only. zstd's match finder finds these matches too, but hashes
// every position to do so and stops at every value; here one comparison
// per value finds them, and the sequences' lengths are entropy coded as
// zstd's are. Any zstd decoder reads the frame.
//
// Every sequence but the frame's first copies from width bytes back, the
// repeat offset, so offsets cost no bits; the first, which sets that
// offset, has a block of its own, compressed even when larger than raw,
// as zstd allows up to the frame's window (were it too large, the next
// block tries again).
func appendStride(dst, src []byte, width int) ([]byte, error) {
	s := strideScratches.Get().(*strideScratch)
	defer strideScratches.Put(s)
	dst = appendFrameHeader(dst, len(src))
	if len(src) == 0 {
		return appendBlockHeader(dst, true, blockRaw, 0), nil
	}
	offsetSet := false
	for from := 0; from < len(src); {
		to := min(len(src), from+maxBlockSize)
		// Until a block sets the repeat offset, a block ends after its
		// first match.
		to = s.parse(src, from, to, width, !offsetSet)
		var sequences bool
		var err error
		if dst, sequences, err = s.appendBlock(dst, src[from:to], to == len(src), width, !offsetSet, min(len(src), maxBlockSize-1)); err != nil {
			return nil, err
		}
		offsetSet = offsetSet || sequences
		from = to
	}
	return dst, nil
}

// sequence is zstd's: ll literals, then ml bytes copied from before; lc
// and mc are the lengths' codes.
type sequence struct {
	ll, ml uint32
	lc, mc byte
}

// strideScratch holds a block's sequences and literals and the tables
// that code them, kept between pages.
type strideScratch struct {
	seqs       []sequence
	nseqs      int
	llCount    [36]uint32
	mlCount    [53]uint32
	lits       []byte
	nlits      int // of lits, which has room for a word more
	llt, mlt   fseTable
	huff       huff0.Scratch
	descriptor []byte
}

var strideScratches = sync.Pool{New: func() any { return new(strideScratch) }}

// minMatch is the shortest match zstd codes.
const minMatch = 3

// parse finds, value by value, the bytes of src[from:to] that equal those
// width bytes before them: a value's low bytes that match go on the match
// its predecessor's high bytes began, and its high bytes that match begin
// the next; bytes matching between differing ones are left to literals.
// Runs of fewer than minMatch bytes are literals too. A block's first
// byte is always a literal: the repeat offset needs literals before a
// match, and a match reaching the block's end may go on in the next.
// With first, parsing stops at the first match, and returns where the
// block ends then: after the value that match ends in. Values lie at
// multiples of width from the start of src, as blocks begin on them.
func (s *strideScratch) parse(src []byte, from, to, width int, first bool) int {
	if s.seqs == nil {
		// A sequence takes a literal and a match of 3 bytes at least.
		s.seqs = make([]sequence, maxBlockSize/(1+minMatch)+1)
	}
	s.nseqs = 0
	clear(s.llCount[:])
	clear(s.mlCount[:])
	if cap(s.lits) < maxBlockSize+8 {
		s.lits = make([]byte, maxBlockSize+8)
	}
	s.lits, s.nlits = s.lits[:cap(s.lits)], 0
	lit, match := from, -1 // the literals' start, the match's or -1
	p := max(from, width)
	for ; p+width <= to; p += width {
		var x uint64
		if width == 8 {
			x = binary.LittleEndian.Uint64(src[p:]) ^ binary.LittleEndian.Uint64(src[p-8:])
		} else {
			x = uint64(binary.LittleEndian.Uint32(src[p:]) ^ binary.LittleEndian.Uint32(src[p-4:]))
		}
		if x == 0 {
			if match < 0 {
				match = p
			}
			continue
		}
		// The value's bytes that match, from its low end and its high end.
		low, high := bits.TrailingZeros64(x)/8, bits.LeadingZeros64(x)/8-(8-width)
		if match < 0 && low > 0 {
			match = p
		}
		if match >= 0 {
			ok := s.emit(src, lit, match, p+low)
			match = -1
			if ok {
				lit = p + low
				if first {
					to = p + width
					break
				}
			}
		}
		if high > 0 {
			match = p + width - high
		}
	}
	if match >= 0 && s.emit(src, lit, match, min(p, to)) {
		lit = min(p, to)
	}
	s.appendLits(src[lit:to])
	return to
}

// emit adds the sequence of the literals from lit and the match from
// match to end, unless the match, starting a literal after lit at the
// earliest, is too short.
func (s *strideScratch) emit(src []byte, lit, match, end int) bool {
	match = max(match, lit+1)
	if end-match < minMatch {
		return false
	}
	ll, ml := uint32(match-lit), uint32(end-match)
	lc, mc := llCode(ll), mlCode(ml-minMatch)
	s.seqs[s.nseqs] = sequence{ll: ll, ml: ml, lc: lc, mc: mc}
	s.nseqs++
	s.llCount[lc]++
	s.mlCount[mc]++
	if ll <= 8 && lit+8 <= len(src) {
		// A value's few literals, by one store: lits has a word of room.
		binary.LittleEndian.PutUint64(s.lits[s.nlits:], binary.LittleEndian.Uint64(src[lit:]))
		s.nlits += int(ll)
	} else {
		s.appendLits(src[lit:match])
	}
	return true
}

func (s *strideScratch) appendLits(b []byte) { s.nlits += copy(s.lits[s.nlits:], b) }

// appendBlock appends the block of b from the parsed sequences and
// literals, and reports whether it holds sequences: compressed, or raw
// when that is no larger, unless it sets the repeat offset and fits
// window, the frame's largest block (libzstd before 1.5.4 refuses a
// compressed block of 128 KiB, which the format allows).
func (s *strideScratch) appendBlock(dst, b []byte, last bool, width int, setOffset bool, window int) ([]byte, bool, error) {
	if s.nseqs == 0 {
		dst, err := appendLiteralsBlock(dst, b, last, &s.huff)
		return dst, false, err
	}
	at := len(dst)
	dst = appendBlockHeader(dst, last, blockCompressed, 0)
	dst, _, err := appendLiteralsSection(dst, s.lits[:s.nlits], &s.huff)
	if err != nil {
		return nil, false, err
	}
	dst = s.appendSequences(dst, width, setOffset)
	content := len(dst) - at - blockHeaderSize
	if content >= len(b) && (!setOffset || content > window) {
		return append(appendBlockHeader(dst[:at], last, blockRaw, len(b)), b...), false, nil
	}
	appendBlockHeader(dst[:at], last, blockCompressed, content)
	return dst, true, nil
}

// The symbol compression modes of a sequences section.
const (
	modeRLE = 1
	modeFSE = 2
)

// lengthLog is the accuracy of the length codes' tables, the most zstd
// allows them. klauspost's decoder (parquet-go's, arrow-go's) reads a table
// description four bytes at a time and refuses one with fewer left in its
// block; at 9 bits a description takes two bytes at least and the table's
// final state two more, so that no block has fewer.
const lengthLog = 9

// appendSequences appends the sequences section (RFC 8878 3.1.1.3.2). The
// offset is one code for the whole block: the repeat offset, or, setting
// it, width itself.
func (s *strideScratch) appendSequences(dst []byte, width int, setOffset bool) []byte {
	seqs := s.seqs[:s.nseqs]
	n := len(seqs)
	switch {
	case n < 128:
		dst = append(dst, byte(n))
	case n < 0x7F00:
		dst = append(dst, byte(n>>8+0x80), byte(n))
	default:
		dst = append(dst, 0xFF, byte(n-0x7F00), byte((n-0x7F00)>>8))
	}
	// Offset_Value 1, with literals before the match, is the repeat
	// offset; a new offset o is o+3.
	ofCode, ofValue := byte(0), uint64(1)
	if setOffset {
		ofValue = uint64(width + 3)
		ofCode = byte(bits.Len64(ofValue) - 1)
	}
	// The modes, then the tables in the order literal lengths, offsets,
	// match lengths.
	s.descriptor = s.descriptor[:0]
	llMode := s.table(&s.llt, s.llCount[:], seqs[0].lc, n)
	s.descriptor = append(s.descriptor, ofCode)
	mlMode := s.table(&s.mlt, s.mlCount[:], seqs[0].mc, n)
	dst = append(dst, byte(llMode<<6|modeRLE<<4|mlMode<<2))
	dst = append(dst, s.descriptor...)

	// The last sequence is coded first: the decoder reads backwards. A
	// table of one symbol (RLE) codes it in no bits, from state 0.
	w := bitWriter{out: dst}
	last := n - 1
	var llState, mlState uint32
	if llMode == modeFSE {
		llState = s.llt.first(seqs[last].lc)
	}
	if mlMode == modeFSE {
		mlState = s.mlt.first(seqs[last].mc)
	}
	s.extraBits(&w, last, ofCode, ofValue)
	// From there on, two tables' transitions (the decoder updates lengths
	// first, offsets last, and offsets cost nothing) and the lengths'
	// extra bits, at most 18+32 bits a sequence.
	llt, mlt := &s.llt, &s.mlt
	if llMode != modeFSE {
		llt = &rleTable
	}
	if mlMode != modeFSE {
		mlt = &rleTable
	}
	acc, nb := w.acc, w.n
	out := w.out
	for i := last - 1; i >= 0; i-- {
		q := &seqs[i]
		k, next := mlt.step(mlState, q.mc)
		acc |= uint64(mlState&(1<<k-1)) << nb
		nb += uint(k)
		mlState = next
		k, next = llt.step(llState, q.lc)
		acc |= uint64(llState&(1<<k-1)) << nb
		nb += uint(k)
		llState = next
		if nb >= 32 {
			out = binary.LittleEndian.AppendUint32(out, uint32(acc))
			acc >>= 32
			nb -= 32
		}
		if q.lc >= 16 || q.mc >= 32 || setOffset {
			w.out, w.acc, w.n = out, acc, nb
			s.extraBits(&w, i, ofCode, ofValue)
			out, acc, nb = w.out, w.acc, w.n
		}
	}
	w.out, w.acc, w.n = out, acc, nb
	if mlMode == modeFSE {
		s.mlt.flush(&w, mlState)
	}
	if llMode == modeFSE {
		s.llt.flush(&w, llState)
	}
	return w.close()
}

// rleTable codes the one symbol of an RLE mode: in no bits, staying in
// state 0.
var rleTable = fseTable{
	sym:   make([]fseSymbol, 53),
	state: make([]uint16, 1),
}

// table builds the coding of a block's codes, of which count holds the
// histogram and one is the first, appending its description to
// s.descriptor: a single symbol is coded by RLE, in no bits.
func (s *strideScratch) table(t *fseTable, count []uint32, one byte, n int) int {
	if int(count[one]) == n {
		s.descriptor = append(s.descriptor, one)
		return modeRLE
	}
	t.build(count, n, lengthLog)
	s.descriptor = t.appendDescription(s.descriptor)
	return modeFSE
}

// extraBits writes sequence i's literal and match lengths beyond their
// codes' baselines, and its offset's bits: none for the repeat offset, and
// width+3 for width itself, which holds however many sequences set it.
func (s *strideScratch) extraBits(w *bitWriter, i int, ofCode byte, ofValue uint64) {
	q := s.seqs[i]
	ll, ml := q.lc, q.mc
	if ll >= 16 {
		w.add(uint64(q.ll-llBase[ll-16]), uint(llBits[ll-16]))
	}
	if ml >= 32 {
		w.add(uint64(q.ml-minMatch-mlBase[ml-32]), uint(mlBits[ml-32]))
	}
	w.add(ofValue, uint(ofCode))
}

// The literal length codes from 16 on: their baselines and extra bits
// (RFC 8878 3.1.1.3.2.1.1); below 16, a code is the length.
var (
	llBase = [...]uint32{16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
	llBits = [...]uint8{1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

// The match length codes from 32 on, of the length less minMatch; below
// 32, a code is that length.
var (
	mlBase = [...]uint32{32, 34, 36, 38, 40, 44, 48, 56, 64, 80, 96, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
	mlBits = [...]uint8{1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

func llCode(ll uint32) byte { return lengthCode(ll, 16, llBase[:]) }
func mlCode(ml uint32) byte { return lengthCode(ml, 32, mlBase[:]) }

// lengthCode is the code of length v: v itself below direct, else the
// last code whose baseline is at most v.
func lengthCode(v uint32, direct int, base []uint32) byte {
	if v < uint32(direct) {
		return byte(v)
	}
	c := len(base) - 1
	for base[c] > v {
		c--
	}
	return byte(direct + c)
}
