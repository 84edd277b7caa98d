package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// codecs are the compression codecs of the data files' first column.
func (e *env) codecs(table string) map[compress.Compression]int {
	e.T.Helper()
	out := map[compress.Compression]int{}
	for _, f := range e.files(table) {
		rdr, err := file.OpenParquetFile(strings.TrimPrefix(f.Path, "file://"), false)
		if err != nil {
			e.T.Fatal(err)
		}
		cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil {
			e.T.Fatal(err)
		}
		out[cc.Compression()]++
		rdr.Close()
	}
	return out
}

// -p table-default.KEY gives way to a table property the pipeline names
// and -p table-override.KEY does not; an existing table whose property
// differs from an override is changed before floe writes to it, and the
// files written after follow it.
func TestTableDefaultAndOverrideFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK(e.StreamArgs("db.t", "-p", "table-default.custom.default=d", "-p", "table-default.custom.both=default",
		"-p", "table-override.custom.both=override", "-p", "table-override.custom.only=o")...)
	d := e.describe("db.t")
	for k, want := range map[string]string{"custom.default": "d", "custom.both": "override", "custom.only": "o"} {
		if d.Properties[k] != want {
			t.Errorf("created table: %s = %q, want %q (all: %v)", k, d.Properties[k], want, d.Properties)
		}
	}
	if c := e.codecs("db.t"); c[compress.Codecs.Zstd] != 1 || len(c) != 1 {
		t.Fatalf("first file's codecs %v, want zstd (the default)", c)
	}

	// The table exists: a default no longer applies, an override does.
	e.WriteIDs("b.parquet", 10, 10)
	r := e.OK(e.StreamArgs("db.t", "-p", "table-default.custom.default=changed",
		"-p", "table-override.write.parquet.compression-codec=snappy")...)
	if !strings.Contains(r.Stderr, "write.parquet.compression-codec") {
		t.Errorf("no warning names the property the override changed:\n%s", r.Stderr)
	}
	d = e.describe("db.t")
	if d.Properties["write.parquet.compression-codec"] != "snappy" || d.Properties["custom.default"] != "d" {
		t.Errorf("after the override: %v", d.Properties)
	}
	if c := e.codecs("db.t"); c[compress.Codecs.Zstd] != 1 || c[compress.Codecs.Snappy] != 1 {
		t.Fatalf("codecs %v, want the first file zstd and the second snappy", c)
	}
	if ids := e.IDs("db.t"); len(ids) != 20 {
		t.Fatalf("%d ids, want 20", len(ids))
	}
	// Run again with the override the table now holds: nothing to change.
	e.WriteIDs("c.parquet", 20, 10)
	r = e.OK(e.StreamArgs("db.t", "-p", "table-override.write.parquet.compression-codec=snappy")...)
	if strings.Contains(r.Stderr, "table-override") {
		t.Errorf("a warning for an override the table already holds:\n%s", r.Stderr)
	}
}

// A Managed I/O config's catalog_properties table-default.KEY and
// table-override.KEY reach the table floe creates, table_properties
// between them.
func TestTableDefaultAndOverrideManaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	cfg := `table: db.m
catalog_properties:
  type: jdbc
  uri: jdbc:sqlite:` + filepath.Join(e.Warehouse, "catalog.db") + `
  warehouse: ` + e.Warehouse + `
  table-default.write.parquet.compression-codec: snappy
  table-default.custom.both: default
  table-override.custom.both: override
  table-override.custom.pinned: catalog
table_properties:
  custom.both: table
  custom.pinned: table
`
	path := filepath.Join(e.Dir, "managed.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("run", path, "--source", e.Landing, "--format", "parquet", "--checkpoint", e.Ckpt)
	d := e.describe("db.m")
	for k, want := range map[string]string{"write.parquet.compression-codec": "snappy", "custom.both": "override", "custom.pinned": "catalog"} {
		if d.Properties[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, d.Properties[k], want, d.Properties)
		}
	}
	if c := e.codecs("db.m"); c[compress.Codecs.Snappy] != 1 {
		t.Fatalf("codecs %v, want one snappy file", c)
	}
}
