package files

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/source"
)

const keepAll = math.MinInt64

// logEntries is every entry of the log, by path: the segments' and the
// plain batches'.
func logEntries(t *testing.T, l *sourceLog) map[string]fileEntry {
	t.Helper()
	out := map[string]fileEntry{}
	for _, s := range l.segs {
		it := s.iter(0, nil)
		for it.next() {
			out[string(it.key)] = it.entry()
		}
		if it.err != nil {
			t.Fatalf("segment %s: %v", s.name(), it.err)
		}
	}
	for _, files := range l.batches {
		for _, f := range files {
			out[f.Path] = f
		}
	}
	return out
}

// accountOf is the account of entries of log batches up to n, entry by
// entry, as the log kept it in a map before it had segments.
func accountOf(entries map[string]fileEntry, n int64) account {
	a := account{wm: watermark{ms: math.MinInt64}}
	for _, f := range entries {
		if f.Batch <= n {
			a.add(f)
		}
	}
	return a
}

func encoded(t testing.TB, s *segment) []byte {
	t.Helper()
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustOpen(t testing.TB, fsys source.FS, dir string) *sourceLog {
	t.Helper()
	l, err := openLog(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The log folds committed batches every compactEvery into a segment,
// reopens to the same state, and forgets uncommitted entries beyond the
// checkpoint's end.
func TestSourceLogCompaction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := mustOpen(t, source.OSFS, dir)
	for n := int64(0); n < 25; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10), Size: n, ModTime: n}}); err != nil {
			t.Fatal(err)
		}
		if err := l.compactThrough(n, keepAll); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) > compactEvery+2 {
		t.Fatalf("log holds %d files after 25 batches; compaction should bound it near %d", len(entries), compactEvery+2)
	}
	// Two folds of 10 batches, the second as large as the first: merged.
	if _, err := os.Stat(filepath.Join(dir, "0-19.seg")); err != nil {
		t.Fatalf("no segment of log batches 0 to 19: %v", err)
	}
	re := mustOpen(t, source.OSFS, dir)
	if got := logEntries(t, re); len(got) != 25 || re.last != 24 || re.compact != 19 {
		t.Fatalf("reopened log: %d files seen, last %d, compacted through %d; want 25, 24 and 19", len(got), re.last, re.compact)
	}
	if f, ok := re.lookup("/in/f7"); !ok || f.Size != 7 || f.ModTime != 7 || f.Batch != 7 {
		t.Fatalf("lookup of a compacted entry: %+v, %v", f, ok)
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
	if _, ok := re.lookup("/in/orphan"); ok || re.last != 24 {
		t.Fatalf("orphan entry survived discardAfter: last %d", re.last)
	}
	if _, err := os.Stat(filepath.Join(dir, "25")); !os.IsNotExist(err) {
		t.Fatalf("orphan entry file still on disk: %v", err)
	}
}

// Compaction lets go of the files modified before the oldest time it is
// given (max-file-age), when it folds batches and when it merges
// segments, and the segments' accounts are of the files kept.
func TestSourceLogCompactionDropsOldEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := mustOpen(t, source.OSFS, dir)
	for n := int64(0); n < compactEvery; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10), ModTime: n * 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.compactThrough(compactEvery-1, 5000); err != nil {
		t.Fatal(err)
	}
	if got := logEntries(t, l); len(got) != 5 {
		t.Fatalf("%d files remembered, want the 5 inside the age window", len(got))
	}
	// The next fold merges with the first segment, which lets go of more.
	for n := int64(compactEvery); n < 2*compactEvery; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/g" + strconv.FormatInt(n, 10), ModTime: n * 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.compactThrough(2*compactEvery-1, 8000); err != nil {
		t.Fatal(err)
	}
	if len(l.segs) != 1 {
		t.Fatalf("%d segments, want the two merged", len(l.segs))
	}
	got := logEntries(t, mustOpen(t, source.OSFS, dir))
	var names []string
	for p := range got {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	if want := []string{"f8", "f9", "g10", "g11", "g12", "g13", "g14", "g15", "g16", "g17", "g18", "g19"}; !slices.Equal(names, want) {
		t.Fatalf("after the merge the log holds %v, want %v", names, want)
	}
	if a := l.account(math.MaxInt64); a != accountOf(got, math.MaxInt64) {
		t.Fatalf("the merged segment's account %+v is not its files' %+v", a, accountOf(got, math.MaxInt64))
	}
}

