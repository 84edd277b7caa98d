package config_test

import (
	"testing"

	"github.com/floe-io/floe/config"
)

// The values floe's writer accepts pass, spelled as Iceberg accepts them;
// properties the writer does not read are never checked.
func TestCheckTableProperty(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"write.format.default", "PARQUET", true},
		{"write.format.default", "avro", false},
		{"write.parquet.compression-codec", "ZSTD", true},
		{"write.parquet.compression-codec", "lz4_raw", true},
		{"write.parquet.compression-codec", "lzo", false},
		{"write.parquet.compression-level", "", true},
		{"write.parquet.compression-level", "-1", true},
		{"write.parquet.compression-level", "3.5", false},
		{"write.target-file-size-bytes", "1048576", true},
		{"write.target-file-size-bytes", "-1", false},
		{"write.max-open-files", "1e3", false},
		{"floe.write.parquet-encoder", "arrow", true},
		{"floe.write.parquet-encoder", "Arrow", false},
		{"write.metadata.metrics.default", " TRUNCATE(2) ", true},
		{"write.metadata.metrics.column.payload", "none", true},
		{"write.metadata.metrics.column.payload", "truncate(16", false},
		{"write.metadata.metrics.default", "truncate(-4)", false},
		{"commit.retry.num-retries", "anything", true},
		{"owner", "data-eng", true},
	} {
		if err := config.CheckTableProperty(c.key, c.value); (err == nil) != c.ok {
			t.Errorf("%s=%q: err %v, want ok %v", c.key, c.value, err, c.ok)
		}
	}
}
