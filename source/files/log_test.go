package files

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The log folds entries into a compact file every compactEvery committed
// batches, reopens to the same state, and forgets uncommitted entries
// beyond the checkpoint's end.
func TestSourceLogCompaction(t *testing.T) {
	dir := t.TempDir()
	l, err := openLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	keepAll := func(fileEntry) bool { return true }
	for n := int64(0); n < 25; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10), Size: n, ModTime: n}}); err != nil {
			t.Fatal(err)
		}
		if err := l.compactThrough(n, keepAll); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) > compactEvery+1 {
		t.Fatalf("log holds %d files after 25 batches; compaction should bound it near %d", len(entries), compactEvery+1)
	}
	if _, err := os.Stat(filepath.Join(dir, "19.compact")); err != nil {
		t.Fatalf("no compact file at 19: %v", err)
	}
	re, err := openLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(re.seen) != 25 || re.last != 24 {
		t.Fatalf("reopened log: %d files seen, last %d; want 25 and 24", len(re.seen), re.last)
	}
	files, err := re.files(22, 24)
	if err != nil || len(files) != 2 || files[0].Path != "/in/f23" {
		t.Fatalf("files(22, 24) = %v, %v", files, err)
	}
	if err := re.add(25, []fileEntry{{Path: "/in/orphan"}}); err != nil {
		t.Fatal(err)
	}
	if err := re.discardAfter(24); err != nil {
		t.Fatal(err)
	}
	if _, ok := re.seen["/in/orphan"]; ok || re.last != 24 {
		t.Fatalf("orphan entry survived discardAfter: last %d", re.last)
	}
	if _, err := os.Stat(filepath.Join(dir, "25")); !os.IsNotExist(err) {
		t.Fatalf("orphan entry file still on disk: %v", err)
	}
}

// max-file-age lets compaction forget files older than the window, which a
// listing ignores anyway: the log stays bounded under a steady stream.
func TestSourceLogCompactionDropsOldEntries(t *testing.T) {
	l, err := openLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(0); n < compactEvery; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10), ModTime: n * 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.compactThrough(compactEvery-1, func(f fileEntry) bool { return f.ModTime >= 5000 }); err != nil {
		t.Fatal(err)
	}
	if len(l.seen) != 5 {
		t.Fatalf("%d files remembered, want the 5 inside the age window", len(l.seen))
	}
}
