package jsonrows

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestPlainASCII(t *testing.T) {
	naive := func(s []byte) bool {
		for _, ch := range s {
			if ch < 0x20 || ch == '\\' || ch >= utf8.RuneSelf {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(3, 4))
	special := []byte{0, 0x1f, 0x20, '\\', 0x5b, 0x5d, 0x7f, 0x80, 0xff, 'a'}
	for range 100_000 {
		s := make([]byte, r.IntN(40))
		for i := range s {
			s[i] = byte(0x20 + r.IntN(0x5f))
		}
		for range r.IntN(3) {
			if len(s) > 0 {
				s[r.IntN(len(s))] = special[r.IntN(len(special))]
			}
		}
		if got, want := plainASCII(s), naive(s); got != want {
			t.Fatalf("plainASCII(%q) = %v, want %v", s, got, want)
		}
	}
}
