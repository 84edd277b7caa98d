package pqgo

import (
	"bytes"
	"math/rand"
	"testing"
)

// A column's pages are compressed lean for 2^k-1 pages after its k-th
// incompressible page in a row, then fully again: a column that turns
// compressible is compressed fully at the latest 31 pages later, and every
// page decodes to its bytes.
func TestZstdColumnBacksOff(t *testing.T) {
	c, err := NewZstd(1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	random := make([]byte, 256<<10)
	r.Read(random)
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	text := make([]byte, 256<<10)
	for i := range text {
		text[i] = alnum[r.Intn(len(alnum))]
	}
	full := func(p []byte) []byte { return c.enc.EncodeAll(p, nil) }
	lean := func(p []byte) []byte { return c.lean.EncodeAll(p, nil) }
	if len(lean(text)) < len(text) || len(full(text)) > len(text)*4/5 {
		t.Fatalf("text: lean %d, full %d bytes of %d: the test needs a page only entropy coding shrinks", len(lean(text)), len(full(text)), len(text))
	}
	col := c.Column()
	steps := []struct {
		page []byte
		want func([]byte) []byte
	}{
		{random, full}, // 1st miss: one page lean
		{text, lean},
		{text, full}, // shrinks: misses reset
		{random, full},
		{random, lean},
		{random, full}, // 2nd miss in a row: three pages lean
		{text, lean}, {text, lean}, {text, lean},
		{text, full},
	}
	for i, s := range steps {
		got, err := col.Encode(nil, s.page)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, s.want(s.page)) {
			t.Fatalf("page %d: not compressed as expected (%d bytes)", i, len(got))
		}
		back, err := col.Decode(nil, got)
		if err != nil || !bytes.Equal(back, s.page) {
			t.Fatalf("page %d does not decode to its bytes: %v", i, err)
		}
	}
	// The streak is capped: 31 pages lean, however many misses came before.
	cc := col.(*zstdColumn)
	for range 1 << (leanAfter + 2) {
		if _, err := cc.Encode(nil, random); err != nil {
			t.Fatal(err)
		}
		if cc.lean > 1<<leanAfter-1 {
			t.Fatalf("%d pages to compress lean, over the cap of %d", cc.lean, 1<<leanAfter-1)
		}
	}
	if cc.misses != leanAfter {
		t.Fatalf("misses %d after many incompressible pages, want %d", cc.misses, leanAfter)
	}
}
