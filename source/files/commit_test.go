package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
)

// clean-source archives or deletes the files of committed batches, leaves
// a file rewritten since it was read alone with a warning, and after a
// restart finds the files it already cleaned gone without complaint.
func TestCleanSource(t *testing.T) {
	for _, mode := range []string{"archive", "delete"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			archive := filepath.Join(t.TempDir(), "archive")
			l := newLanding(t, config.Source{Recursive: true, CleanSource: mode, ArchiveDir: archive})
			a := l.write("a.csv", "id\n1\n")
			b := l.write("sub/b.csv", "id\n2\n")
			c := l.write("c.csv", "id\n3\n")
			ctx := t.Context()
			end, err := l.src.LatestOffset(ctx, l.start, all)
			if err != nil {
				t.Fatal(err)
			}
			// c.csv is rewritten after it was planned: its new content was
			// never read.
			l.write("c.csv", "id\n3\n4\n")
			setAge(t, c, -time.Minute)
			if err := l.src.Commit(ctx, end); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{a, b} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Fatalf("%s is still in the landing directory: %v", p, err)
				}
			}
			if _, err := os.Stat(c); err != nil {
				t.Fatalf("the rewritten c.csv was cleaned: %v", err)
			}
			w := l.src.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "left "+c+" alone") {
				t.Fatalf("warnings %q, want one about c.csv", w)
			}
			for _, rel := range []string{"a.csv", "sub/b.csv"} {
				_, err := os.Stat(filepath.Join(archive, rel))
				if mode == "archive" && err != nil {
					t.Fatalf("%s not archived: %v", rel, err)
				}
				if mode == "delete" && !os.IsNotExist(err) {
					t.Fatalf("%s archived under delete: %v", rel, err)
				}
			}
			// After a restart the uncompacted batch is visited again.
			l.open()
			if err := l.src.Commit(ctx, end); err != nil {
				t.Fatal(err)
			}
			if w := l.src.Warnings(); len(w) != 1 || !strings.Contains(w[0], c) {
				t.Fatalf("warnings after a restart %q, want only c.csv's", w)
			}
		})
	}
}

// Exclude refuses names that are not in the batch, and leaves it as it
// was.
func TestExcludeUnknownName(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{})
	a := l.write("a.csv", "id\n1\n")
	ctx := t.Context()
	end, err := l.src.LatestOffset(ctx, l.start, all)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.src.Exclude(ctx, end, []string{a, l.dir + "/nope.csv"}); err == nil || !strings.Contains(err.Error(), "not all of them are in it") {
		t.Fatalf("got %v, want an error saying the names are not all in the batch", err)
	}
	parts, err := l.src.Read(ctx, l.start, end)
	if err != nil || len(parts) != 1 || parts[0].Name() != a {
		t.Fatalf("the batch after a refused Exclude: %d parts, %v", len(parts), err)
	}
}
