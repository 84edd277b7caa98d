package catalogs_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/ingest"
)

// FindMetadata follows version-hint.text, else takes the highest version.
func TestFindMetadata(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		files []string
		hint  string
		want  string
	}{
		{"numeric hint", []string{"v1.metadata.json", "v2.metadata.json", "v3.metadata.json"}, "2", "v2.metadata.json"},
		{"hint names a stem", []string{"00001-6a1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11.metadata.json"}, "00001-6a1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11", "00001-6a1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11.metadata.json"},
		{"gzip by hint", []string{"v1.gz.metadata.json", "v2.gz.metadata.json"}, "2", "v2.gz.metadata.json"},
		{"no hint: highest version, numerically", []string{"v9.metadata.json", "v10.metadata.json"}, "", "v10.metadata.json"},
		{"no hint: uuid names", []string{"00002-6a1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11.metadata.json", "00010-7b1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11.metadata.json"}, "", "00010-7b1c0c4e-3f57-4d87-9b1a-0c6f2f1c2a11.metadata.json"},
		{"stale hint falls back", []string{"v1.metadata.json", "v2.metadata.json"}, "7", "v2.metadata.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			md := filepath.Join(dir, "metadata")
			_ = os.MkdirAll(md, 0o755)
			for _, f := range append(c.files, "snap-1.avro") {
				_ = os.WriteFile(filepath.Join(md, f), []byte("{}"), 0o644)
			}
			if c.hint != "" {
				_ = os.WriteFile(filepath.Join(md, "version-hint.text"), []byte(c.hint+"\n"), 0o644)
			}
			got, err := catalogs.FindMetadata(dir)
			if err != nil || got != filepath.Join(md, c.want) {
				t.Fatalf("FindMetadata = %q, %v; want %s", got, err, c.want)
			}
			if got, err := catalogs.FindMetadata(md); err != nil || got != filepath.Join(md, c.want) {
				t.Fatalf("FindMetadata(metadata dir) = %q, %v", got, err)
			}
		})
	}
	if _, err := catalogs.FindMetadata(t.TempDir()); !errors.Is(err, catalogs.ErrNoMetadata) {
		t.Fatalf("empty directory: %v, want ErrNoMetadata", err)
	}
}

func TestParsePathPrefix(t *testing.T) {
	t.Parallel()
	if p, err := catalogs.ParsePathPrefix("s3a://b/t=/data/t"); err != nil || p.From != "s3a://b/t" || p.To != "/data/t" {
		t.Fatalf("ParsePathPrefix = %+v, %v", p, err)
	}
	for _, bad := range []string{"nothing", "=/to"} {
		if _, err := catalogs.ParsePathPrefix(bad); !errors.Is(err, ingest.ErrConfig) {
			t.Errorf("ParsePathPrefix(%q) = %v, want ErrConfig", bad, err)
		}
	}
}

func TestIsTablePath(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"db.events": false, "db.json": false, "a.b.parquet": false,
		"./events": true, "/data/t": true, "v3.metadata.json": true, "00001-x.metadata.json.gz": true,
	} {
		if got := catalogs.IsTablePath(s); got != want {
			t.Errorf("IsTablePath(%q) = %v, want %v", s, got, want)
		}
	}
}
