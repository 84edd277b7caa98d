package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/floe-io/floe/config"
)

// originError is an error of a pipeline translated from a Managed I/O
// config, reworded to name the file's keys; it unwraps to the error, so
// that its exit code is the error's.
type originError struct {
	msg string
	err error
}

func (e *originError) Error() string { return e.msg }
func (e *originError) Unwrap() error { return e.err }

// inFileKeys names, in err, the keys of the file cfg was translated from
// (from_snapshot, with its file and line) where err names the floe keys
// they became (source.options.start-snapshot-id): the user wrote the
// former and has never seen the latter.
func inFileKeys(err error, cfg *config.Pipeline) error {
	if err == nil || len(cfg.Origins) == 0 {
		return err
	}
	msg := err.Error()
	// Longer keys first, so that a key never replaces part of another.
	keys := slices.SortedFunc(maps.Keys(cfg.Origins), func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		msg = replaceKey(msg, k, cfg.Origins[k].String())
	}
	if msg == err.Error() {
		return err
	}
	return &originError{msg: msg, err: err}
}

// replaceKey replaces each whole occurrence of key in msg, with the flag
// that may follow it ("source.table (--source-table)"), by with.
func replaceKey(msg, key, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, key)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(key)
		if end < len(msg) && keyByte(msg[end]) || i > 0 && keyByte(msg[i-1]) {
			b.WriteString(msg[:end])
			msg = msg[end:]
			continue
		}
		if rest := msg[end:]; strings.HasPrefix(rest, " (--") {
			if j := strings.IndexByte(rest, ')'); j > 0 {
				end += j + 1
			}
		}
		b.WriteString(msg[:i])
		b.WriteString(with)
		msg = msg[end:]
	}
}

// keyByte reports whether c can be part of a config key.
func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
}
