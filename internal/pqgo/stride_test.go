package pqgo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// strideValues makes n values of width bytes, each made by next from the
// one before, and extra bytes after them.
func strideValues(n, width, extra int, next func(r *rand.Rand, i int, prev uint64) uint64) []byte {
	r := rand.New(rand.NewSource(int64(n*width + extra)))
	var out []byte
	v := uint64(1) << 40
	for i := range n {
		v = next(r, i, v)
		if width == 8 {
			out = binary.LittleEndian.AppendUint64(out, v)
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	}
	for range extra {
		out = append(out, byte(r.Intn(256)))
	}
	return out
}

// The columns the stride coding is for and the pages that try its edges:
// runs of equal values (long matches, longer than a block), values that
// differ in any number of low bytes (literal and match lengths of every
// code, with extra bits), random values (no matches).
var strideColumns = []struct {
	name  string
	width int
	next  func(r *rand.Rand, i int, prev uint64) uint64
}{
	{"ids", 8, func(_ *rand.Rand, _ int, v uint64) uint64 { return v + 1 }},
	{"timestamps", 8, func(r *rand.Rand, _ int, v uint64) uint64 { return v + 1 + uint64(r.Intn(1999)) }},
	{"int32 ids", 4, func(_ *rand.Rand, _ int, v uint64) uint64 { return v + 1 }},
	{"constant", 8, func(_ *rand.Rand, _ int, v uint64) uint64 { return 0 }},
	{"random", 8, func(r *rand.Rand, _ int, _ uint64) uint64 { return r.Uint64() }},
	{"mixed", 8, mixedNext},
	// Random but for a value near the end of the first block, which shares
	// its high 3 bytes with the one before: the block would be larger
	// coded with that match than raw, or as large as a block may be.
	{"late first match", 8, lateMatch(maxBlockSize/8 - 1)},
	{"late first match at 16381", 8, lateMatch(16381)},
	{"mixed int32", 4, mixedNext},
}

func lateMatch(at int) func(r *rand.Rand, i int, v uint64) uint64 {
	return func(r *rand.Rand, i int, v uint64) uint64 {
		if i == at {
			return v ^ r.Uint64()&(1<<40-1)
		}
		return r.Uint64()
	}
}

func mixedNext(r *rand.Rand, _ int, v uint64) uint64 {
	switch x := r.Intn(10); {
	case x < 3:
		return v
	case x < 8:
		k := 1 + r.Intn(8)
		return v ^ r.Uint64()&(1<<(8*k)-1)
	}
	return r.Uint64()
}

// A stride frame decodes to its content, in klauspost's decoder and in
// libzstd's (the zstd command, where installed), for every frame and block
// size the format distinguishes, values of 4 and 8 bytes, and pages whose
// length is not a multiple of the width; no compressed block is of 128 KiB,
// which libzstd before 1.5.4 refuses; ids and timestamps code as small as
// the full encoder's frames, or within 1/16.
func TestStrideFrameDecodes(t *testing.T) {
	for _, col := range strideColumns {
		for _, size := range []int{0, 1, 8, 9, 16, 17, 24, 1000, 128<<10 - 8, 128 << 10, 128<<10 + 8, 1<<20 + 3} {
			n, extra := size/col.width, size%col.width
			page := strideValues(n, col.width, extra, col.next)
			t.Run(fmt.Sprintf("%s-%d", col.name, size), func(t *testing.T) {
				frame := checkStride(t, page, col.width)
				c, _ := NewZstd(1)
				if full := c.enc.EncodeAll(page, nil); size > 1<<20 && !strings.Contains(col.name, "random") && !strings.Contains(col.name, "late") && len(frame) > len(full)+len(full)/16 {
					t.Fatalf("%d bytes coded to %d, the full encoder's %d", size, len(frame), len(full))
				}
			})
		}
	}
	// Blocks whose last table and sequences take few bytes: klauspost's
	// decoder refuses a table description with fewer than 4 bytes after it
	// in its block. Ids with the last one repeated, past a first block;
	// and a page of 16 int32s.
	for _, width := range []int{4, 8} {
		for tail := 4; tail <= 64; tail++ {
			n := maxBlockSize/width + tail
			page := strideValues(n, width, 0, func(_ *rand.Rand, i int, v uint64) uint64 {
				if i == n-1 {
					return v
				}
				return uint64(1000 + i)
			})
			t.Run(fmt.Sprintf("ids then a repeat, width %d, %d values", width, n), func(t *testing.T) { checkStride(t, page, width) })
		}
	}
	page := strideValues(16, 4, 0, func(_ *rand.Rand, i int, v uint64) uint64 { return uint64(min(i+1, 15)) })
	t.Run("16 int32s", func(t *testing.T) { checkStride(t, page, 4) })
}

// checkStride codes page by stride after some bytes, checks the frame
// decodes to it in both decoders, and its blocks' sizes, and returns it.
func checkStride(t *testing.T, page []byte, width int) []byte {
	t.Helper()
	frame, err := appendStride([]byte("prefix"), page, width)
	if err != nil {
		t.Fatal(err)
	}
	if string(frame[:6]) != "prefix" {
		t.Fatal("the frame did not append")
	}
	frame = frame[6:]
	c, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := c.Decode(nil, frame)
	if err != nil || !bytes.Equal(back, page) {
		t.Fatalf("decodes to %d bytes (%v), want %d", len(back), err, len(page))
	}
	if cli, _ := exec.LookPath("zstd"); cli != "" {
		if back := zstdCommand(t, cli, frame); !bytes.Equal(back, page) {
			t.Fatalf("zstd -d gives %d bytes, want %d", len(back), len(page))
		}
	}
	// The frame header: magic, descriptor, window unless single segment,
	// content size; then blocks of a 3-byte header each.
	fhd := frame[4]
	single := int(fhd >> 5 & 1)
	at := 5 + 1 - single + []int{single, 2, 4, 8}[fhd>>6]
	for last := false; !last; {
		h := int(frame[at]) | int(frame[at+1])<<8 | int(frame[at+2])<<16
		last = h&1 == 1
		size := h >> 3
		if h>>1&3 == blockCompressed && size >= maxBlockSize {
			t.Fatalf("a compressed block of %d bytes", size)
		}
		if h>>1&3 == blockRLE {
			size = 1
		}
		at += 3 + size
	}
	if at != len(frame) {
		t.Fatalf("the blocks end at byte %d of the frame's %d", at, len(frame))
	}
	return frame
}

// A column of fixed width is coded by stride after a page it codes within
// 1/16 of the full encoder's size, as a column of strings is by literals
// alone; a column of strings, or a level above the fastest, never is.
func TestZstdColumnCodesStride(t *testing.T) {
	c1, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := NewZstd(3)
	if err != nil {
		t.Fatal(err)
	}
	ids := strideValues(64<<10, 8, 0, strideColumns[0].next)
	stride := func(p []byte) []byte {
		out, err := appendStride(nil, p, 8)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if s, f := stride(ids), c1.enc.EncodeAll(ids, nil); bytes.Equal(s, f) || len(s) > len(f)*17/16 {
		t.Fatalf("ids: stride %d bytes, full %d: the page does not tell them apart", len(s), len(f))
	}
	for _, tc := range []struct {
		name   string
		col    func() any
		stride bool
	}{
		{"int64 at level 1", func() any { return c1.Column(8) }, true},
		{"strings at level 1", func() any { return c1.Column(0) }, false},
		{"int64 at level 3", func() any { return c3.Column(8) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := tc.col().(*zstdColumn)
			strided := 0
			for i := range 8 {
				got, err := col.Encode(nil, ids)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(got, stride(ids)) {
					strided++
				}
				back, err := col.Decode(nil, got)
				if err != nil || !bytes.Equal(back, ids) {
					t.Fatalf("page %d does not decode to its bytes: %v", i, err)
				}
			}
			// The full encoder tries a sample of the first page and of the
			// third, stride codes every page whole.
			if want := map[bool]int{true: 8, false: 0}[tc.stride]; strided != want {
				t.Fatalf("%d of 8 pages coded by stride, want %d", strided, want)
			}
		})
	}
}

// BenchmarkStride compares the stride coding with the full encoder at
// level 1 on 1 MiB pages of ids and timestamps (1 ms apart, jittered, as
// the benchmarks' events5 has them): MB/s of page, and the coded size in
// percent of it.
func BenchmarkStride(b *testing.B) {
	c, err := NewZstd(1)
	if err != nil {
		b.Fatal(err)
	}
	pages := map[string][]byte{
		"ids":        strideValues(1<<17, 8, 0, strideColumns[0].next),
		"timestamps": strideValues(1<<17, 8, 0, func(r *rand.Rand, _ int, v uint64) uint64 { return v/1000*1000 + 1000 + uint64(r.Intn(1000)) }),
	}
	for _, name := range []string{"ids", "timestamps"} {
		page := pages[name]
		dst := make([]byte, 0, 2*len(page))
		for _, coder := range []struct {
			name string
			code func() []byte
		}{
			{"full", func() []byte { return c.enc.EncodeAll(page, dst[:0]) }},
			{"stride", func() []byte { out, _ := appendStride(dst[:0], page, 8); return out }},
		} {
			b.Run(name+"/"+coder.name, func(b *testing.B) {
				b.SetBytes(int64(len(page)))
				var n int
				for range b.N {
					n = len(coder.code())
				}
				b.ReportMetric(100*float64(n)/float64(len(page)), "%size")
			})
		}
	}
}

// FuzzStride checks that any page, at either width, codes to a frame that
// decodes to it.
func FuzzStride(f *testing.F) {
	for _, col := range strideColumns {
		f.Add(strideValues(300, col.width, 3, col.next), col.width == 8)
	}
	c, err := NewZstd(1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte, wide bool) {
		width := 4
		if wide {
			width = 8
		}
		frame, err := appendStride(nil, page, width)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(nil, frame)
		if err != nil || !bytes.Equal(back, page) {
			t.Fatalf("a page of %d bytes decodes to %d (%v)", len(page), len(back), err)
		}
	})
}