// add records a batch durably with its id on every entry; rewrite replaces
// an uncommitted batch (what Exclude does); discardAfter forgets batches
// beyond the checkpoint's end, on disk and in what was seen.
func TestSourceLogAddRewriteDiscard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := mustOpen(t, source.OSFS, dir)
	if err := l.add(0, []fileEntry{{Path: "/in/a", Size: 1}, {Path: "/in/b", Size: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := l.add(1, []fileEntry{{Path: "/in/c", Size: 3}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.lookup("/in/c"); got.Batch != 1 || got.Size != 3 {
		t.Fatalf("entry of /in/c: %+v, want batch 1", got)
	}
	if err := l.rewrite(0, []fileEntry{{Path: "/in/a", Size: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.lookup("/in/b"); ok {
		t.Fatal("/in/b is still seen after it was dropped from batch 0")
	}

	re := mustOpen(t, source.OSFS, dir)
	if got, err := re.files(-1, 1); err != nil || len(got) != 2 || got[0].Path != "/in/a" || got[1].Path != "/in/c" {
		t.Fatalf("reopened log: files(-1, 1) = %v, %v; want /in/a, /in/c", got, err)
	}
	if _, ok := re.lookup("/in/b"); ok || re.last != 1 {
		t.Fatalf("reopened log: last %d, /in/b seen %v", re.last, ok)
	}
	if err := re.discardAfter(0); err != nil {
		t.Fatal(err)
	}
	if _, ok := re.lookup("/in/c"); ok || re.last != 0 {
		t.Fatalf("after discardAfter(0): last %d, /in/c seen %v", re.last, ok)
	}
	if _, err := re.files(0, 1); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("files of a discarded batch: %v, want an error saying it is missing", err)
	}
	if again := mustOpen(t, source.OSFS, dir); len(logEntries(t, again)) != 1 || again.last != 0 {
		t.Fatalf("reopened after the discard: %v seen, last %d", logEntries(t, again), again.last)
	}
	// A batch emptied by rewrite is still a batch: its range reads as empty.
	if err := re.add(1, []fileEntry{{Path: "/in/d"}}); err != nil {
		t.Fatal(err)
	}
	if err := re.rewrite(1, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := mustOpen(t, source.OSFS, dir).files(0, 1); err != nil || len(got) != 0 {
		t.Fatalf("an emptied batch reopened: %v, %v; want no files and no error", got, err)
	}
}

// Compaction folds committed batches only: a batch planned beyond the
// commit stays readable, also after a reopen.
func TestSourceLogCompactionKeepsUncommitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := mustOpen(t, source.OSFS, dir)
	for n := int64(0); n < 2*compactEvery+2; n++ {
		if err := l.add(n, []fileEntry{{Path: "/in/f" + strconv.FormatInt(n, 10)}}); err != nil {
			t.Fatal(err)
		}
		// Committed one batch behind what is planned.
		if err := l.compactThrough(n-1, keepAll); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(names) != 1 || filepath.Base(names[0]) != "0-"+strconv.Itoa(2*compactEvery-1)+".seg" {
		t.Fatalf("segments %v, want one of log batches 0 to %d", names, 2*compactEvery-1)
	}
	re := mustOpen(t, source.OSFS, dir)
	last := int64(2*compactEvery + 1)
	if got, err := re.files(last-1, last); err != nil || len(got) != 1 || got[0].Path != "/in/f"+strconv.FormatInt(last, 10) {
		t.Fatalf("the uncommitted batch after a reopen: %v, %v", got, err)
	}
	if got := logEntries(t, re); len(got) != int(last+1) {
		t.Fatalf("%d files seen, want %d", len(got), last+1)
	}
}

// Committed batches holding compactEntries files are folded without
// waiting for compactEvery of them: a large batch does not linger in the
// plain form.
func TestSourceLogFoldsLargeBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := mustOpen(t, source.OSFS, dir)
	batch := make([]fileEntry, compactEntries)
	for i := range batch {
		batch[i] = fileEntry{Path: fmt.Sprintf("/in/%06d", i), Size: 10, ModTime: int64(i)}
	}
	if err := l.add(0, batch); err != nil {
		t.Fatal(err)
	}
	if err := l.compactThrough(0, keepAll); err != nil {
		t.Fatal(err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 1 || filepath.Base(names[0]) != "0-0.seg" {
		t.Fatalf("the log holds %v, want the batch folded into 0-0.seg", names)
	}
}

// The segments merge as they grow: folding 400 batches of 25 files
// writes each file again a few times, not the whole log every tenth
// batch, and leaves a few segments. The files written by compaction stay
// within a small multiple of the log's final size.
func TestSourceLogMergesIncrementally(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fsys := &countingFS{FS: source.OSFS}
	l := mustOpen(t, fsys, dir)
	const batches, per = 400, 25
	for n := int64(0); n < batches; n++ {
		files := make([]fileEntry, per)
		for i := range files {
			k := n*per + int64(i)
			files[i] = fileEntry{Path: fmt.Sprintf("/landing/day=%04d/part-%07d.csv", k/1000, k), Size: 8, ModTime: 1_700_000_000_000 + k}
		}
		if err := l.add(n, files); err != nil {
			t.Fatal(err)
		}
		if err := l.compactThrough(n, keepAll); err != nil {
			t.Fatal(err)
		}
	}
	var final int64
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		final += st.Size()
	}
	if len(names) == 0 || len(names) > 8 {
		t.Fatalf("%d segments after %d folds, want a few: %v", len(names), batches/compactEvery, names)
	}
	if fsys.folded > 12*final {
		t.Fatalf("compaction wrote %d bytes for a log of %d: %.1f times its size, want a few", fsys.folded, final, float64(fsys.folded)/float64(final))
	}
	if got := logEntries(t, mustOpen(t, source.OSFS, dir)); len(got) != batches*per {
		t.Fatalf("%d entries after a reopen, want %d", len(got), batches*per)
	}
	t.Logf("%d segments, %d bytes; compaction wrote %d bytes (%.1f×)", len(names), final, fsys.folded, float64(fsys.folded)/float64(final))
}

// countingFS counts the bytes written to files other than plain log
// batches: what compaction writes.
type countingFS struct {
	source.FS
	folded int64
}

func (c *countingFS) WriteFile(path string, data []byte) error {
	if _, err := strconv.ParseInt(filepath.Base(path), 10, 64); err != nil {
		c.folded += int64(len(data))
	}
	return c.FS.WriteFile(path, data)
}

// What a crash or a damaged checkpoint leaves in the log directory:
// temporary files of a write that never finished, plain entries already
// folded, JSON compact files of an earlier version and segments a merge
// replaced are ignored; a damaged entry that is still needed stops the
// source with an error naming it.
func TestSourceLogReopen(t *testing.T) {
	t.Parallel()
	seg := func(lo, hi int64, paths ...string) string {
		var files []fileEntry
		for _, p := range paths {
			files = append(files, fileEntry{Path: p, Batch: hi})
		}
		return string(encoded(t, segmentFromEntries(lo, hi, files)))
	}
	damaged := []byte(seg(0, 9, "/in/a"))
	damaged[len(damaged)/2] ^= 1
	cases := []struct {
		name  string
		files map[string]string
		err   string // empty when the log opens
		seen  []string
		last  int64
	}{
		{"temporary file of an unfinished write", map[string]string{
			"0": `[{"path":"/in/a","batch":0}]`, ".1.tmp-123": `[{"path":"/in/b"`,
		}, "", []string{"/in/a"}, 0},
		{"entries folded before a crash", map[string]string{
			"9.compact": `[{"path":"/in/a","batch":3}]`, "3": `[{"path":"/in/a","batch":3}]`, "9": `[{"pa`,
			"10": `[{"path":"/in/b","batch":10}]`,
		}, "", []string{"/in/a", "/in/b"}, 10},
		{"entries folded into a segment before a crash", map[string]string{
			"0-9.seg": seg(0, 9, "/in/a"), "9": `[{"pa`, "10": `[{"path":"/in/b","batch":10}]`,
		}, "", []string{"/in/a", "/in/b"}, 10},
		{"segments merged before a crash", map[string]string{
			"0-9.seg": seg(0, 9, "/in/a"), "10-19.seg": seg(10, 19, "/in/b"), "0-19.seg": seg(0, 19, "/in/a", "/in/b"),
			"20-29.seg": seg(20, 29, "/in/c"),
		}, "", []string{"/in/a", "/in/b", "/in/c"}, 29},
		{"a JSON compact file written as a segment before a crash", map[string]string{
			"9.compact": `[{"path":"/in/a","batch":3}]`, "3-9.seg": seg(3, 9, "/in/a"), "10-19.seg": seg(10, 19, "/in/b"),
		}, "", []string{"/in/a", "/in/b"}, 19},
		{"foreign names", map[string]string{"README": "x", "0": `[]`, "x.seg": "y"}, "", nil, 0},
		{"torn entry", map[string]string{"0": `[{"path":"/in/a","batch":0}]`, "1": `[{"path":"/in/b"`}, "1 is corrupt", nil, 0},
		{"empty entry", map[string]string{"0": ``}, "0 is corrupt", nil, 0},
		{"torn compact file", map[string]string{"9.compact": `[{"path":`}, "9.compact is corrupt", nil, 0},
		{"damaged segment", map[string]string{"0-9.seg": string(damaged)}, "0-9.seg is corrupt (checksum mismatch)", nil, 0},
		{"truncated segment", map[string]string{"0-9.seg": seg(0, 9, "/in/a")[:20]}, "0-9.seg is corrupt", nil, 0},
		{"segment under another name", map[string]string{"0-8.seg": seg(0, 9, "/in/a")}, "0-8.seg holds log batches 0 to 9", nil, 0},
		{"overlapping segments", map[string]string{"0-9.seg": seg(0, 9, "/in/a"), "5-19.seg": seg(5, 19, "/in/b")}, "5-19.seg overlaps 0-9.seg", nil, 0},
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
			var seen []string
			for p := range logEntries(t, l) {
				seen = append(seen, p)
			}
			slices.Sort(seen)
			if !slices.Equal(seen, tc.seen) || l.last != tc.last {
				t.Fatalf("files seen %v, last %d; want %v, %d", seen, l.last, tc.seen, tc.last)
			}
		})
	}
}

// A checkpoint of an earlier version, whose log is JSON (a compact file
// and plain batches), opens with every entry and the same account, and
// its next compaction writes it as segments and removes the JSON files.
func TestSourceLogConvertsTheJSONForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var compact []string
	model := map[string]fileEntry{}
	for i := range 30 {
		f := fileEntry{Path: fmt.Sprintf("/in/old-%02d", i), Size: int64(i), ModTime: 1000 + int64(i), Batch: int64(i / 3)}
		model[f.Path] = f
		compact = append(compact, fmt.Sprintf(`{"path":%q,"size":%d,"mtimeMs":%d,"batch":%d}`, f.Path, f.Size, f.ModTime, f.Batch))
	}
	slices.Sort(compact)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("9.compact", "["+strings.Join(compact, ",")+"]")
	write("4.compact", `[{"path":"/in/stale"}]`)
	for n := 10; n < 20; n++ {
		f := fileEntry{Path: fmt.Sprintf("/in/new-%02d", n), Size: 1, ModTime: 2000 + int64(n), Batch: int64(n)}
		model[f.Path] = f
		write(strconv.Itoa(n), fmt.Sprintf(`[{"path":%q,"size":1,"mtimeMs":%d,"batch":%d}]`, f.Path, f.ModTime, n))
	}
	l := mustOpen(t, source.OSFS, dir)
	check := func(l *sourceLog, when string) {
		t.Helper()
		for p, want := range model {
			if got, ok := l.lookup(p); !ok || got != want {
				t.Fatalf("%s: lookup(%s) = %+v, %v; want %+v", when, p, got, ok, want)
			}
		}
		if _, ok := l.lookup("/in/stale"); ok {
			t.Fatalf("%s: an entry of an older compact file is seen", when)
		}
		for _, n := range []int64{5, 9, 15, 19} {
			if got, want := l.account(n), accountOf(model, n); got != want {
				t.Fatalf("%s: account through %d is %+v, want %+v", when, n, got, want)
			}
		}
	}
	check(l, "opened")
	if err := l.compactThrough(19, keepAll); err != nil {
		t.Fatal(err)
	}
	check(l, "compacted")
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	// 10 new entries are less than half of the 30 converted: not merged.
	if want := []string{"0-9.seg", "10-19.seg"}; !slices.Equal(names, want) {
		t.Fatalf("after the compaction the log holds %v, want %v", names, want)
	}
	check(mustOpen(t, source.OSFS, dir), "reopened")
}

// A compaction failing at any of its writes, removals or syncs leaves a
// log that reopens with every entry and the same account, and that the
// next compaction finishes: the fold and two merges in a row, and the
// conversion of a JSON compact file.
func TestSourceLogCompactionCrashes(t *testing.T) {
	t.Parallel()
	// Before the compaction: segments of 20, 10 and 5 batches of one file,
	// or a JSON compact file of 15 files, then 10 committed plain batches
	// and one planned beyond the commit. The fold then merges three times,
	// or converts the JSON file and merges once.
	setup := func(t *testing.T, dir string, legacy bool) map[string]fileEntry {
		model := map[string]fileEntry{}
		var spans [][2]int64
		if legacy {
			var compact []string
			for n := int64(0); n < 15; n++ {
				f := fileEntry{Path: fmt.Sprintf("/in/f%03d", n), Size: n, ModTime: 100 + n, Batch: n + 22}
				model[f.Path] = f
				compact = append(compact, fmt.Sprintf(`{"path":%q,"size":%d,"mtimeMs":%d,"batch":%d}`, f.Path, f.Size, f.ModTime, f.Batch))
			}
			if err := os.WriteFile(filepath.Join(dir, "36.compact"), []byte("["+strings.Join(compact, ",")+"]"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			spans = [][2]int64{{2, 21}, {22, 31}, {32, 36}}
		}
		l := mustOpen(t, source.OSFS, dir)
		for _, span := range spans {
			var files []fileEntry
			for n := span[0]; n <= span[1]; n++ {
				f := fileEntry{Path: fmt.Sprintf("/in/f%03d", n), Size: n, ModTime: 100 + n, Batch: n}
				files = append(files, f)
				model[f.Path] = f
			}
			if err := l.writeSegment(segmentFromEntries(span[0], span[1], files)); err != nil {
				t.Fatal(err)
			}
		}
		l = mustOpen(t, source.OSFS, dir)
		for n := int64(37); n < 37+compactEvery; n++ {
			f := fileEntry{Path: fmt.Sprintf("/in/g%03d", n), Size: n, ModTime: 100 + n}
			if err := l.add(n, []fileEntry{f}); err != nil {
				t.Fatal(err)
			}
			f.Batch = n
			model[f.Path] = f
		}
		u := fileEntry{Path: "/in/u", Size: 9, ModTime: 999}
		if err := l.add(37+compactEvery, []fileEntry{u}); err != nil {
			t.Fatal(err)
		}
		u.Batch = 37 + compactEvery
		model[u.Path] = u
		return model
	}
	const committed = 36 + compactEvery
	check := func(t *testing.T, l *sourceLog, model map[string]fileEntry, when string) {
		t.Helper()
		got := logEntries(t, l)
		if len(got) != len(model) {
			t.Fatalf("%s: %d entries, want %d", when, len(got), len(model))
		}
		for p, want := range model {
			if f, ok := l.lookup(p); !ok || f != want {
				t.Fatalf("%s: lookup(%s) = %+v, %v; want %+v", when, p, f, ok, want)
			}
		}
		if a, want := l.account(committed), accountOf(model, committed); a != want {
			t.Fatalf("%s: account %+v, want %+v", when, a, want)
		}
		if files, err := l.files(committed, committed+1); err != nil || len(files) != 1 || files[0].Path != "/in/u" {
			t.Fatalf("%s: the uncommitted batch reads %v, %v", when, files, err)
		}
		if l.last != committed+1 {
			t.Fatalf("%s: last log batch %d, want %d", when, l.last, committed+1)
		}
	}
	for _, op := range []struct {
		name   string
		op     checkpoint.Op
		legacy bool
	}{
		{"write", checkpoint.OpWrite, false}, {"sync", checkpoint.OpSync, false},
		{"write, JSON form", checkpoint.OpWrite, true}, {"sync, JSON form", checkpoint.OpSync, true},
	} {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			for n := 1; ; n++ {
				dir := t.TempDir()
				model := setup(t, dir, op.legacy)
				faults := checkpoint.NewFaultFS(checkpoint.OS)
				l := mustOpen(t, faults, dir)
				faults.FailAt(op.op, n)
				err := l.compactThrough(committed, keepAll)
				hit := faults.Injected()
				if hit == "" {
					if err != nil {
						t.Fatalf("nothing failed, and the compaction failed: %v", err)
					}
					check(t, mustOpen(t, source.OSFS, dir), model, "after the compaction")
					if names, _ := filepath.Glob(filepath.Join(dir, "*.seg")); len(names) != 1 {
						t.Fatalf("after the compaction the segments are %v, want one", names)
					}
					if n-1 < 3 {
						t.Fatalf("the compaction made only %d %ss; its writes and removals make more", n-1, op.name)
					}
					return
				}
				if err == nil {
					t.Fatalf("%s %d (%s) failed, and the compaction succeeded", op.name, n, hit)
				}
				when := fmt.Sprintf("after %s %d (%s) failed", op.name, n, hit)
				re := mustOpen(t, source.OSFS, dir)
				check(t, re, model, when)
				if err := re.compactThrough(committed, keepAll); err != nil {
					t.Fatalf("%s, the next compaction: %v", when, err)
				}
				// The next compaction folds only when there is something
				// to fold; either way the log reads the same.
				check(t, mustOpen(t, source.OSFS, dir), model, when+" and the next compaction")
			}
		})
	}
}

// A segment's lookup, iteration and account agree with a map of the same
// entries, for paths that share long prefixes or none, with sizes and
// times of any sign, across block boundaries, in memory and read back.
func TestSegmentMatchesMap(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := r.IntN(300)
		if seed == 0 {
			n = 0
		}
		model := map[string]fileEntry{}
		for len(model) < n {
			f := randomEntry(r, 5, 12)
			model[f.Path] = f
		}
		checkSegment(t, model, 5, 12)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// checkCursor looks up every path of model and some absent ones through
// a cursor, in increasing order, then in an order that goes back now and
// then, and wants what the model holds.
func checkCursor(t *testing.T, l *sourceLog, model map[string]fileEntry) {
	t.Helper()
	var paths []string
	for p := range model {
		paths = append(paths, p, p+"\x00", p+"z", p[:len(p)-1])
	}
	paths = append(paths, "", "\xff")
	slices.Sort(paths)
	shuffled := slices.Clone(paths)
	r := rand.New(rand.NewPCG(uint64(len(paths)), 4))
	for i := range shuffled {
		if r.IntN(8) == 0 {
			j := r.IntN(len(shuffled))
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		}
	}
	for _, order := range [][]string{paths, shuffled} {
		c := l.cursor()
		for _, p := range order {
			want, wantOK := model[p]
			if got, ok := c.lookup(p); ok != wantOK || got != want {
				t.Fatalf("cursor lookup(%q) = %+v, %v; want %+v, %v", p, got, ok, want, wantOK)
			}
		}
	}
}

func crcOf(b []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli))
}

func randomEntry(r *rand.Rand, lo, hi int64) fileEntry {
	alphabet := []string{"/", "a", "b", "day=", "0", "1", "part-", ".csv", "é", "\x00"}
	var b strings.Builder
	for range 1 + r.IntN(12) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	f := fileEntry{Path: b.String(), Size: r.Int64N(1<<40) - 1<<20, ModTime: r.Int64() - math.MaxInt64/2, Batch: lo + r.Int64N(hi-lo+1)}
	if r.IntN(2) == 0 {
		f.ETag = fmt.Sprintf("%q", fmt.Sprintf("%032x", r.Uint64()))
	}
	return f
}

func checkSegment(t *testing.T, model map[string]fileEntry, lo, hi int64) {
	t.Helper()
	var entries []fileEntry
	for _, f := range model {
		entries = append(entries, f)
	}
	s := segmentFromEntries(lo, hi, sortedUnique(entries))
	back, err := decodeSegment(encoded(t, s))
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	for _, seg := range []*segment{s, back} {
		for p, want := range model {
			if got, ok := seg.lookup(p, hashPath(p)); !ok || got != want {
				t.Fatalf("lookup(%q) = %+v, %v; want %+v", p, got, ok, want)
			}
			for _, absent := range []string{p + "\x00", p[:len(p)-1], p + "z"} {
				if _, ok := model[absent]; !ok {
					if got, ok := seg.lookup(absent, hashPath(absent)); ok {
						t.Fatalf("lookup(%q) found %+v, which is not there", absent, got)
					}
				}
			}
		}
		if _, ok := seg.lookup("", hashPath("")); ok {
			t.Fatal(`lookup("") found an entry`)
		}
		if got := logEntries(t, &sourceLog{segs: []*segment{seg}}); len(got) != len(model) {
			t.Fatalf("iteration: %d entries, want %d", len(got), len(model))
		}
		checkCursor(t, &sourceLog{segs: []*segment{seg}}, model)
		for _, n := range []int64{lo - 1, lo, (lo + hi) / 2, hi} {
			if got, want := seg.accountThrough(n), accountOf(model, n); got != want {
				t.Fatalf("account through %d: %+v, want %+v", n, got, want)
			}
		}
	}
}

// Merging two segments gives the segment of their entries, the newer's
// where a path is in both, less those modified before the oldest time.
func TestSegmentMergeMatchesMap(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 2))
		older, newer, model := map[string]fileEntry{}, map[string]fileEntry{}, map[string]fileEntry{}
		for range r.IntN(200) {
			f := randomEntry(r, 0, 9)
			older[f.Path] = f
		}
		for range r.IntN(200) {
			f := randomEntry(r, 10, 19)
			newer[f.Path] = f
		}
		oldest := int64(math.MinInt64)
		if seed%2 == 1 {
			oldest = r.Int64() - math.MaxInt64/2
		}
		for _, m := range []map[string]fileEntry{older, newer} {
			for p, f := range m {
				if f.ModTime >= oldest {
					model[p] = f
				} else {
					delete(model, p)
				}
			}
		}
		build := func(lo, hi int64, m map[string]fileEntry) *segment {
			var entries []fileEntry
			for _, f := range m {
				entries = append(entries, f)
			}
			return segmentFromEntries(lo, hi, sortedUnique(entries))
		}
		merged, err := mergeSegments(build(0, 9, older), build(10, 19, newer), oldest)
		if err != nil {
			t.Fatal(err)
		}
		if got := logEntries(t, &sourceLog{segs: []*segment{merged}}); len(got) != len(model) {
			t.Fatalf("seed %d: merged %d entries, want %d", seed, len(got), len(model))
		}
		if merged.acct != accountOf(model, 19) {
			t.Fatalf("seed %d: merged account %+v, want %+v", seed, merged.acct, accountOf(model, 19))
		}
		if back, err := decodeSegment(encoded(t, merged)); err != nil || back.acct != merged.acct {
			t.Fatalf("seed %d: merged segment read back: %v", seed, err)
		}
		checkSegment(t, model, 0, 19)
	}
}

