package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
)

// The parsers take user input from files and flags, so beyond not panicking
// they must agree with their own String methods: whatever they accept
// prints back to text that parses to the same value.

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "1s", "7d", "1w", "1d12h", "1.5d", "-1h30m", "9223372036854775807ns", "1e3s", "µs", "1.", ".5s", "+", "99999999999999999999w", "0.0000000000000000000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := config.ParseDuration(s)
		if err != nil {
			return
		}
		back, err := config.ParseDuration(config.Duration(d).String())
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, which prints as %q and parses back to %v, %v", s, d, config.Duration(d).String(), back, err)
		}
		// Where Go's syntax applies, the result must be Go's.
		if want, err := time.ParseDuration(s); err == nil && want != d {
			t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration gives %v", s, d, want)
		}
	})
}

func FuzzParseTrigger(f *testing.F) {
	for _, s := range []string{"available-now", "once", "processing-time=1s", "1s", "processing-time", "processing-time=", "=", "-1s", "1d", " once"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := config.ParseTrigger(s)
		if err != nil {
			return
		}
		back, err := config.ParseTrigger(tr.String())
		if err != nil || back != tr {
			t.Fatalf("ParseTrigger(%q) = %+v, which prints as %q and parses back to %+v, %v", s, tr, tr.String(), back, err)
		}
	})
}

// FuzzParse only demands no panic: the walker reflects over arbitrary YAML
// trees, the likeliest place for one.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad", "managed"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("source: &a {path: *a}"))
	f.Add([]byte("<<: [1, {x: 1}]\nsource: {<<: 5}"))
	f.Add([]byte("pipeline: {transforms: [{type: ReadFromCsv, config: {path: 5}}, {type: WriteToIceberg, config: [1]}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := config.Parse(data)
		if err == nil {
			if p == nil {
				t.Fatal("nil Pipeline without an error")
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("Parse accepted a pipeline that Validate rejects: %v", err)
			}
		}
	})
}
