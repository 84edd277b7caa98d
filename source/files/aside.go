package files

import (
	"encoding/json"
	"errors"

	"github.com/floe-io/floe/internal/ingest"
)

var _ ingest.BadRecorder = (*filePart)(nil)

// lineAside is how a part sets a line it cannot read as a row aside
// (on-bad-record: dead-letter), or nil when bad lines fail the file.
func (p *filePart) lineAside() func(line int, raw []byte, err error) {
	if !p.deadLetters {
		return nil
	}
	return func(line int, raw []byte, err error) {
		p.asideMu.Lock()
		defer p.asideMu.Unlock()
		p.aside.Add(int64(line), ingest.BadRecord{File: p.entry.Path, Line: int64(line), Value: raw, Err: err.Error()})
	}
}

// lineSetAside reports whether a line was set aside by an earlier pass
// over the file.
func (p *filePart) lineSetAside(line int) bool {
	p.asideMu.Lock()
	defer p.asideMu.Unlock()
	return p.aside.Has(int64(line))
}

// BadRecords lists the lines set aside while the file was read.
func (p *filePart) BadRecords() []ingest.BadRecord {
	p.asideMu.Lock()
	defer p.asideMu.Unlock()
	return p.aside.List()
}

// asideLines wraps a per-line function of a pass over the file so that a
// line it fails is set aside and the pass goes on; with nil aside it is
// fn. Inferring, a line must be whole JSON before it is observed, or the
// keys a broken line reached would become columns.
func asideLines(aside func(int, []byte, error), inferring bool, fn func(line int, b []byte) error) func(line int, b []byte) error {
	if aside == nil {
		return fn
	}
	return func(line int, b []byte) error {
		if inferring && !json.Valid(b) {
			aside(line, b, errors.New("malformed JSON"))
			return nil
		}
		if err := fn(line, b); err != nil {
			aside(line, b, err)
		}
		return nil
	}
}
