package config_test

import (
	"testing"

	"github.com/floe-io/floe/config"
)

func TestClosest(t *testing.T) {
	for _, c := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"maxFilesPerTrigger", []string{"max-bytes-per-trigger", "max-files-per-trigger"}, "max-files-per-trigger"},
		{"checkpiont", []string{"checkpoint", "catalog"}, "checkpoint"},
		{"max-file", []string{"max-file-age", "mode"}, "max-file-age"},
		// Letters left out: the word is a subsequence of one at most twice as long.
		{"jsn", []string{"table", "csv", "jsonl", "parquet"}, "jsonl"},
		{"prqt", []string{"table", "csv", "jsonl", "parquet"}, "parquet"},
		// A close typo ranks before letters left out.
		{"chckpoint", []string{"checkpoint-interval", "checkpoint"}, "checkpoint"},
		{"js", []string{"jsonl"}, ""},
		{"xml", []string{"table", "csv", "jsonl", "parquet"}, ""},
		{"snt", []string{"snapshot-property-with-a-long-name"}, ""},
	} {
		if got := config.Closest(c.word, c.candidates); got != c.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", c.word, c.candidates, got, c.want)
		}
	}
}