// A log driven by random plans, commits, discards, rewrites and reopens
// answers as a map of its entries does: lookups, the account through any
// log batch, the newest time and the greatest path.
func TestSourceLogMatchesModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 3))
		dir := t.TempDir()
		l := mustOpen(t, source.OSFS, dir)
		model := map[string]fileEntry{}
		committed := int64(-1)
		next := 0
		for step := range 200 {
			switch op := r.IntN(10); {
			case op < 5: // plan a batch and commit it, or not
				n := l.last + 1
				var files []fileEntry
				for range r.IntN(30) {
					f := fileEntry{Path: fmt.Sprintf("/in/%d/%x", r.IntN(5), r.Uint32()), Size: r.Int64N(1000), ModTime: int64(next)}
					if seed%2 == 1 {
						f.ETag = fmt.Sprintf(`"%x"`, r.Uint64())
					}
					files = append(files, f)
					next++
				}
				if err := l.add(n, slices.Clone(files)); err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					f.Batch = n
					model[f.Path] = f
				}
				if r.IntN(3) > 0 {
					committed = n
					if err := l.compactThrough(committed, keepAll); err != nil {
						t.Fatal(err)
					}
					for p, f := range model {
						if f.Batch <= l.compact { // folded: its ETag is let go
							f.ETag = ""
							model[p] = f
						}
					}
				}
			case op < 6: // drop what was planned beyond the commit
				if err := l.discardAfter(committed); err != nil {
					t.Fatal(err)
				}
				for p, f := range model {
					if f.Batch > committed {
						delete(model, p)
					}
				}
			case op < 7: // exclude files of an uncommitted batch
				if l.last > committed {
					var kept []fileEntry
					for _, f := range l.batches[l.last] {
						if r.IntN(2) == 0 {
							kept = append(kept, f)
						} else {
							delete(model, f.Path)
						}
					}
					if err := l.rewrite(l.last, kept); err != nil {
						t.Fatal(err)
					}
				}
			default:
				l = mustOpen(t, source.OSFS, dir)
			}
			for p, want := range model {
				if got, ok := l.lookup(p); !ok || got != want {
					t.Fatalf("seed %d step %d: lookup(%s) = %+v, %v; want %+v", seed, step, p, got, ok, want)
				}
			}
			checkCursor(t, l, model)
			if got := logEntries(t, l); len(got) != len(model) {
				t.Fatalf("seed %d step %d: %d entries, want %d", seed, step, len(got), len(model))
			}
			n := committed - int64(r.IntN(3))
			if got, want := l.account(n), accountOf(model, n); got != want {
				t.Fatalf("seed %d step %d: account through %d is %+v, want %+v", seed, step, n, got, want)
			}
			newest, any := l.maxModTime()
			wantNewest, wantAny := int64(math.MinInt64), false
			for _, f := range model {
				wantNewest, wantAny = max(wantNewest, f.ModTime), true
			}
			if newest != wantNewest || any != wantAny {
				t.Fatalf("seed %d step %d: newest %d %v; want %d %v", seed, step, newest, any, wantNewest, wantAny)
			}
		}
		if len(l.segs) > 12 {
			t.Fatalf("seed %d: %d segments", seed, len(l.segs))
		}
	}
}

