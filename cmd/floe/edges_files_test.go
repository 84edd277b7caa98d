package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// The landing directory at its edges: symbolic links, floe's own
// directories inside a recursive source, values whose inferred type is not
// the table's, byte order marks, and files a run leaves behind.

// mustSymlink makes link point to target, skipping the test where the
// filesystem has no symbolic links.
func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// wantIDs fails unless the table holds each id of [first, first+n) once, by
// iceberg-go's own scan.
func (e *env) wantIDs(table string, first, n int64) {
	e.T.Helper()
	if d := fixture.Exact(e.TableIDs(table), first, n); d != "" {
		e.T.Fatalf("table %s: %s", table, d)
	}
}

// A landing directory reached through a symbolic link (a mounted volume in
// a pod, a NAS share) and a symbolic link to a file inside it are read like
// the files they point to.
func TestSymlinkedLandingIsRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	outside := filepath.Join(e.Dir, "outside")
	if err := fixture.WriteIDFile(filepath.Join(outside, "b.parquet"), 100, 100); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(outside, "b.parquet"), filepath.Join(e.Landing, "b.parquet"))
	alias := filepath.Join(e.Dir, "mnt")
	mustSymlink(t, e.Landing, alias)

	args := []string{"stream", "--source", alias, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt}
	e.OK(args...)
	e.wantIDs("db.t", 0, 200)
	// The next run goes on from the checkpoint through the same link.
	e.WriteIDs("c.parquet", 200, 100)
	e.OK(args...)
	e.wantIDs("db.t", 0, 300)
}

// With recursive, symbolic links to directories are followed, each real
// directory is read once, a link back to an ancestor is not followed round
// and round, and a link that cannot be followed is named in a warning.
func TestRecursiveFollowsDirectoryLinksOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.WriteIDs("real/b.parquet", 100, 100)
	outside := filepath.Join(e.Dir, "outside")
	if err := fixture.WriteIDFile(filepath.Join(outside, "c.parquet"), 200, 100); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, filepath.Join(e.Landing, "linked"))
	mustSymlink(t, e.Landing, filepath.Join(outside, "back"))                           // a loop through the link
	mustSymlink(t, filepath.Join(e.Landing, "real"), filepath.Join(e.Landing, "again")) // a second name
	mustSymlink(t, filepath.Join(e.Dir, "gone"), filepath.Join(e.Landing, "dangling.parquet"))

	r := e.Stream("db.t", "--recursive")
	if r.Code != 0 {
		t.Fatalf("stream: %s", r)
	}
	e.wantIDs("db.t", 0, 300)
	for _, want := range []string{filepath.Join(e.Landing, "linked", "back"), filepath.Join(e.Landing, "again"), filepath.Join(e.Landing, "dangling.parquet")} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("no warning names %s:\n%s", want, r.Stderr)
		}
	}
	if !strings.Contains(r.Stderr, "loop") {
		t.Errorf("the warnings do not call the link back to the landing directory a loop:\n%s", r.Stderr)
	}
	e.OK(e.StreamArgs("db.t", "--recursive")...)
	e.wantIDs("db.t", 0, 300)
}

