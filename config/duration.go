package config

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that also reads day and week units, because
// file retention windows are naturally written in days ("7d", as Spark's
// maxFileAge is) and Go's own syntax stops at hours.
type Duration time.Duration

// UnmarshalYAML reads a duration string. It reports a *yaml.TypeError rather
// than a plain error so that yaml.v3 keeps decoding the rest of the document
// and a caller decoding the struct directly still sees every problem.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := durationFromNode(n)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the canonical spelling so that a marshalled pipeline
// reads back to the same value.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// String gives the shortest spelling ParseDuration reads back, e.g. "7d" or
// "1h30m" rather than time.Duration's "168h0m0s".
func (d Duration) String() string { return formatDuration(time.Duration(d)) }

// durationFromNode is shared by UnmarshalYAML and the diagnostic walker so
// both report the same message for the same input.
func durationFromNode(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("cannot use %s as a duration; write a string such as \"30s\", \"15m\" or \"7d\"", describeKind(n))
	}
	return ParseDuration(n.Value)
}

// durationUnits lists what ParseDuration accepts, longest-first where one
// unit is a prefix of another so the scanner never splits "ms" into "m" "s".
var durationUnits = []struct {
	name string
	unit time.Duration
}{
	{"ns", time.Nanosecond},
	{"us", time.Microsecond},
	{"µs", time.Microsecond}, // U+00B5 micro sign, as time.ParseDuration
	{"μs", time.Microsecond}, // U+03BC Greek mu, as time.ParseDuration
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
	{"d", 24 * time.Hour},
	{"w", 7 * 24 * time.Hour},
}

// ParseDuration parses Go duration syntax ("1h30m", "250ms") extended with
// d (24h) and w (7d) units ("7d", "1d12h", "1.5d"). Days are fixed 24-hour
// spans, not calendar days: file ages are measured against modification
// times, where daylight-saving shifts have no meaning. A bare "0" is
// accepted; any other number needs a unit, since "10" could mean seconds or
// days and guessing wrong silently drops or keeps files.
//
// The algorithm is time.ParseDuration's, digit for digit, so that every
// string Go accepts gives exactly Go's value (a fuzz test holds it to
// that); only the unit table and the messages differ.
func ParseDuration(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration; write e.g. \"30s\", \"15m\" or \"7d\"")
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("invalid duration %q: a sign needs a number after it, e.g. \"30s\"", orig)
	}
	var d uint64
	for s != "" {
		// The integer part, exact.
		i := 0
		var v uint64
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if v > 1<<63/10 {
				return 0, overflow(orig)
			}
			v = v*10 + uint64(s[i]-'0')
			if v > 1<<63 {
				return 0, overflow(orig)
			}
		}
		pre := i > 0
		s = s[i:]
		// The fraction: digits past what fits in f are consumed but,
		// as in Go, cannot change the result.
		var f uint64
		scale := 1.0
		post := false
		if s != "" && s[0] == '.' {
			s = s[1:]
			i, overflowed := 0, false
			for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
				if overflowed {
					continue
				}
				if f > (1<<63-1)/10 {
					overflowed = true
					continue
				}
				y := f*10 + uint64(s[i]-'0')
				if y > 1<<63 {
					overflowed = true
					continue
				}
				f = y
				scale *= 10
			}
			post = i > 0
			s = s[i:]
		}
		if !pre && !post {
			return 0, fmt.Errorf("invalid duration %q: expected a number, e.g. \"30s\", \"15m\" or \"7d\"", orig)
		}
		i = 0
		for i < len(s) && s[i] != '.' && (s[i] < '0' || s[i] > '9') {
			i++
		}
		name := s[:i]
		s = s[i:]
		if name == "" {
			return 0, fmt.Errorf("missing unit in duration %q; add one of ns, us, ms, s, m, h, d, w (e.g. %q)", orig, strings.TrimSpace(orig)+"s")
		}
		var unit uint64
		for _, u := range durationUnits {
			if u.name == name {
				unit = uint64(u.unit)
				break
			}
		}
		if unit == 0 {
			return 0, fmt.Errorf("unknown unit %q in duration %q; use ns, us, ms, s, m, h, d or w", name, orig)
		}
		if v > 1<<63/unit {
			return 0, overflow(orig)
		}
		v *= unit
		if f > 0 {
			// float64 keeps this nanosecond-exact: f/scale < 1, and even
			// a week's nanoseconds are far below 2^53.
			v += uint64(float64(f) * (float64(unit) / scale))
			if v > 1<<63 {
				return 0, overflow(orig)
			}
		}
		d += v
		if d > 1<<63 {
			return 0, overflow(orig)
		}
	}
	if neg {
		return -time.Duration(d), nil
	}
	if d > 1<<63-1 {
		return 0, overflow(orig)
	}
	return time.Duration(d), nil
}

func overflow(s string) error {
	return fmt.Errorf("duration %q is too large; the limit is about 292 years", s)
}

// formatDuration is the inverse of ParseDuration: whole days are written as
// "d" because that is how retention is usually thought of, and the trailing
// "0s"/"0m" noise of time.Duration.String is dropped.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d < 0 {
		if d == math.MinInt64 {
			// -d would overflow; time.Duration's spelling parses back.
			return d.String()
		}
		return "-" + formatDuration(-d)
	}
	const day = 24 * time.Hour
	var b strings.Builder
	if days := d / day; days > 0 {
		fmt.Fprintf(&b, "%dd", days)
		d -= days * day
	}
	if d == 0 {
		return b.String()
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s") // "1h30m0s" -> "1h30m"
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m") // "1h0m" -> "1h"
	}
	b.WriteString(s)
	return b.String()
}
