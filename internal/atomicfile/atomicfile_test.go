package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/atomicfile"
)

// Write creates missing directories, replaces an existing file whole, and
// leaves no temporary file behind.
func TestWriteReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "state")
	for _, content := range []string{"first version, longer than the second", "second"} {
		if err := atomicfile.Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file: %v", len(entries), entries)
	}
}

// A write into a directory that cannot be created fails with the path.
func TestWriteFailsClearly(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Write(filepath.Join(blocker, "state"), []byte("x"))
	if err == nil {
		t.Fatal("write under a regular file succeeded")
	}
}