// Reading a segment file never panics, whatever its bytes: a damaged one
// is an error.
func FuzzDecodeSegment(f *testing.F) {
	var entries []fileEntry
	for i := range 40 {
		entries = append(entries, fileEntry{Path: fmt.Sprintf("/in/part-%03d.csv", i), Size: int64(i), ModTime: int64(i * 7), Batch: 3})
	}
	f.Add(encoded(f, segmentFromEntries(3, 3, entries)))
	f.Add(encoded(f, segmentFromEntries(0, 0, nil)))
	f.Fuzz(func(t *testing.T, b []byte) {
		// With the checksum made right, the parser itself is exercised.
		if len(b) >= len(segmentMagic)+4 {
			b = append([]byte(segmentMagic), b[len(segmentMagic):len(b)-4]...)
			b = append(b, 0, 0, 0, 0)
			sum := crcOf(b[:len(b)-4])
			copy(b[len(b)-4:], sum)
		}
		s, err := decodeSegment(b)
		if err != nil {
			return
		}
		it := s.iter(0, nil)
		for it.next() {
			if got, ok := s.lookup(string(it.key), hashPath(string(it.key))); !ok || got != it.entry() {
				t.Fatalf("lookup(%q) = %+v, %v; want %+v", it.key, got, ok, it.entry())
			}
		}
	})
}

