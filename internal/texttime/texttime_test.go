package texttime

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

var units = []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond}

// agree checks s against arrow-go's parser, the definition of right.
func agree(t *testing.T, s string) {
	t.Helper()
	for _, u := range units {
		want, wantZoned, wantErr := arrow.TimestampFromStringInLocation(s, u, time.UTC)
		got, zoned, err := Timestamp([]byte(s), u)
		if (err != nil) != (wantErr != nil) || (err == nil && (got != want || zoned != wantZoned)) {
			t.Fatalf("Timestamp(%q, %s) = %d, %v, %v; arrow-go: %d, %v, %v", s, u, got, zoned, err, want, wantZoned, wantErr)
		}
	}
	wantT, wantErr := time.Parse("2006-01-02", s)
	got, err := Date(s)
	if (err != nil) != (wantErr != nil) || (err == nil && got != arrow.Date32FromTime(wantT)) {
		t.Fatalf("Date(%q) = %d, %v; time.Parse: %v, %v", s, got, err, wantT, wantErr)
	}
}

func TestAgreesWithArrow(t *testing.T) {
	for _, s := range []string{
		"", "2024", "2024-01-01", "2024-02-29", "2023-02-29", "2024-13-01", "2024-00-10", "2024-04-31",
		"0000-01-01", "0001-01-01T00:00:00", "9999-12-31T23:59:59.999999999", "1969-12-31T23:59:59.5",
		"1900-03-01 12:30:45.123", "2024-06-01T24:00:00", "2024-06-01T23:60:00", "2024-06-01T23:00:60",
		"2024-06-01T10:11:12Z", "2024-06-01T10:11:12.1234567Z", "2024-06-01T10:11:12+02:00",
		"2024-06-01T10:11:12-11:30", "2024-06-01T10:11:12+0200", "2024-06-01T10:11:12+02",
		"2024-06-01T10:11:12+02:00:30", "2024-06-01T10", "2024-06-01T10:11", "2024-06-01t10:11:12",
		"2024-06-01T10:11:12.", "2024-06-01T10:11:12.Z", "2024-06-01T10:11:12,5", "2024-06-01T1a:11:12",
		"2024-06-01T10:11:12+25:00", "2024-06-01T10:11:12+02:61", "1677-09-21T00:12:43.145224192",
		"2262-04-11T23:47:16.854775807", "2262-04-11T23:47:16.854775808", "1600-02-29", "1700-02-29",
		"2024-06-01 ", "2024-06-01T10:11:12 ", " 2024-06-01", "+024-06-01", "2024/06/01",
	} {
		agree(t, s)
	}
}

func TestAgreesWithArrowRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789-:T .Z+"
	for range 200_000 {
		// Mostly well-formed values with one position disturbed, so
		// that both paths and every check are reached.
		y, mo, d := r.IntN(10000), 1+r.IntN(12), 1+r.IntN(31)
		b := []byte(fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%09d", y, mo, d, r.IntN(25), r.IntN(61), r.IntN(61), r.IntN(1e9)))
		b = b[:10+r.IntN(len(b)-9)]
		switch r.IntN(4) {
		case 0:
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		case 1:
			b = append(b, 'Z')
		case 2:
			b = append(b, []byte(fmt.Sprintf("%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(25), r.IntN(61)))...)
		}
		agree(t, string(b))
	}
}

func FuzzTimestamp(f *testing.F) {
	f.Add("2024-06-01T10:11:12.123456+02:00")
	f.Add("2024-02-29 00:00:00Z")
	f.Fuzz(func(t *testing.T, s string) { agree(t, s) })
}

func BenchmarkTimestamp(b *testing.B) {
	v := []byte("2024-06-01T10:11:12.123456")
	b.Run("texttime", func(b *testing.B) {
		for range b.N {
			if _, _, err := Timestamp(v, arrow.Microsecond); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("arrow-go", func(b *testing.B) {
		for range b.N {
			if _, _, err := arrow.TimestampFromStringInLocation(string(v), arrow.Microsecond, time.UTC); err != nil {
				b.Fatal(err)
			}
		}
	})
}
