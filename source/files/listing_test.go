package files_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

var all source.ReadLimit

// Hidden files and directories (names starting with "." or "_", Hadoop's
// temporary and marker files) are never listed; subdirectories only when
// recursive, and otherwise counted in one warning.
func TestListingHiddenAndRecursive(t *testing.T) {
	cases := []struct {
		recursive bool
		want      []string
		warning   string
	}{
		{false, []string{"a.csv"}, "3 files sit in subdirectories"},
		{true, []string{"a.csv", "sub/d.csv", "sub/deeper/f.csv", "sub/e.csv"}, ""},
	}
	for _, tc := range cases {
		t.Run(map[bool]string{false: "flat", true: "recursive"}[tc.recursive], func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, config.Source{Recursive: tc.recursive})
			for _, n := range []string{"a.csv", ".hidden.csv", "_SUCCESS", "_tmp.csv", ".staging/b.csv", "_temporary/c.csv",
				"sub/d.csv", "sub/e.csv", "sub/.e.csv.crc", "sub/_f.csv", "sub/deeper/f.csv"} {
				l.write(n, "id\n1\n")
			}
			if got := sorted(l.names(all)); !slices.Equal(got, tc.want) {
				t.Fatalf("planned %v, want %v", got, tc.want)
			}
			w := l.src.Warnings()
			switch {
			case tc.warning == "" && len(w) > 0:
				t.Fatalf("warnings %q, want none", w)
			case tc.warning != "" && (len(w) != 1 || !strings.HasPrefix(w[0], tc.warning) || !strings.Contains(w[0], "recursive")):
				t.Fatalf("warnings %q, want one starting %q and naming the recursive option", w, tc.warning)
			}
			if w := l.src.Warnings(); len(w) > 0 {
				t.Fatalf("Warnings did not clear: %q", w)
			}
		})
	}
}

// path-glob-filter matches file names, not paths, in every directory read.
func TestListingPathGlobFilter(t *testing.T) {
	cases := []struct {
		glob string
		want []string
	}{
		{"", []string{"a.csv", "a.json", "ab.csv", "b.csv", "sub/a.csv"}},
		{"*.csv", []string{"a.csv", "ab.csv", "b.csv", "sub/a.csv"}},
		{"a*", []string{"a.csv", "a.json", "ab.csv", "sub/a.csv"}},
		{"?.csv", []string{"a.csv", "b.csv", "sub/a.csv"}},
		{"[^a]*", []string{"b.csv"}},
		{"sub/*", nil},
	}
	for _, tc := range cases {
		t.Run(tc.glob, func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, config.Source{Recursive: true, PathGlobFilter: tc.glob})
			for _, n := range []string{"a.csv", "a.json", "ab.csv", "b.csv", "sub/a.csv"} {
				l.write(n, "id\n1\n")
			}
			if got := sorted(l.names(all)); !slices.Equal(got, tc.want) {
				t.Fatalf("glob %q planned %v, want %v", tc.glob, got, tc.want)
			}
		})
	}
}

// A malformed glob is a configuration error, not a filter that silently
// matches nothing.
func TestPathGlobFilterMalformed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := files.New(config.Source{Type: "files", Path: dir, Format: "csv", PathGlobFilter: "[a-"}, filepath.Join(dir, "state"))
	if !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "path-glob-filter") {
		t.Fatalf("got %v, want a configuration error naming path-glob-filter", err)
	}
}

// min-file-age leaves young files for a later batch.
func TestListingMinFileAge(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{MinFileAge: config.Duration(time.Hour)})
	l.writeAged("old.csv", "id\n1\n", 2*time.Hour)
	young := l.write("young.csv", "id\n2\n")
	if got := l.names(all); !slices.Equal(got, []string{"old.csv"}) {
		t.Fatalf("planned %v, want old.csv alone", got)
	}
	if got := l.names(all); got != nil {
		t.Fatalf("planned %v while young.csv is younger than min-file-age", got)
	}
	setAge(t, young, 90*time.Minute)
	if got := l.names(all); !slices.Equal(got, []string{"young.csv"}) {
		t.Fatalf("planned %v, want young.csv once old enough", got)
	}
}

