package config_test

import (
	"strings"
	"testing"

	"github.com/floe-io/floe/config"
)

func TestIcebergSourceConfig(t *testing.T) {
	t.Parallel()
	const base = "sink:\n  table: db.out\ncheckpoint: ./ck\n"
	p, err := config.Parse([]byte("source:\n  type: iceberg\n  table: db.in\n  options:\n    streaming-max-files-per-micro-batch: \"2\"\n" + base))
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Table != "db.in" || p.Source.Options["streaming-max-files-per-micro-batch"] != "2" {
		t.Fatalf("parsed %+v", p.Source)
	}
	for _, tc := range []struct{ src, want string }{
		{"  type: iceberg\n", "source.table: required"},
		{"  type: iceberg\n  table: db.in\n  path: ./landing\n", "source.path: set, but source.type is iceberg"},
		{"  type: iceberg\n  table: db.in\n  format: parquet\n", "source.format: set, but source.type is iceberg"},
		{"  type: iceberg\n  table: db.in\n  options:\n    streaming-max-files-per-micro-batch: \"x\"\n", "is not valid; use a positive whole number"},
		{"  type: iceberg\n  table: db.in\n  options:\n    streaming-skip-delete-snapshot: \"true\"\n", `did you mean "streaming-skip-delete-snapshots"`},
		{"  type: iceberg\n  table: db.in\n  max-bytes-per-trigger: 1000\n", "source.max-bytes-per-trigger: set, but source.type is iceberg"},
		{"  path: ./landing\n  format: parquet\n  table: db.in\n", `source.table: set, but source.type is "files"`},
		{"  type: files\n  table: db.in\n", "source.path: required"},
	} {
		_, err := config.Parse([]byte("source:\n" + tc.src + base))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("source:\n%s: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestIcebergSourcePipelineConfig covers settings outside source: that do
// not go with reading a table.
func TestIcebergSourcePipelineConfig(t *testing.T) {
	t.Parallel()
	const src = "source:\n  type: iceberg\n  table: db.in\ncheckpoint: ./ck\n"
	const limited = "source:\n  type: iceberg\n  table: db.in\n  options: {streaming-max-rows-per-micro-batch: \"10\"}\ncheckpoint: ./ck\n"
	for _, tc := range []struct{ doc, want string }{
		// Quarantine moves the bad file: here a data file of db.in.
		{src + "sink:\n  table: db.out\non-bad-file: quarantine\n", "on-bad-file: quarantine moves a bad input file aside"},
		// Each batch would read back what the one before appended.
		{src + "sink:\n  table: db.in\n", "sink.table: \"db.in\" is also source.table"},
		// Each complete-mode batch replaces the table with its slice.
		{src + "sink:\n  table: db.out\n  mode: complete\n", ""},
		{limited + "sink:\n  table: db.out\n  mode: complete\n",
			"cannot be combined with source.options.streaming-max-files-per-micro-batch or source.options.streaming-max-rows-per-micro-batch"},
	} {
		_, err := config.Parse([]byte(tc.doc))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}
