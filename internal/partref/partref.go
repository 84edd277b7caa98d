// Package partref computes Iceberg partition values one Go value at a time,
// straight from the spec's definitions (https://iceberg.apache.org/spec/#partition-transforms).
// It is deliberately slow and independent of iceberg-go and floe, so that
// tests can check the vectorised partitioner against it.
package partref

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
	"unicode/utf8"
)

// Date is a calendar date; only its year, month and day count.
type Date time.Time

// TimeOfDay is a time without date, as a duration since midnight.
type TimeOfDay time.Duration

// Decimal is an unscaled integer with a scale: Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// UUID is a UUID in its 16-byte big-endian form.
type UUID [16]byte

// Murmur3 is murmur3_x86_32 with seed 0, the spec's bucket hash.
func Murmur3(data []byte) int32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	n := len(data) / 4
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint32(data[4*i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	tail := data[4*n:]
	var k uint32
	switch len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

func hashLong(v int64) int32 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return Murmur3(b[:])
}

// Hash is the spec's 32-bit hash of a value: int32, int64, Date,
// TimeOfDay, time.Time (timestamp), string, []byte, UUID or Decimal.
func Hash(v any) int32 {
	switch v := v.(type) {
	case int32:
		return hashLong(int64(v))
	case int64:
		return hashLong(v)
	case Date:
		return hashLong(int64(days(time.Time(v))))
	case TimeOfDay:
		return hashLong(time.Duration(v).Microseconds())
	case time.Time:
		return hashLong(v.UnixMicro())
	case string:
		return Murmur3([]byte(v))
	case []byte:
		return Murmur3(v)
	case UUID:
		return Murmur3(v[:])
	case Decimal:
		return Murmur3(minimalTwosComplement(v.Unscaled))
	}
	panic(fmt.Sprintf("partref: cannot hash %T", v))
}

// minimalTwosComplement is the shortest big-endian two's-complement
// encoding of x, as Java's BigInteger.toByteArray produces.
func minimalTwosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// For negative x, two's complement of n bytes is 2^(8n) + x; find the
	// smallest n whose top bit is set.
	for n := 1; ; n++ {
		m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		m.Add(m, x)
		if m.Sign() < 0 {
			continue
		}
		b := m.FillBytes(make([]byte, n))
		if b[0]&0x80 != 0 {
			return b
		}
	}
}

// Bucket is bucket[n]: (hash & Integer.MAX_VALUE) % n.
func Bucket(v any, n int) int32 {
	return (Hash(v) & math.MaxInt32) % int32(n)
}

// Truncate is truncate[w] for int32, int64 (floor towards negative
// infinity), string (w code points), []byte (w bytes) and Decimal.
func Truncate(v any, w int) any {
	switch v := v.(type) {
	case int32:
		return v - (((v % int32(w)) + int32(w)) % int32(w))
	case int64:
		return v - (((v % int64(w)) + int64(w)) % int64(w))
	case string:
		if utf8.RuneCountInString(v) <= w {
			return v
		}
		return string([]rune(v)[:w])
	case []byte:
		if len(v) <= w {
			return v
		}
		return v[:w]
	case Decimal:
		bw := big.NewInt(int64(w))
		r := new(big.Int).Mod(v.Unscaled, bw) // Euclidean: 0 <= r < w
		return Decimal{Unscaled: new(big.Int).Sub(v.Unscaled, r), Scale: v.Scale}
	}
	panic(fmt.Sprintf("partref: cannot truncate %T", v))
}

// Identity returns v unchanged.
func Identity(v any) any { return v }

func toTime(v any) time.Time {
	switch v := v.(type) {
	case Date:
		t := time.Time(v)
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case time.Time:
		return v.UTC()
	}
	panic(fmt.Sprintf("partref: %T is not a date or timestamp", v))
}

func days(t time.Time) int32 {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return int32(d.Sub(time.Unix(0, 0).UTC()) / (24 * time.Hour))
}

// Year is the number of years from 1970 of a Date or timestamp.
func Year(v any) int32 { return int32(toTime(v).Year() - 1970) }

// Month is the number of months from 1970-01 of a Date or timestamp.
func Month(v any) int32 {
	t := toTime(v)
	return int32((t.Year()-1970)*12 + int(t.Month()) - 1)
}

// Day is the number of days from 1970-01-01 of a Date or timestamp.
func Day(v any) int32 { return days(toTime(v)) }

// Hour is the number of hours from 1970-01-01T00:00 of a timestamp.
func Hour(v any) int32 {
	t, ok := v.(time.Time)
	if !ok {
		panic(fmt.Sprintf("partref: hour of %T", v))
	}
	us := t.UnixMicro()
	const perHour = int64(time.Hour / time.Microsecond)
	h := us / perHour
	if us%perHour < 0 {
		h--
	}
	return int32(h)
}
