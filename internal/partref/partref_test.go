package partref_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/partref"
)

// The spec's appendix B ("32-bit Hash Requirements") lists these values.
func TestPartRefSpecHashVectors(t *testing.T) {
	t.Parallel()
	ts := time.Date(2017, 11, 16, 22, 31, 8, 0, time.UTC)
	tz := time.Date(2017, 11, 16, 14, 31, 8, 0, time.FixedZone("", -8*3600))
	cases := []struct {
		name string
		v    any
		want int32
	}{
		{"int 34", int32(34), 2017239379},
		{"long 34", int64(34), 2017239379},
		{"decimal 14.20", partref.Decimal{Unscaled: big.NewInt(1420), Scale: 2}, -500754589},
		{"date 2017-11-16", partref.Date(time.Date(2017, 11, 16, 0, 0, 0, 0, time.UTC)), -653330422},
		{"time 22:31:08", partref.TimeOfDay(22*time.Hour + 31*time.Minute + 8*time.Second), -662762989},
		{"timestamp 2017-11-16T22:31:08", ts, -2047944441},
		{"timestamptz 2017-11-16T14:31:08-08:00", tz, -2047944441},
		{"string iceberg", "iceberg", 1210000089},
		{"uuid", partref.UUID{0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7}, 1488055340},
		{"binary 00010203", []byte{0, 1, 2, 3}, -188683207},
	}
	for _, c := range cases {
		if got := partref.Hash(c.v); got != c.want {
			t.Errorf("Hash(%s) = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestPartRefTruncate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		w    int
		want any
	}{
		{int32(1), 10, int32(0)},
		{int32(-1), 10, int32(-10)},
		{int64(-1), 10, int64(-10)},
		{int64(10), 10, int64(10)},
		{"iceberg", 3, "ice"},
		{"héllo", 2, "hé"},
		{"ab", 4, "ab"},
	}
	for _, c := range cases {
		if got := partref.Truncate(c.v, c.w); got != c.want {
			t.Errorf("Truncate(%v, %d) = %v, want %v", c.v, c.w, got, c.want)
		}
	}
	// The spec's decimal example: 10.65 truncated to 50 is 10.50.
	d := partref.Truncate(partref.Decimal{Unscaled: big.NewInt(1065), Scale: 2}, 50).(partref.Decimal)
	if d.Unscaled.Int64() != 1050 {
		t.Errorf("Truncate(10.65, 50) = %v, want 1050 unscaled", d.Unscaled)
	}
}

func TestPartRefTime(t *testing.T) {
	t.Parallel()
	pre := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	if got := partref.Day(pre); got != -1 {
		t.Errorf("Day(%v) = %d, want -1", pre, got)
	}
	if got := partref.Hour(pre); got != -1 {
		t.Errorf("Hour(%v) = %d, want -1", pre, got)
	}
	if got := partref.Month(pre); got != -1 {
		t.Errorf("Month(%v) = %d, want -1", pre, got)
	}
	if got := partref.Year(pre); got != -1 {
		t.Errorf("Year(%v) = %d, want -1", pre, got)
	}
	d := partref.Date(time.Date(2017, 11, 16, 0, 0, 0, 0, time.UTC))
	if got := partref.Day(d); got != 17486 {
		t.Errorf("Day(2017-11-16) = %d, want 17486", got)
	}
	if got := partref.Month(d); got != 47*12+10 {
		t.Errorf("Month(2017-11-16) = %d, want %d", got, 47*12+10)
	}
}