// A recursive source that holds floe's own warehouse or checkpoint would
// ingest floe's output again on every run: refused at start, comparing
// the directories as the filesystem resolves them. A hidden directory
// (._ or _-prefixed) is never listed, so a checkpoint there is fine.
func TestRecursiveSourceRefusesFloesOwnDirectories(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// args returns the extra flags; wantDir is the directory the
		// refusal must name, "" when the run must succeed.
		args func(e *env) (args []string, wantDir string)
	}{
		{"warehouse inside", func(e *env) ([]string, string) {
			wh := filepath.Join(e.Landing, "wh")
			return []string{"--warehouse", wh}, wh
		}},
		{"checkpoint inside through a link", func(e *env) ([]string, string) {
			alias := filepath.Join(e.Dir, "alias")
			mustSymlink(e.T, e.Landing, alias)
			ck := filepath.Join(alias, "ck")
			return []string{"--checkpoint", ck}, ck
		}},
		{"warehouse is the landing directory", func(e *env) ([]string, string) {
			return []string{"--warehouse", e.Landing}, e.Landing
		}},
		{"checkpoint in a hidden directory", func(e *env) ([]string, string) {
			return []string{"--checkpoint", filepath.Join(e.Landing, "_checkpoint")}, ""
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			args, wantDir := tc.args(e)
			for run := int64(0); run < 3; run++ {
				e.WriteIDs(fmt.Sprintf("in/f%d.parquet", run), run*100, 100)
				r := e.Run(append(e.StreamArgs("db.t", "--recursive"), args...)...)
				if wantDir == "" {
					if r.Code != 0 {
						t.Fatalf("run %d: %s", run, r)
					}
					continue
				}
				if r.Code != 2 || !strings.Contains(r.Stderr, wantDir) || !strings.Contains(r.Stderr, "outside the landing directory") {
					t.Fatalf("run %d: want exit 2 naming %s and the fix, got %s", run, wantDir, r)
				}
				if _, err := os.Stat(filepath.Join(e.Landing, "wh")); err == nil {
					t.Fatalf("the refused run created its warehouse in the landing directory")
				}
				return
			}
			e.wantIDs("db.t", 0, 300)
		})
	}
}

// The same landing directory under another name (a symbolic link to it or
// to a parent) is the same source: a new checkpoint over it is refused
// like one over the same path, and a checkpoint made through one name is
// not reused through another, which would read every file again.
func TestSameDirectoryThroughALinkIsTheSameSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK(e.StreamArgs("db.t")...)
	parent := filepath.Join(e.Dir, "parent")
	mustSymlink(t, e.Dir, parent)
	alias := filepath.Join(parent, "landing")

	r := e.Run("stream", "--source", alias, "--format", "parquet", "--table", "db.t", "--checkpoint", filepath.Join(e.Dir, "ck2"))
	if r.Code == 0 || !strings.Contains(r.Stderr, "--allow-new-query") {
		t.Fatalf("a new checkpoint over the same directory through a link: want the new-query refusal, got %s", r)
	}
	r = e.Run("stream", "--source", alias, "--format", "parquet", "--table", "db.t", "--checkpoint", e.Ckpt)
	if r.Code == 0 || !strings.Contains(r.Stderr, e.Landing) || !strings.Contains(r.Stderr, "same") {
		t.Fatalf("the checkpoint through another name of its directory: want a refusal naming %s, got %s", e.Landing, r)
	}
	e.wantIDs("db.t", 0, 100)
	// The checkpoint goes on under the name it was made with.
	e.WriteIDs("b.parquet", 100, 100)
	e.OK(e.StreamArgs("db.t")...)
	e.wantIDs("db.t", 0, 200)
}

// An available-now run names every file it leaves: a Parquet file without
// its footer yet, and files older than max-file-age.
func TestAvailableNowNamesFilesItLeaves(t *testing.T) {
	t.Parallel()
	t.Run("no footer yet", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.WriteIDs("a.parquet", 0, 100)
		partial := filepath.Join(e.Landing, "partial.parquet")
		if err := os.WriteFile(partial, []byte("PAR1 the first row group, and no footer yet"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.OK(e.StreamArgs("db.t")...)
		if !strings.Contains(r.Stderr, partial) || !strings.Contains(r.Stderr, "footer") {
			t.Fatalf("no warning names %s and its missing footer:\n%s", partial, r.Stderr)
		}
		e.wantIDs("db.t", 0, 100)
	})
	t.Run("max-file-age", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.WriteIDs("a.parquet", 0, 100)
		e.OK(e.StreamArgs("db.t", "--max-file-age", "1h")...)
		e.WriteIDs("old.parquet", 100, 100)
		old := filepath.Join(e.Landing, "old.parquet")
		at := time.Now().Add(-3 * time.Hour)
		if err := os.Chtimes(old, at, at); err != nil {
			t.Fatal(err)
		}
		r := e.OK(e.StreamArgs("db.t", "--max-file-age", "1h")...)
		if !strings.Contains(r.Stderr, old) || !strings.Contains(r.Stderr, "max-file-age") {
			t.Fatalf("no warning names %s and max-file-age:\n%s", old, r.Stderr)
		}
		e.wantIDs("db.t", 0, 100)
	})
}
