package interop_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/pqgo"
)

// Pages that floe's zstd codes cheaply read the same in floe, icebird (its
// own zstd decoder) and DuckDB (libzstd): random strings, plain-encoded,
// whose pages are coded as literals alone at zstd's fastest level; ids,
// timestamps and 4-byte counters, whose pages are coded by matches with
// the value before alone; and random doubles, which do not compress and
// are coded lean.
func TestZstdCheapCodingsReadAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	const rows = 150_000 // payload and v fill several 1 MiB pages
	rng := rand.New(rand.NewPCG(3, 5))
	const digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	value := make([]byte, 40)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Float64Builder).Append(rng.Float64())
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1000 + rng.Int64N(1000)))
		b.Field(4).(*array.Int32Builder).Append(int32(i / 3))
		if i%97 == 5 {
			b.Field(2).AppendNull()
			continue
		}
		for j := range value {
			value[j] = digits[rng.IntN(len(digits))]
		}
		b.Field(2).(*array.StringBuilder).Append(string(value))
	}
	rec := b.NewRecordBatch()
	b.Release()
	err := fixture.WriteParquet(filepath.Join(e.Landing, "random.parquet"), rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.cheap",
		"--checkpoint", filepath.Join(e.Dir, "cheap.ckpt"), "--trigger", "available-now",
		"-p", "table-default.floe.write.copy-parquet-chunks=false")
	if st := e.checkTable("db.cheap"); st.Rows != rows {
		t.Fatalf("%d rows, want %d", st.Rows, rows)
	}
	for _, col := range []struct {
		name   string
		index  int
		coding func(*testing.T, []byte) bool
	}{
		{"payload", 2, literalsAlone},
		{"id", 0, strideCoded},
		{"ts", 3, strideCoded},
		{"n", 4, strideCoded},
	} {
		pages := 0
		for _, path := range dataFiles(t, e, "db.cheap") {
			pages += codedPages(t, path, col.index, col.coding)
		}
		if pages == 0 {
			t.Errorf("no page of %s is coded cheaply: the test reads no such page", col.name)
		}
	}
}

// codedPages counts the data pages of column col whose zstd frame coded
// tells.
func codedPages(t *testing.T, path string, col int, coded func(*testing.T, []byte) bool) int {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for g := range pf.NumRowGroups() {
		columnPages(t, pf, b, g, col, func(h *format.PageHeader, body []byte) {
			if h.Type != format.DictionaryPage && coded(t, body) {
				n++
			}
		})
	}
	return n
}

// columnPages calls page with the header and the compressed bytes of every
// page of column col in row group g of the Parquet file pf, whose bytes
// are b: a data page v2's levels, never compressed, left out.
func columnPages(t *testing.T, pf *file.Reader, b []byte, g, col int, page func(*format.PageHeader, []byte)) {
	t.Helper()
	cc, err := pf.MetaData().RowGroup(g).ColumnChunk(col)
	if err != nil {
		t.Fatal(err)
	}
	at := cc.DataPageOffset()
	if d := cc.DictionaryPageOffset(); d > 0 && d < at {
		at = d
	}
	for end := at + cc.TotalCompressedSize(); at < end; {
		r := new(thrift.CompactProtocol).NewReaderFromBytes(b[at:])
		var h format.PageHeader
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			t.Fatal(err)
		}
		body := b[at+int64(r.BytesRead()) : at+int64(r.BytesRead())+int64(h.CompressedPageSize)]
		if h.Type == format.DataPageV2 {
			v2 := h.DataPageHeaderV2.V
			body = body[v2.DefinitionLevelsByteLength+v2.RepetitionLevelsByteLength:]
		}
		page(&h, body)
		at += int64(r.BytesRead()) + int64(h.CompressedPageSize)
	}
}

// literalsAlone reads a zstd frame (RFC 8878) and reports whether it has
// several blocks, each of them compressed as literals coded with a
// Huffman tree of their own and zero sequences: floe's literals alone.
// zstd's encoder, finding no match, reuses the previous block's tree.
// The frame must decode.
func literalsAlone(t *testing.T, frame []byte) bool {
	t.Helper()
	pos := frameBlocks(t, frame)
	blocks := 0
	for last := false; !last; blocks++ {
		h := uint32(frame[pos]) | uint32(frame[pos+1])<<8 | uint32(frame[pos+2])<<16
		last = h&1 == 1
		typ, size := h>>1&3, int(h>>3)
		block := frame[pos+3 : pos+3+size]
		pos += 3 + size
		if typ != 2 || block[0]&3 != 2 { // compressed, literals with their tree
			return false
		}
		header, size := huffmanLiterals(block)
		rest := block[header+size:]
		if len(rest) != 1 || rest[0] != 0 {
			return false
		}
	}
	return blocks > 1
}