// max-file-age ignores files older than the window behind the newest file
// seen; the first batch, with nothing seen, takes any age.
func TestListingMaxFileAge(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{MaxFileAge: config.Duration(time.Hour)})
	l.writeAged("a.csv", "id\n1\n", 3*time.Hour)
	l.writeAged("b.csv", "id\n2\n", 10*time.Hour)
	if got := l.names(all); !slices.Equal(got, []string{"b.csv", "a.csv"}) {
		t.Fatalf("first batch %v, want both files, oldest first", got)
	}
	l.writeAged("c.csv", "id\n3\n", 5*time.Hour)     // 2h before a.csv
	l.writeAged("d.csv", "id\n4\n", 210*time.Minute) // 30m before a.csv
	if got := l.names(all); !slices.Equal(got, []string{"d.csv"}) {
		t.Fatalf("second batch %v, want d.csv alone: c.csv is older than max-file-age behind a.csv", got)
	}
	// The window survives a restart: it is the log's.
	l.open()
	l.writeAged("e.csv", "id\n5\n", 6*time.Hour)
	if got := l.names(all); got != nil {
		t.Fatalf("after a restart planned %v, want nothing", got)
	}
}

// Files are planned oldest first, ties by path; latest-first reverses the
// order and, with a file limit, turns max-file-age off, as Spark does: the
// first batch would otherwise push the window past the rest of the
// backlog.
func TestListingOrder(t *testing.T) {
	cases := []struct {
		name string
		cfg  config.Source
		want [][]string
		late bool // whether a file older than the window is planned
	}{
		{"oldest first", config.Source{MaxFilesPerTrigger: 1}, [][]string{{"z.csv"}, {"y.csv"}, {"w.csv"}, {"x.csv"}}, true},
		{"latest first with a file limit", config.Source{MaxFilesPerTrigger: 1, LatestFirst: true, MaxFileAge: config.Duration(time.Hour)},
			[][]string{{"w.csv"}, {"x.csv"}, {"y.csv"}, {"z.csv"}}, true},
		{"latest first", config.Source{LatestFirst: true, MaxFileAge: config.Duration(time.Hour)},
			[][]string{{"w.csv", "x.csv", "y.csv", "z.csv"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, tc.cfg)
			now := time.Now().Truncate(time.Second)
			l.writeAt("x.csv", "id\n1\n", now.Add(-time.Hour))
			l.writeAt("w.csv", "id\n1\n", now.Add(-time.Hour))
			l.writeAt("y.csv", "id\n2\n", now.Add(-5*time.Hour))
			l.writeAt("z.csv", "id\n3\n", now.Add(-10*time.Hour))
			limit := source.ReadLimit{MaxFiles: tc.cfg.MaxFilesPerTrigger}
			for i, want := range tc.want {
				if got := l.names(limit); !slices.Equal(got, want) {
					t.Fatalf("batch %d: %v, want %v", i, got, want)
				}
			}
			l.writeAt("late.csv", "id\n4\n", now.Add(-3*time.Hour))
			if got := l.names(limit); (got != nil) != tc.late {
				t.Fatalf("a file 2h older than the newest seen: planned %v, want planned %v", got, tc.late)
			}
		})
	}
}

// A Parquet file changed within the last minute and without its footer is
// still being copied in and waits; an older one is planned, and reading it
// names it as bad.
func TestListingParquetWithoutFooter(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{Format: "parquet"})
	partial := l.write("partial.parquet", "PAR1 the first row group, and no footer yet")
	l.write("tiny.parquet", "PAR1")
	if got := l.names(all); got != nil {
		t.Fatalf("planned %v while the Parquet files have no footer", got)
	}
	setAge(t, partial, 2*time.Minute)
	parts := l.plan(all)
	if len(parts) != 1 || parts[0].Name() != partial {
		t.Fatalf("planned %d parts, want %s once it is two minutes old", len(parts), partial)
	}
	_, err := readPart(t, parts[0])
	bf := badFile(t, err, partial)
	if !strings.Contains(bf.Err.Error(), "Parquet") {
		t.Fatalf("error %v does not say the file is not readable Parquet", err)
	}
}

