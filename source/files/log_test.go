package files

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/source"
)

// The log folds entries into a compact file every compactEvery committed
// batches, reopens to the same state, and forgets uncommitted entries
// beyond the checkpoint's end.
func TestSourceLogCompaction(t *testing.T) {
	dir := t.TempDir()
	l, err := openLog(source.OSFS, dir)
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
	re, err := openLog(source.OSFS, dir)
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
	l, err := openLog(source.OSFS, t.TempDir())
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

// add records a batch durably with its id on every entry; rewrite replaces
// an uncommitted batch (what Exclude does); discardAfter forgets batches
// beyond the checkpoint's end, on disk and in what was seen.
func TestSourceLogAddRewriteDiscard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := openLog(source.OSFS, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.add(0, []fileEntry{{Path: "/in/a", Size: 1}, {Path: "/in/b", Size: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := l.add(1, []fileEntry{{Path: "/in/c", Size: 3}}); err != nil {
		t.Fatal(err)
	}
	if got := l.seen["/in/c"]; got.Batch != 1 || got.Size != 3 {
		t.Fatalf("entry of /in/c: %+v, want batch 1", got)
	}
	if err := l.rewrite(0, []fileEntry{{Path: "/in/a", Size: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.seen["/in/b"]; ok {
		t.Fatal("/in/b is still seen after it was dropped from batch 0")
	}

	re, err := openLog(source.OSFS, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := re.files(-1, 1); err != nil || len(got) != 2 || got[0].Path != "/in/a" || got[1].Path != "/in/c" {
		t.Fatalf("reopened log: files(-1, 1) = %v, %v; want /in/a, /in/c", got, err)
	}
	if _, ok := re.seen["/in/b"]; ok || re.last != 1 {
		t.Fatalf("reopened log: last %d, /in/b seen %v", re.last, ok)
	}
	if err := re.discardAfter(0); err != nil {
		t.Fatal(err)
	}
	if _, ok := re.seen["/in/c"]; ok || re.last != 0 {
		t.Fatalf("after discardAfter(0): last %d, /in/c seen %v", re.last, ok)
	}
	if _, err := re.files(0, 1); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("files of a discarded batch: %v, want an error saying it is missing", err)
	}
	if again, err := openLog(source.OSFS, dir); err != nil || len(again.seen) != 1 || again.last != 0 {
		t.Fatalf("reopened after the discard: %v seen, last %d, %v", again.seen, again.last, err)
	}
	// A batch emptied by rewrite is still a batch: its range reads as empty.
	if err := re.add(1, []fileEntry{{Path: "/in/d"}}); err != nil {
		t.Fatal(err)
	}
	if err := re.rewrite(1, nil); err != nil {
		t.Fatal(err)
	}
	if again, err := openLog(source.OSFS, dir); err != nil {
		t.Fatal(err)
	} else if got, err := again.files(0, 1); err != nil || len(got) != 0 {
		t.Fatalf("an emptied batch reopened: %v, %v; want no files and no error", got, err)
	}
}

// Compaction folds committed batches only: a batch planned beyond the
// commit stays readable, also after a reopen, and older compact files go.
func TestSourceLogCompactionKeepsUncommitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := openLog(source.OSFS, dir)
	if err != nil {
		t.Fatal(err)
	}
	keepAll := func(fileEntry) bool { return true }
	for n := int64(0); n < 2*compactEvery+2; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10)}}); err != nil {
			t.Fatal(err)
		}
		// Committed one batch behind what is planned.
		if err := l.compactThrough(n-1, keepAll); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.compact"))
	if len(names) != 1 || filepath.Base(names[0]) != strconv.Itoa(2*compactEvery-1)+".compact" {
		t.Fatalf("compact files %v, want the newest alone", names)
	}
	re, err := openLog(source.OSFS, dir)
	if err != nil {
		t.Fatal(err)
	}
	last := int64(2*compactEvery + 1)
	if got, err := re.files(last-1, last); err != nil || len(got) != 1 || got[0].Path != "/in/f"+strconv.FormatInt(last, 10) {
		t.Fatalf("the uncommitted batch after a reopen: %v, %v", got, err)
	}
	if len(re.seen) != int(last+1) {
		t.Fatalf("%d files seen, want %d", len(re.seen), last+1)
	}
}

// What a crash or a damaged checkpoint leaves in the log directory:
// temporary files of a write that never finished and plain entries already
// folded into a compact file are ignored; a damaged entry that is still
// needed stops the source with an error naming it.
func TestSourceLogReopen(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		err   string // empty when the log opens
		seen  int
	}{
		{"temporary file of an unfinished write", map[string]string{
			"0": `[{"path":"/in/a","batch":0}]`, ".1.tmp-123": `[{"path":"/in/b"`,
		}, "", 1},
		{"entries folded before a crash", map[string]string{
			"9.compact": `[{"path":"/in/a","batch":3}]`, "3": `[{"path":"/in/a","batch":3}]`, "9": `[{"pa`,
			"10": `[{"path":"/in/b","batch":10}]`,
		}, "", 2},
		{"foreign names", map[string]string{"README": "x", "0": `[]`}, "", 0},
		{"torn entry", map[string]string{"0": `[{"path":"/in/a","batch":0}]`, "1": `[{"path":"/in/b"`}, "1 is corrupt", 0},
		{"empty entry", map[string]string{"0": ``}, "0 is corrupt", 0},
		{"torn compact file", map[string]string{"9.compact": `[{"path":`}, "9.compact is corrupt", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := openLog(source.OSFS, dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "restore the checkpoint") {
					t.Fatalf("got %v, want an error saying %q and how to repair", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.seen) != tc.seen {
				t.Fatalf("%d files seen, want %d", len(l.seen), tc.seen)
			}
		})
	}
}
