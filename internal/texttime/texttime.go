// Package texttime parses the dates and timestamps of text inputs (CSV
// cells, JSON strings) without time.Parse for the shapes nearly every
// writer produces — ISO 8601 / RFC 3339 with a 'T' or a space, optional
// fraction, and 'Z' or ±HH:MM — and hands every other shape to arrow-go's
// parser, so that what is accepted, rejected and how it reads is exactly
// arrow-go's. Parsing text timestamps was a quarter of a CSV ingest's CPU.
package texttime

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Text is what the parsers read: a cell is often a []byte of a larger
// buffer, and converting it to a string would copy it.
type Text interface{ ~string | ~[]byte }

// Timestamp parses s as arrow.TimestampFromStringInLocation(s, unit,
// time.UTC) does: a value without a zone is read as UTC; zoned reports
// whether s named one.
func Timestamp[T Text](s T, unit arrow.TimeUnit) (ts arrow.Timestamp, zoned bool, err error) {
	if v, zoned, ok := fastTimestamp(s, unit); ok {
		return arrow.Timestamp(v), zoned, nil
	}
	return arrow.TimestampFromStringInLocation(string(s), unit, time.UTC)
}

// Date parses s as time.Parse("2006-01-02", s) does, into days since the
// epoch.
func Date[T Text](s T) (arrow.Date32, error) {
	if len(s) == 10 {
		if days, ok := fastDate(s); ok {
			return arrow.Date32(days), nil
		}
	}
	t, err := time.Parse("2006-01-02", string(s))
	if err != nil {
		return 0, err
	}
	return arrow.Date32FromTime(t), nil
}

// Integer reports whether s is a base-10 integer, optionally signed: a
// timestamp column of a text file may hold epoch values, which readers
// take as the value itself, and a failed strconv.ParseInt allocates its
// error, where most timestamps are no integers.
func Integer[T Text](s T) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// fastTimestamp reads YYYY-MM-DD, optionally followed by [T ]HH:MM:SS, a
// fraction of at most the unit's digits and Z or ±HH:MM; ok is false for
// anything else, valid or not, which the slow path then decides.
func fastTimestamp[T Text](s T, unit arrow.TimeUnit) (v int64, zoned, ok bool) {
	n := len(s)
	if n < 10 {
		return 0, false, false
	}
	days, ok := fastDate(s[:10])
	if !ok {
		return 0, false, false
	}
	secs := days * 86400
	var frac int64 // in nanoseconds
	if n > 10 {
		if n < 19 || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
			return 0, false, false
		}
		h, ok1 := digits2(s[11], s[12])
		m, ok2 := digits2(s[14], s[15])
		sec, ok3 := digits2(s[17], s[18])
		if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
			return 0, false, false
		}
		secs += int64(h*3600 + m*60 + sec)
		i := 19
		if i < n && s[i] == '.' {
			i++
			start := i
			scale := int64(100_000_000)
			for i < n && s[i] >= '0' && s[i] <= '9' {
				frac += int64(s[i]-'0') * scale
				scale /= 10
				i++
			}
			d := i - start
			if d == 0 || d > maxFraction(unit) {
				return 0, false, false
			}
		}
		switch {
		case i == n:
		case i == n-1 && s[i] == 'Z':
			zoned = true
		case i == n-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
			oh, ok1 := digits2(s[i+1], s[i+2])
			om, ok2 := digits2(s[i+4], s[i+5])
			if !ok1 || !ok2 || oh > 23 || om > 59 {
				return 0, false, false
			}
			off := int64(oh*3600 + om*60)
			if s[i] == '+' {
				off = -off
			}
			secs += off
			zoned = true
		default:
			return 0, false, false
		}
	}
	switch unit {
	case arrow.Second:
		return secs, zoned, true
	case arrow.Millisecond:
		return secs*1_000 + frac/1_000_000, zoned, true
	case arrow.Microsecond:
		return secs*1_000_000 + frac/1_000, zoned, true
	default:
		// time.Time holds years 1–9999 in int64 nanoseconds only near
		// the epoch; leave the rest to arrow-go's overflow rules.
		if secs < -9_223_372_036 || secs > 9_223_372_035 {
			return 0, false, false
		}
		return secs*1_000_000_000 + frac, zoned, true
	}
}

// maxFraction is the most fraction digits arrow-go accepts for unit.
func maxFraction(unit arrow.TimeUnit) int {
	switch unit {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}

// fastDate reads exactly YYYY-MM-DD of a valid calendar date into days
// since 1970-01-01.
func fastDate[T Text](s T) (int64, bool) {
	if s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y1, ok1 := digits2(s[0], s[1])
	y2, ok2 := digits2(s[2], s[3])
	mo, ok3 := digits2(s[5], s[6])
	d, ok4 := digits2(s[8], s[9])
	if !ok1 || !ok2 || !ok3 || !ok4 || mo < 1 || mo > 12 || d < 1 {
		return 0, false
	}
	y := y1*100 + y2
	if d > daysIn(y, mo) {
		return 0, false
	}
	return daysFromCivil(y, mo, d), true
}

func digits2(a, b byte) (int, bool) {
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return 0, false
	}
	return int(a-'0')*10 + int(b-'0'), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the proleptic Gregorian day number of y-m-d relative to
// 1970-01-01 (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