// Symbolic links are followed, to files and, when recursive, to
// directories. Each real directory and file is read once: a link back to
// an ancestor (a loop) or to a file already listed adds nothing and is
// named in a warning, and so is a link that cannot be followed.
func TestListingFollowsSymlinks(t *testing.T) {
	cases := []struct {
		recursive bool
		want      []string
		warnings  []string
	}{
		{false, []string{"a.csv", "link.csv"}, []string{"again.csv is the same file as", "dangling.csv cannot be followed", "1 file sits in a subdirectory"}},
		{true, []string{"a.csv", "link.csv", "linkdir/real.csv"}, []string{"again.csv is the same file as", "dangling.csv cannot be followed", "back leads back to", "(a loop)"}},
	}
	for _, tc := range cases {
		t.Run(map[bool]string{false: "flat", true: "recursive"}[tc.recursive], func(t *testing.T) {
			t.Parallel()
			l := newLanding(t, config.Source{Recursive: tc.recursive})
			outside, other := t.TempDir(), t.TempDir()
			for p, content := range map[string]string{filepath.Join(outside, "real.csv"): "id\n1\n", filepath.Join(other, "one.csv"): "id\n2\n"} {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			a := l.write("a.csv", "id\n3\n")
			links := map[string]string{
				filepath.Join(other, "one.csv"):    filepath.Join(l.dir, "link.csv"),
				outside:                            filepath.Join(l.dir, "linkdir"),
				l.dir:                              filepath.Join(outside, "back"),
				a:                                  filepath.Join(l.dir, "again.csv"),
				filepath.Join(outside, "gone.csv"): filepath.Join(l.dir, "dangling.csv"),
			}
			for target, link := range links {
				if err := os.Symlink(target, link); err != nil {
					t.Skipf("no symbolic links here: %v", err)
				}
			}
			if got := sorted(l.names(all)); !slices.Equal(got, tc.want) {
				t.Fatalf("planned %v, want %v", got, tc.want)
			}
			w := strings.Join(l.src.Warnings(), "\n")
			for _, want := range tc.warnings {
				if !strings.Contains(w, want) {
					t.Errorf("warnings %q lack %q", w, want)
				}
			}
		})
	}
}

// A symbolic link that is the landing directory itself is read through.
func TestListingThroughLinkedRoot(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	if err := os.WriteFile(filepath.Join(real, "a.csv"), []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "landing")
	if err := os.Symlink(real, root); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	src, err := files.New(config.Source{Type: "files", Path: root, Format: "csv"}, filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	start := src.InitialOffset()
	end, err := src.LatestOffset(t.Context(), start, all)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := src.Read(t.Context(), start, end)
	if err != nil || len(parts) != 1 || parts[0].Name() != filepath.Join(root, "a.csv") {
		t.Fatalf("planned %v (%v), want %s", parts, err, filepath.Join(root, "a.csv"))
	}
}

// A file rewritten after it was read is not read again; the source warns
// about it once.
func TestListingChangedAfterIngest(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{})
	p := l.write("a.csv", "id\n1\n")
	if got := l.names(all); len(got) != 1 {
		t.Fatalf("planned %v", got)
	}
	l.write("a.csv", "id\n1\n2\n")
	setAge(t, p, time.Minute) // a different time even on coarse clocks
	if got := l.names(all); got != nil {
		t.Fatalf("planned %v after a.csv was rewritten; files are read once", got)
	}
	w := l.src.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "changed after it was ingested") || !strings.Contains(w[0], p) {
		t.Fatalf("warnings %q, want one about %s", w, p)
	}
	l.names(all)
	if w := l.src.Warnings(); len(w) != 0 {
		t.Fatalf("the change was reported again: %q", w)
	}
}

// A batch's files are planned once across a restart; files that arrive
// while a batch is being planned wait for the next.
func TestListingRestartPlansNothingTwice(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{})
	l.write("a.csv", "id\n1\n")
	l.write("b.csv", "id\n2\n")
	if got := l.names(source.ReadLimit{MaxFiles: 1}); !slices.Equal(got, []string{"a.csv"}) {
		t.Fatalf("planned %v", got)
	}
	l.open()
	l.write("c.csv", "id\n3\n")
	if got := l.names(all); !slices.Equal(got, []string{"b.csv", "c.csv"}) {
		t.Fatalf("after a restart planned %v, want b.csv and c.csv", got)
	}
}

// New refuses what it cannot read, naming the fix.
func TestNewRefusesBadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  config.Source
		want string
	}{
		{"missing directory", config.Source{Path: filepath.Join(dir, "nope"), Format: "csv"}, "create the landing directory"},
		{"a file", config.Source{Path: file, Format: "csv"}, "is not a directory"},
		{"format", config.Source{Path: dir, Format: "orc"}, "use parquet, csv, json, debezium-json or avro"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := files.New(tc.cfg, filepath.Join(dir, "state"))
			if !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a configuration error saying %q", err, tc.want)
			}
		})
	}
}

// The same directory through a symbolic link is the same source; another
// directory, another format or another kind of source is not.
func TestSameSource(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{})
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(l.dir, alias); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	other := t.TempDir()
	cases := map[string]bool{
		"FileStreamSource[" + alias + ", format=csv]":      true,
		"FileStreamSource[" + l.dir + ", format=csv]":      true,
		"FileStreamSource[" + alias + ", format=json]":     false,
		"FileStreamSource[" + other + ", format=csv]":      false,
		"IcebergSource[" + alias + ", format=csv]":         false,
		"FileStreamSource[" + alias + "/gone, format=csv]": false,
	}
	for desc, want := range cases {
		if got := l.src.SameSource(desc); got != want {
			t.Errorf("SameSource(%q) = %v, want %v", desc, got, want)
		}
	}
}
