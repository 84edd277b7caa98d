package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"

	"github.com/floe-io/floe"
)

// logProgress writes progress as structured log lines (--log-format json):
// each batch is a line "batch" whose attributes are the progress record's
// fields, so that a log collector indexes them as they are.
type logProgress struct{ l *slog.Logger }

func (g *logProgress) progress(p floe.Progress) {
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	// Numbers stay as written: a snapshot id does not fit a float64.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var fields map[string]any
	if dec.Decode(&fields) != nil {
		return
	}
	attrs := make([]any, 0, len(fields))
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		attrs = append(attrs, slog.Any(k, fields[k]))
	}
	g.l.Info("batch", attrs...)
}

func (g *logProgress) warning(msg string) { g.l.Warn(msg) }
func (g *logProgress) info(msg string)    { g.l.Info(msg) }
func (g *logProgress) done(sum floe.Summary, table string) {
	g.l.Info("run finished", "batches", sum.Batches, "rows", sum.Rows, "snapshots", sum.Snapshots, "recovered", sum.Recovered, "table", table)
}
func (g *logProgress) failed() {}
