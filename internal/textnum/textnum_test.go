package textnum

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestFloatAsStrconv reads random doubles printed every way, random digit
// strings and malformed text: every value Float reads is strconv's, bit
// for bit, and it reads nearly all shortest-printed doubles.
func TestFloatAsStrconv(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	check := func(s string) bool {
		got, ok := Float(s)
		if !ok {
			return false
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Float(%q) = %v, strconv: %v, %v", s, got, want, err)
		}
		if gotB, _ := Float([]byte(s)); math.Float64bits(gotB) != math.Float64bits(got) {
			t.Fatalf("Float([]byte(%q)) = %v, the string %v", s, gotB, got)
		}
		return true
	}
	hits, unit := 0, 0
	for range 300000 {
		x := rnd.Float64()
		k := rnd.IntN(4)
		switch k {
		case 0:
			unit++
		case 1:
			x = rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(30)-15))
		case 2:
			x = float64(rnd.Int64N(1 << 60))
		}
		if check(strconv.FormatFloat(x, 'g', -1, 64)) && k == 0 {
			hits++
		}
		check(strconv.FormatFloat(x, 'f', rnd.IntN(25), 64))
		// Any double, subnormals and the largest included, printed
		// shortest and to fewer digits, which rounds to another.
		y := math.Float64frombits(rnd.Uint64())
		if !math.IsNaN(y) && !math.IsInf(y, 0) {
			check(strconv.FormatFloat(y, 'g', -1, 64))
			check(strconv.FormatFloat(y, 'e', rnd.IntN(19), 64))
		}
		var b strings.Builder
		if rnd.IntN(2) == 0 {
			b.WriteByte('-')
		}
		for range 1 + rnd.IntN(20) {
			b.WriteByte("0123456789"[rnd.IntN(10)])
		}
		if rnd.IntN(2) == 0 {
			b.WriteByte('.')
			for range rnd.IntN(24) {
				b.WriteByte("0123456789"[rnd.IntN(10)])
			}
		}
		if rnd.IntN(2) == 0 {
			fmt.Fprintf(&b, "e%d", rnd.IntN(800)-400)
		}
		check(b.String())
	}
	if hits < unit*99/100 {
		t.Errorf("Float read %d of %d shortest-printed doubles in [0, 1), want nearly all", hits, unit)
	}
	// Halfway between two doubles, 2^53+1 and the like: strconv's to round.
	for _, s := range []string{"9007199254740993", "9007199254740993e0", "1e23", "8.98846567431158e307", "1.7976931348623157e308",
		"1.7976931348623159e308", "4.9e-324", "2.2250738585072011e-308", "2.2250738585072014e-308", "1e-400", "1e400", "0e99999"} {
		check(s)
	}
	for _, s := range []string{"", "-", ".", "1.", ".5", "-.5", "1e", "1e+", "0x10", "1_000", "+1", "1.2.3", "NaN", "Inf", " 1", "1 ", "1e5x"} {
		if f, ok := Float(s); ok {
			if want, err := strconv.ParseFloat(s, 64); err != nil || want != f {
				t.Errorf("Float(%q) = %v, strconv: %v, %v", s, f, want, err)
			}
		}
	}
	if f, ok := Float("-0"); !ok || !math.Signbit(f) {
		t.Errorf("Float(-0) = %v, %v, want negative zero", f, ok)
	}
}

func BenchmarkFloat(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	vals := make([]string, 1024)
	for i := range vals {
		vals[i] = strconv.FormatFloat(rnd.Float64(), 'g', -1, 64)
	}
	b.Run("textnum", func(b *testing.B) {
		var sum float64
		for i := range b.N {
			f, ok := Float(vals[i&1023])
			if !ok {
				f, _ = strconv.ParseFloat(vals[i&1023], 64)
			}
			sum += f
		}
		_ = sum
	})
	b.Run("strconv", func(b *testing.B) {
		var sum float64
		for i := range b.N {
			f, _ := strconv.ParseFloat(vals[i&1023], 64)
			sum += f
		}
		_ = sum
	})
}
