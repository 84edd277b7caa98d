package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/config"
)

// The options of mode upsert are checked with the rest: without the mode
// they are refused, with a table template or format-version 1 the mode
// is, and every op a mapping names must be upsert or delete.
func TestValidateUpsert(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		sink  config.Sink
		paths []string
		text  string
	}{
		{"ok", config.Sink{Table: "db.t", Mode: "upsert", IdentifierFields: []string{"id"},
			Upsert: config.UpsertOptions{OrderBy: []string{"lsn"}}, CDC: config.CDCOptions{OpColumn: "op", Ops: map[string]string{"x": "delete"}}}, nil, ""},
		{"options without the mode", config.Sink{Table: "db.t", Mode: "append",
			Upsert: config.UpsertOptions{OrderBy: []string{"lsn"}}, CDC: config.CDCOptions{OpColumn: "op"}},
			[]string{"sink.upsert.order-by", "sink.cdc.op-column"}, "set mode: upsert"},
		{"template", config.Sink{Table: "db.t_{region}", Mode: "upsert"}, []string{"sink.mode"}, "table template"},
		{"format-version 1", config.Sink{Table: "db.t", Mode: "upsert", FormatVersion: 1}, []string{"sink.format-version"}, "format-version 1 cannot record"},
		{"bad op", config.Sink{Table: "db.t", Mode: "upsert", CDC: config.CDCOptions{OpColumn: "op", Ops: map[string]string{"x": "remove"}}},
			[]string{"sink.cdc.ops.x"}, `"remove" is not an operation`},
		{"op column is a key", config.Sink{Table: "db.t", Mode: "upsert", IdentifierFields: []string{"id", "op"}, CDC: config.CDCOptions{OpColumn: "op"}},
			[]string{"sink.cdc.op-column"}, "also a key column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &config.Pipeline{Source: config.Source{Path: "./l", Format: "csv"}, Sink: c.sink, Checkpoint: "./c"}
			err := p.Validate()
			if c.paths == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var cerr *config.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("Validate = %v, want *config.Error", err)
			}
			var paths []string
			for _, pr := range cerr.Problems {
				paths = append(paths, pr.Path)
			}
			if !slices.Equal(paths, c.paths) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("problems %q (%v), want %q mentioning %q", paths, err, c.paths, c.text)
			}
		})
	}
}