// frameBlocks checks that frame is a zstd frame that decodes, and returns
// where its first block starts.
func frameBlocks(t *testing.T, frame []byte) int {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if _, err := dec.DecodeAll(frame, nil); err != nil {
		t.Fatalf("a page does not decode: %v", err)
	}
	if binary.LittleEndian.Uint32(frame) != 0xFD2FB528 {
		t.Fatal("a page is not a zstd frame")
	}
	fhd := frame[4]
	single := fhd>>5&1 == 1
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += []int{0, 1, 2, 4}[fhd&3]  // dictionary id
	pos += []int{0, 2, 4, 8}[fhd>>6] // content size
	if fhd>>6 == 0 && single {
		pos++
	}
	return pos
}

// strideCoded reads a zstd frame and reports whether it is floe's coding
// by matches with the value before: its first block is compressed and
// holds one sequence, every length and offset code given by RLE (it sets
// the repeat offset the blocks after it use), and a block follows. zstd's
// encoder puts a page's matches in blocks of up to 128 KiB. The frame
// must decode.
func strideCoded(t *testing.T, frame []byte) bool {
	t.Helper()
	pos := frameBlocks(t, frame)
	h := uint32(frame[pos]) | uint32(frame[pos+1])<<8 | uint32(frame[pos+2])<<16
	if h&1 == 1 || h>>1&3 != 2 {
		return false // the only block, or not compressed
	}
	block := frame[pos+3 : pos+3+int(h>>3)]
	// The literals section: its header, then its bytes.
	typ, format := block[0]&3, block[0]>>2&3
	var header, size int
	switch {
	case typ < 2 && format&1 == 0:
		header, size = 1, int(block[0]>>3)
	case typ < 2 && format == 1:
		header, size = 2, int(block[0]>>4)|int(block[1])<<4
	case typ < 2:
		header, size = 3, int(block[0]>>4)|int(block[1])<<4|int(block[2])<<12
	default:
		header, size = huffmanLiterals(block)
	}
	if typ == 1 {
		size = 1
	}
	seqs := block[header+size:]
	// One sequence, then the modes: RLE for literal lengths, offsets and
	// match lengths.
	return len(seqs) > 2 && seqs[0] == 1 && seqs[1] == 1<<6|1<<4|1<<2
}

// huffmanLiterals reads the header of a block's Huffman-coded literals
// section: its length, and the size of the coded literals after it.
func huffmanLiterals(block []byte) (header, size int) {
	header, bits := 3, 10
	switch block[0] >> 2 & 3 {
	case 2:
		header, bits = 4, 14
	case 3:
		header, bits = 5, 18
	}
	var v uint64
	for i := range header {
		v |= uint64(block[i]) << (8 * i)
	}
	return header, int(v >> (4 + bits) & (1<<bits - 1))
}

// Every coding of floe's zstd codec (internal/pqgo), forced onto pages of
// every kind a column holds and of every size the format tells apart,
// decodes to exactly the page in klauspost's decoder, libzstd's, and the
// JVM's (aircompressor and zstd-jni, one-shot and as streams): the codings
// that floe's own code writes (literals alone, matches with the value
// before) and klauspost's encoder at the levels a table may set. The pages
// of the tables the other tests write go through the same decoders
// (checkPagesDecode).
func TestZstdCodingsDecodeInEveryDecoder(t *testing.T) {
	t.Parallel()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	var frames []zstdFrame
	add := func(c *pqgo.ZstdCodec, level int, coding pqgo.Coding, kind string, width int, page []byte) []byte {
		frame, err := c.EncodeAs(coding, nil, page, width)
		if err != nil {
			t.Fatalf("%v coding of %s: %v", coding, kind, err)
		}
		frames = append(frames, zstdFrame{name: fmt.Sprintf("%v (level %d) of %s, %d bytes", coding, level, kind, len(page)), frame: frame, content: page})
		return frame
	}
	levels := []int{1, 3, 7, 19} // zstd's fastest (floe's default), default, better and best in klauspost's
	codecs := map[int]*pqgo.ZstdCodec{}
	for _, level := range levels {
		c, err := pqgo.NewZstd(level)
		if err != nil {
			t.Fatal(err)
		}
		codecs[level] = c
	}
	var strided, literals int
	for _, k := range zstdPageKinds {
		// floe's own codings on sizes across the frame header's size
		// fields, the literals section's and the 128 KiB block, and on a
		// page of 1 MiB, as floe's pages are.
		for _, size := range []int{0, 1, 255, 256, 1023, 1024, 16384, 65792, 128<<10 - 8, 128 << 10, 128<<10 + 3, 1 << 20} {
			page := k.page(size)
			if k.width > 0 {
				if frame := add(codecs[1], 1, pqgo.CodingStride, k.name, k.width, page); size == 1<<20 && strideCoded(t, frame) {
					strided++
				}
			}
			if frame := add(codecs[1], 1, pqgo.CodingLiterals, k.name, k.width, page); size == 1<<20 && literalsAlone(t, frame) {
				literals++
			}
		}
		// klauspost's encoder, the upstream's code, on an empty page, a page
		// of one block and one of three, for time.
		for _, size := range []int{0, 1024, 300 << 10} {
			page := k.page(size)
			for _, level := range levels {
				add(codecs[level], level, pqgo.CodingFull, k.name, k.width, page)
				add(codecs[level], level, pqgo.CodingLean, k.name, k.width, page)
			}
		}
	}
	// A page larger than klauspost's window (8 MiB), whose frames are no
	// single segment: the window descriptor decides what decoders accept.
	ids, text := zstdPageKinds[0], zstdPageKinds[1]
	add(codecs[1], 1, pqgo.CodingStride, ids.name, ids.width, ids.page(9<<20+8))
	add(codecs[1], 1, pqgo.CodingFull, ids.name, ids.width, ids.page(9<<20+8))
	add(codecs[1], 1, pqgo.CodingLiterals, text.name, text.width, text.page(9<<20+5))
	if strided == 0 || literals == 0 {
		t.Fatalf("%d frames coded by stride, %d by literals alone as their detectors see them: the matrix does not hold floe's codings", strided, literals)
	}
	decoded := checkFramesDecode(t, frames)
	if t.Failed() {
		return
	}
	t.Logf("%d frames (of 1 MiB pages, %d coded by stride and %d by literals alone as their detectors see them) decode alike in %s", len(frames), strided, literals, decoderNames(decoded))
}

