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

// pages of three kinds: random bytes (nothing compresses them), random
// alphanumerics (only entropy coding does) and words (matches do most).
func testPages(size int) (random, alnum, words []byte) {
	r := rand.New(rand.NewSource(1))
	random = make([]byte, size)
	r.Read(random)
	const digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnum = make([]byte, size)
	for i := range alnum {
		alnum[i] = digits[r.Intn(len(digits))]
	}
	vocabulary := strings.Fields("status active pending closed region eu us ap id user order amount")
	for len(words) < size {
		words = append(words, vocabulary[r.Intn(len(vocabulary))]...)
		words = append(words, ' ')
	}
	return random, alnum, words[:size]
}

// A column's pages are coded by the full encoder until one shows a cheaper
// coding suits: lean after an incompressible page, literals alone after
// one they code within 1/16 of its size; 2^k-1 pages after the k-th such
// page in a row,
// the full encoder tries again. Literals alone, having lost k times in a
// row, are tried again 2^k-1 pages later. Every page decodes to its bytes.
//
// Pages of 256 KiB and more are tried on their first probeBytes, smaller
// ones whole: both choose alike.
func TestZstdColumnChoosesCoding(t *testing.T) {
	for _, size := range []int{2*probeBytes - 64<<10, 2 * probeBytes} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { checkChoosesCoding(t, size) })
	}
}

