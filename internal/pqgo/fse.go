package pqgo

import (
	"encoding/binary"
	"math/bits"
)

// The finite state entropy coding of zstd's sequences (RFC 8878 4.1),
// written for appendStride: klauspost's zstd keeps its coder internal, and
// its fse package codes a stream of its own format.

// bitWriter writes a bitstream that a zstd decoder reads backwards: bits
// go in from the lowest, and the stream ends with a 1 bit that marks
// where reading starts.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

// add writes the low n bits of v, n at most 32.
func (w *bitWriter) add(v uint64, n uint) {
	w.acc |= (v & (1<<n - 1)) << w.n
	w.n += n
	if w.n >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

func (w *bitWriter) close() []byte {
	w.add(1, 1)
	for ; w.n > 0; w.n -= min(w.n, 8) {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
	return w.out
}

// fseTable codes the symbols of one distribution, normalized to
// 1<<log states.
type fseTable struct {
	log   uint
	norm  []int16 // by symbol, summing to 1<<log
	state []uint16
	sym   []fseSymbol
}

// fseSymbol is how coding a symbol moves from one state to the next, as
// zstd's reference encoder keeps it.
type fseSymbol struct {
	deltaBits  uint32
	deltaState int32
}

// fseMinLog is the least accuracy zstd's table descriptions express.
const fseMinLog = 5

// build normalizes counts (by symbol, of total symbols in all) to 1<<log
// states, every symbol counted keeping at least one, and builds the coding
// tables. count must hold a symbol counted.
func (t *fseTable) build(count []uint32, total int, log uint) {
	last := len(count) - 1
	for count[last] == 0 {
		last--
	}
	t.log = log
	size := 1 << t.log
	t.norm = t.norm[:0]
	sum, largest := 0, 0
	for s, c := range count[:last+1] {
		n := 0
		if c > 0 {
			n = max(1, int(uint64(c)*uint64(size)/uint64(total)))
		}
		t.norm = append(t.norm, int16(n))
		sum += n
		if n > int(t.norm[largest]) {
			largest = s
		}
	}
	// Rounding leaves the sum off by a few states: the most probable symbol
	// takes up the difference, or gives it up a state at a time from the
	// largest counts should it be too small to.
	if d := size - sum; int(t.norm[largest])+d >= 1 {
		t.norm[largest] += int16(d)
	} else {
		for ; d < 0; d++ {
			big := 0
			for s, n := range t.norm {
				if n > t.norm[big] {
					big = s
				}
			}
			t.norm[big]--
		}
	}
	t.spread()
}

// spread places the symbols in the decoder's table as RFC 8878 4.1.1 does,
// and derives the encoder's transitions from it.
func (t *fseTable) spread() {
	size := 1 << t.log
	cells := make([]byte, size)
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, n := range t.norm {
		for range n {
			cells[pos] = byte(s)
			pos = (pos + step) & (size - 1)
		}
	}
	// The k-th cell of a symbol, counting up, is the state the encoder
	// moves to from that symbol's k-th range of states.
	start := make([]int, len(t.norm)+1)
	for s, n := range t.norm {
		start[s+1] = start[s] + int(n)
	}
	t.state = t.state[:0]
	t.state = append(t.state, make([]uint16, size)...)
	next := append([]int(nil), start[:len(t.norm)]...)
	for u, s := range cells {
		t.state[next[s]] = uint16(size + u)
		next[s]++
	}
	t.sym = t.sym[:0]
	for s, n := range t.norm {
		var y fseSymbol
		switch {
		case n == 0:
			y.deltaBits = uint32(t.log+1)<<16 - uint32(size)
		case n == 1:
			y.deltaBits = uint32(t.log)<<16 - uint32(size)
			y.deltaState = int32(start[s]) - 1
		default:
			out := t.log - uint(bits.Len(uint(n-1))-1)
			y.deltaBits = uint32(out)<<16 - uint32(n)<<out
			y.deltaState = int32(start[s]) - int32(n)
		}
		t.sym = append(t.sym, y)
	}
}

// first is the state after coding s, the first symbol coded (the last
// decoded), which writes no bits.
func (t *fseTable) first(s byte) uint32 {
	y := t.sym[s]
	out := (y.deltaBits + 1<<15) >> 16
	v := out<<16 - y.deltaBits
	return uint32(t.state[int32(v>>out)+y.deltaState])
}

// step codes s from state v: the low k bits of v go out, telling the
// decoder which of s's states it came from, and next is the state it moves
// to. The caller writes the bits, so that a loop keeps its bit buffer in
// registers.
func (t *fseTable) step(v uint32, s byte) (k, next uint32) {
	y := t.sym[s]
	k = (v + y.deltaBits) >> 16
	return k, uint32(t.state[int32(v>>k)+y.deltaState])
}

// flush writes the final state, which the decoder reads first.
func (t *fseTable) flush(w *bitWriter, v uint32) { w.add(uint64(v), t.log) }

// appendDescription appends the table's description (RFC 8878 4.1.1): its
// accuracy, then each probability in as few bits as the states left
// allow, with runs of zeros coded by their length.
func (t *fseTable) appendDescription(dst []byte) []byte {
	size := 1 << t.log
	acc, n := uint64(t.log-fseMinLog), uint(4)
	flush := func() {
		for n >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	remaining, threshold, nbits := size+1, size, t.log+1
	zeros := false
	for s := 0; s < len(t.norm) && remaining > 1; {
		if zeros {
			start := s
			for t.norm[s] == 0 {
				s++
			}
			for ; s >= start+24; start += 24 {
				acc |= 0xFFFF << n
				n += 16
				flush()
			}
			for ; s >= start+3; start += 3 {
				acc |= 3 << n
				n += 2
			}
			acc |= uint64(s-start) << n
			n += 2
			flush()
		}
		count := int(t.norm[s])
		s++
		most := 2*threshold - 1 - remaining
		remaining -= count
		count++
		if count >= threshold {
			count += most
		}
		acc |= uint64(count) << n
		n += nbits
		if count < most {
			n--
		}
		zeros = count == 1
		for remaining < threshold {
			nbits--
			threshold >>= 1
		}
		flush()
	}
	for ; n > 0; n -= min(n, 8) {
		dst = append(dst, byte(acc))
		acc >>= 8
	}
	return dst
}