// zstdPageKinds are the pages the matrix codes: plain values of fixed
// width as floe's columns hold them, and pages of varying width.
var zstdPageKinds = []struct {
	name  string
	width int // of the values, 0 when they vary
	page  func(size int) []byte
}{
	{"int64 ids", 8, fixedPage(8, func(_ *rand.Rand, i int, _ uint64) uint64 { return uint64(1<<40 + i) })},
	{"plain strings", 0, stringsPage},
	{"int32 ids", 4, fixedPage(4, func(_ *rand.Rand, i int, _ uint64) uint64 { return uint64(i) })},
	{"timestamps", 8, fixedPage(8, func(r *rand.Rand, i int, _ uint64) uint64 {
		return uint64(1_700_000_000_000_000 + i*1000 + r.IntN(1000))
	})},
	{"random int64s", 8, fixedPage(8, func(r *rand.Rand, _ int, _ uint64) uint64 { return r.Uint64() })},
	{"random doubles", 8, fixedPage(8, func(r *rand.Rand, _ int, _ uint64) uint64 { return math.Float64bits(r.Float64()) })},
	{"a repeated value", 8, fixedPage(8, func(_ *rand.Rand, _ int, _ uint64) uint64 { return 42 })},
	// Values that repeat, change in any number of low bytes or not at all:
	// stride's lengths of every code, FSE-coded.
	{"mixed int64s", 8, fixedPage(8, mixedValue(8))},
	{"mixed int32s", 4, fixedPage(4, mixedValue(4))},
	{"small codes in any order", 4, fixedPage(4, func(r *rand.Rand, _ int, _ uint64) uint64 { return uint64(r.IntN(16)) })},
	{"random bytes", 0, func(size int) []byte {
		b := make([]byte, size)
		r := rand.New(rand.NewPCG(uint64(size), 7))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}},
	{"words", 0, func(size int) []byte {
		r := rand.New(rand.NewPCG(uint64(size), 11))
		vocabulary := strings.Fields("status active pending closed region eu us ap id user order amount")
		var b []byte
		for len(b) < size {
			b = append(append(b, vocabulary[r.IntN(len(vocabulary))]...), ' ')
		}
		return b[:size]
	}},
}

// fixedPage makes pages of plain values of width bytes, each made by next
// from the one before, and a few bytes after them when size is no
// multiple of width.
func fixedPage(width int, next func(r *rand.Rand, i int, prev uint64) uint64) func(int) []byte {
	return func(size int) []byte {
		r := rand.New(rand.NewPCG(uint64(size), uint64(width)))
		b := make([]byte, 0, size)
		var v uint64
		for i := 0; len(b)+width <= size; i++ {
			v = next(r, i, v)
			if width == 8 {
				b = binary.LittleEndian.AppendUint64(b, v)
			} else {
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			}
		}
		for len(b) < size {
			b = append(b, byte(r.Uint32()))
		}
		return b
	}
}

func mixedValue(width int) func(r *rand.Rand, _ int, v uint64) uint64 {
	return func(r *rand.Rand, _ int, v uint64) uint64 {
		switch x := r.IntN(10); {
		case x < 3:
			return v
		case x < 8:
			k := 1 + r.IntN(width)
			return v ^ r.Uint64()&(1<<(8*k)-1)
		}
		return r.Uint64()
	}
}

// stringsPage is a page of plain-encoded strings: each a 4-byte length,
// then 8 to 72 random alphanumerics.
func stringsPage(size int) []byte {
	const digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(uint64(size), 13))
	b := make([]byte, 0, size+80)
	for len(b) < size {
		n := 8 + r.IntN(65)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		for range n {
			b = append(b, digits[r.IntN(len(digits))])
		}
	}
	return b[:size]
}