func checkChoosesCoding(t *testing.T, size int) {
	c, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	random, alnum, words := testPages(size)
	full := func(p []byte) []byte { return c.enc.EncodeAll(p, nil) }
	lean := func(p []byte) []byte { return c.lean.EncodeAll(p, nil) }
	literals := func(p []byte) []byte {
		out, err := appendLiterals(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The codings must tell apart on the pages they are checked on.
	if bytes.Equal(lean(alnum), full(alnum)) || bytes.Equal(literals(alnum), full(alnum)) ||
		len(literals(alnum)) > len(full(alnum))*17/16 || len(literals(words)) < len(full(words))*2 {
		t.Fatalf("alnum: full %d, lean %d, literals %d; words: full %d, literals %d bytes: the pages do not tell the codings apart",
			len(full(alnum)), len(lean(alnum)), len(literals(alnum)), len(full(words)), len(literals(words)))
	}
	col := c.Column(0)
	for i, s := range []struct {
		page []byte
		want func([]byte) []byte
	}{
		{random, full},     // incompressible: one page lean
		{alnum, lean},      //
		{alnum, literals},  // full tries, literals alone suit: one page so
		{alnum, literals},  //
		{alnum, literals},  // full tries, literals suit again: three pages so
		{alnum, literals},  //
		{alnum, literals},  //
		{alnum, literals},  //
		{words, full},      // full tries, literals lose: not tried on the next page
		{words, full},      //
		{words, full},      // literals lose again: not tried on the next three
		{alnum, full},      //
		{alnum, full},      //
		{alnum, full},      //
		{alnum, literals},  // tried, and suit
		{random, literals}, // the page left of the run
		{random, full},     // incompressible: lean starts over at one page
		{alnum, lean},      //
	} {
		got, err := col.Encode(nil, s.page)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, s.want(s.page)) {
			t.Fatalf("page %d: not coded as expected (%d bytes)", i, len(got))
		}
		back, err := col.Decode(nil, got)
		if err != nil || !bytes.Equal(back, s.page) {
			t.Fatalf("page %d does not decode to its bytes: %v", i, err)
		}
	}
	// The runs are capped: 31 pages, however many wins came before.
	cc := col.(*zstdColumn)
	for range 1 << (maxWins + 2) {
		if _, err := cc.Encode(nil, random); err != nil {
			t.Fatal(err)
		}
		if cc.left > 1<<maxWins-1 {
			t.Fatalf("%d pages to code cheaply, over the cap of %d", cc.left, 1<<maxWins-1)
		}
	}
	if cc.wins != maxWins {
		t.Fatalf("wins %d after many incompressible pages, want %d", cc.wins, maxWins)
	}
	// Above the fastest level, which trades size for speed, literals alone
	// are never chosen.
	c3, err := NewZstd(3)
	if err != nil {
		t.Fatal(err)
	}
	// Plain-encoded strings of 120 characters, each after its 4-byte
	// length: literals alone come within 1/16 of level 3.
	var plain []byte
	for i := 0; len(plain) < len(alnum)-200; i += 120 {
		plain = binary.LittleEndian.AppendUint32(plain, 120)
		plain = append(plain, alnum[i:i+120]...)
	}
	if l, f := literals(plain), c3.enc.EncodeAll(plain, nil); bytes.Equal(l, f) || len(l) > len(f)*17/16 {
		t.Fatalf("plain strings: literals %d bytes, level 3 %d: the page does not tell them apart", len(l), len(f))
	}
	col3 := c3.Column(0)
	for i := range 8 {
		got, err := col3.Encode(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		if want := c3.enc.EncodeAll(plain, nil); !bytes.Equal(got, want) {
			t.Fatalf("level 3, page %d: %d bytes, not the full encoder's %d", i, len(got), len(want))
		}
	}
}

// A frame of literals alone decodes to its content, in klauspost's
// decoder and in libzstd's (the zstd command, where installed), for every
// frame and block size the format distinguishes, and for content that
// codes raw (random), as one repeated byte (RLE) or Huffman-coded
// (alphanumerics); a frame larger than libzstd's default window limit of
// 128 MiB too.
func TestLiteralsFrameDecodes(t *testing.T) {
	c, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := exec.LookPath("zstd")
	random, alnum, _ := testPages(1<<20 + 7)
	same := bytes.Repeat([]byte{'x'}, len(alnum))
	for _, n := range []int{0, 1, 255, 256, 1023, 1024, 16383, 16384, 65791, 65792, 128 << 10, 128<<10 + 1, 1<<20 + 7} {
		for name, content := range map[string][]byte{"random": random, "alnum": alnum, "same": same} {
			t.Run(fmt.Sprintf("%s-%d", name, n), func(t *testing.T) {
				frame, err := appendLiterals([]byte("prefix"), content[:n])
				if err != nil {
					t.Fatal(err)
				}
				if string(frame[:6]) != "prefix" {
					t.Fatal("the frame did not append")
				}
				back, err := c.Decode(nil, frame[6:])
				if err != nil || !bytes.Equal(back, content[:n]) {
					t.Fatalf("decodes to %d bytes (%v), want %d", len(back), err, n)
				}
				if cli != "" {
					if back := zstdCommand(t, cli, frame[6:]); !bytes.Equal(back, content[:n]) {
						t.Fatalf("zstd -d gives %d bytes, want %d", len(back), n)
					}
				}
				if name == "alnum" && n >= 16384 && len(frame) > n*4/5 {
					t.Fatalf("alphanumerics coded to %d bytes of %d: not Huffman-coded", len(frame)-6, n)
				}
			})
		}
	}
	t.Run("over 128 MiB", func(t *testing.T) {
		if cli == "" {
			t.Skip("no zstd command to decode with libzstd")
		}
		big := bytes.Repeat([]byte{'y'}, 130<<20)
		frame, err := appendLiterals(nil, big)
		if err != nil {
			t.Fatal(err)
		}
		if back := zstdCommand(t, cli, frame); !bytes.Equal(back, big) {
			t.Fatalf("zstd -d gives %d bytes, want %d", len(back), len(big))
		}
	})
}

// zstdCommand decodes frame with the zstd command.
func zstdCommand(t *testing.T, cli string, frame []byte) []byte {
	t.Helper()
	cmd := exec.Command(cli, "-d", "-c", "-q")
	cmd.Stdin = bytes.NewReader(frame)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zstd -d: %v: %s", err, stderr.String())
	}
	return out
}

// A page of 256 KiB and more is tried on its first probeBytes alone: a
// page whose sample is alphanumerics and whose rest is words, which
// literals alone code worse than the full encoder, is coded by literals
// alone whole.
func TestZstdColumnTriesSample(t *testing.T) {
	c, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	_, alnum, words := testPages(probeBytes)
	page := append(append([]byte(nil), alnum...), words...)
	literals, err := appendLiterals(nil, page)
	if err != nil {
		t.Fatal(err)
	}
	if full := c.enc.EncodeAll(page, nil); len(literals) <= len(full)*17/16 {
		t.Fatalf("the page: literals %d bytes, full %d: literals alone would suit it whole", len(literals), len(full))
	}
	got, err := c.Column(0).Encode(nil, page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, literals) {
		t.Fatalf("coded to %d bytes, not as literals alone (%d)", len(got), len(literals))
	}
}