// BenchmarkSourceLogBatch is the log's share of a batch of 100 new files
// after n committed, without the listing: looking the new paths up,
// recording the batch, its account, and the compaction every tenth batch
// makes (amortised over the ops). It should not grow with n.
func BenchmarkSourceLogBatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			path := func(i int) string { return fmt.Sprintf("/landing/day=%04d/part-%07d.csv", i/1000, i) }
			entries := make([]fileEntry, n)
			for i := range entries {
				entries[i] = fileEntry{Path: path(i), Size: 8, ModTime: 1_700_000_000_000 + int64(i), Batch: 0}
			}
			l := mustOpen(b, source.OSFS, dir)
			if err := l.writeSegment(segmentFromEntries(0, 0, entries)); err != nil {
				b.Fatal(err)
			}
			entries = nil
			l = mustOpen(b, source.OSFS, dir)
			next := n
			b.ResetTimer()
			for batch := int64(1); batch <= int64(b.N); batch++ {
				c := l.cursor()
				var files []fileEntry
				for range 100 {
					p := path(next)
					if _, ok := c.lookup(p); ok {
						b.Fatalf("%s is new, and the log holds it", p)
					}
					files = append(files, fileEntry{Path: p, Size: 8, ModTime: 1_700_000_000_000 + int64(next)})
					next++
				}
				if _, ok := l.maxModTime(); !ok {
					b.Fatal("no newest time")
				}
				if err := l.add(batch, files); err != nil {
					b.Fatal(err)
				}
				l.account(batch - 1)
				if err := l.compactThrough(batch, keepAll); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
