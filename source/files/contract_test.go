package files_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
	"github.com/floe-io/floe/source/sourcetest"
)

// landing is a landing directory the suite adds files to, one per Append.
type landing struct {
	cfg   config.Source
	write func(path string, first int64, n int) error
	ext   string
	seq   atomic.Int64
}

func (l *landing) Open(t *testing.T, stateDir string) source.Source {
	t.Helper()
	s, err := files.New(l.cfg, stateDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (l *landing) Append(t *testing.T, first int64, n int) {
	t.Helper()
	// Zero-padded names keep append order where files share a modification
	// time, as the listing then orders by path.
	name := fmt.Sprintf("part-%05d.%s", l.seq.Add(1), l.ext)
	if err := l.write(filepath.Join(l.cfg.Path, name), first, n); err != nil {
		t.Fatal(err)
	}
}

func TestContract(t *testing.T) {
	no := false
	variants := []struct {
		name  string
		cfg   config.Source
		ext   string
		write func(path string, first int64, n int) error
	}{
		{"parquet", config.Source{Format: "parquet"}, "parquet", func(p string, first int64, n int) error {
			return fixture.WriteIDFile(p, first, int64(n))
		}},
		{"csv", config.Source{Format: "csv"}, "csv", func(p string, first int64, n int) error {
			return fixture.Land(p, fixture.IDCSV(first, int64(n), ',', true))
		}},
		{"csv-headerless-schema", config.Source{Format: "csv", CSV: config.CSVOptions{Delimiter: "|", Header: &no},
			Schema: []config.Column{{Name: "id", Type: "long", Required: true}, {Name: "v", Type: "string"}}}, "txt",
			func(p string, first int64, n int) error {
				return fixture.Land(p, fixture.IDCSV(first, int64(n), '|', false))
			}},
		{"json", config.Source{Format: "json"}, "json", func(p string, first int64, n int) error {
			return fixture.Land(p, fixture.IDJSON(first, int64(n)))
		}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			sourcetest.Run(t, sourcetest.Harness{
				New: func(t *testing.T) sourcetest.Input {
					cfg := v.cfg
					cfg.Type, cfg.Path = "files", t.TempDir()
					return &landing{cfg: cfg, write: v.write, ext: v.ext}
				},
				Limits: sourcetest.Limits{MaxFiles: true, MaxBytes: true},
				Claims: sourcetest.Capabilities{Excluder: true, Discarder: true, BacklogReporter: true, MetricsReporter: true, Recorder: true, Aliased: true, SchemaAware: true},
			})
		})
	}
}
