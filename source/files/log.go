package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/floe-io/floe/source"
)

// Committed log batches are folded into a segment once compactEvery of
// them have accumulated, as Spark's file source log compacts every 10
// batches, or sooner once they hold compactEntries files, so that a large
// batch does not linger in the plain form.
const (
	compactEvery   = 10
	compactEntries = 10_000
)

// fileEntry records one file handed to a batch: what was seen, so that a
// later change can be reported rather than re-read.
type fileEntry struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtimeMs"`
	Batch   int64  `json:"batch"`
	// ETag is an object's version on an object store, where a time does
	// not tell an object replaced within the same second.
	ETag string `json:"etag,omitempty"`
}

// sourceLog is the file source's record of every file it has planned,
// stored under <checkpoint>/sources/0 (docs/format/checkpoint.md): one
// JSON file per log batch N holding the files of that batch, until it is
// committed and folded into a segment, the sorted, encoded form of the
// entries of a range of log batches (segment.go). Segments merge as they
// grow, so each entry is written again a logarithmic number of times, and
// what a batch costs grows with its files, not with all those seen.
type sourceLog struct {
	fs   source.FS
	dir  string
	segs []*segment // by log batch range, oldest first
	// batches are the entries not yet folded into a segment, by log batch,
	// and recent the same by path.
	batches map[int64][]fileEntry
	recent  map[string]fileEntry
	last    int64 // highest log batch id, -1 when empty
	compact int64 // highest log batch folded into a segment, -1 when none
	// stale are files of the log directory that newer ones supersede (a
	// crash left them, or their removal failed); the next compaction
	// removes them.
	stale []string
}

func openLog(fsys source.FS, dir string) (*sourceLog, error) {
	l := &sourceLog{fs: fsys, dir: dir, batches: map[int64][]fileEntry{}, recent: map[string]fileEntry{}, last: -1, compact: -1}
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read source log %s: %w", dir, err)
	}
	type span struct {
		lo, hi int64
		name   string
	}
	var plain []int64
	var segs []span
	legacy := int64(-1) // the newest JSON compact file
	var legacyNames []string
	for _, e := range entries {
		name := e.Name()
		if lo, hi, ok := parseSegmentName(name); ok {
			segs = append(segs, span{lo, hi, name})
			continue
		}
		if id, ok := strings.CutSuffix(name, ".compact"); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				legacyNames = append(legacyNames, name)
				legacy = max(legacy, n)
			}
			continue
		}
		if n, err := strconv.ParseInt(name, 10, 64); err == nil {
			plain = append(plain, n)
		}
	}
	// The newest JSON compact file of an earlier version holds every entry
	// up to its log batch, unless it was written as a segment already.
	newest := int64(-1)
	for _, sp := range segs {
		newest = max(newest, sp.hi)
	}
	for _, name := range legacyNames {
		if n, _ := strconv.ParseInt(strings.TrimSuffix(name, ".compact"), 10, 64); n != legacy || legacy <= newest {
			l.stale = append(l.stale, name)
			continue
		}
		var files []fileEntry
		if err := l.readJSON(name, &files); err != nil {
			return nil, err
		}
		lo := legacy
		for _, f := range files {
			if f.Batch < 0 || f.Batch > legacy {
				return nil, fmt.Errorf("source log %s is corrupt (%s holds %s of log batch %d); restore the checkpoint from a backup", dir, name, f.Path, f.Batch)
			}
			lo = min(lo, f.Batch)
		}
		s := segmentFromEntries(lo, legacy, sortedUnique(files))
		s.legacy = name
		l.segs = append(l.segs, s)
		l.compact = legacy
	}
	// A merge writes the merged segment before it removes the two it
	// replaces: a segment within another's range is one of those.
	sort.Slice(segs, func(i, j int) bool {
		if segs[i].lo != segs[j].lo {
			return segs[i].lo < segs[j].lo
		}
		return segs[i].hi > segs[j].hi
	})
	for _, sp := range segs {
		switch {
		case sp.hi <= l.compact:
			l.stale = append(l.stale, sp.name)
			continue
		case sp.lo <= l.compact:
			return nil, fmt.Errorf("source log %s is corrupt (segment %s overlaps %s); restore the checkpoint from a backup", dir, sp.name, l.segs[len(l.segs)-1].name())
		}
		s, err := l.readSegment(sp.name)
		if err != nil {
			return nil, err
		}
		if s.lo != sp.lo || s.hi != sp.hi {
			return nil, fmt.Errorf("source log %s is corrupt (segment %s holds log batches %d to %d); restore the checkpoint from a backup", dir, sp.name, s.lo, s.hi)
		}
		l.segs = append(l.segs, s)
		l.compact = s.hi
	}
	sort.Slice(plain, func(i, j int) bool { return plain[i] < plain[j] })
	for _, n := range plain {
		if n <= l.compact {
			// Folded already; left over from a crash during compaction.
			l.stale = append(l.stale, strconv.FormatInt(n, 10))
			continue
		}
		var files []fileEntry
		if err := l.readJSON(strconv.FormatInt(n, 10), &files); err != nil {
			return nil, err
		}
		l.batches[n] = files
		for _, f := range files {
			l.recent[f.Path] = f
		}
	}
	l.last = l.compact
	if len(plain) > 0 {
		l.last = max(l.last, plain[len(plain)-1])
	}
	return l, nil
}

func (l *sourceLog) readJSON(name string, v any) error {
	path := filepath.Join(l.dir, name)
	data, err := l.fs.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read source log: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("source log %s is corrupt (%v); restore the checkpoint from a backup", path, err)
	}
	return nil
}

func (l *sourceLog) readSegment(name string) (*segment, error) {
	path := filepath.Join(l.dir, name)
	data, err := l.fs.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read source log: %w", err)
	}
	s, err := decodeSegment(data)
	if err != nil {
		return nil, fmt.Errorf("source log %s is corrupt (%v); restore the checkpoint from a backup", path, err)
	}
	return s, nil
}

// sortedUnique sorts entries by path, keeping the newest log batch's entry
// of a path.
func sortedUnique(entries []fileEntry) []fileEntry {
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Path != entries[j].Path {
			return entries[i].Path < entries[j].Path
		}
		return entries[i].Batch > entries[j].Batch
	})
	out := entries[:0]
	for i, f := range entries {
		if i == 0 || f.Path != entries[i-1].Path {
			out = append(out, f)
		}
	}
	return out
}

// add writes log batch n with files.
func (l *sourceLog) add(n int64, files []fileEntry) error {
	for i := range files {
		files[i].Batch = n
	}
	data, err := json.Marshal(files)
	if err != nil {
		return err
	}
	if err := l.fs.WriteFile(filepath.Join(l.dir, strconv.FormatInt(n, 10)), data); err != nil {
		return fmt.Errorf("write source log batch %d: %w", n, err)
	}
	l.forget(n)
	l.batches[n] = files
	for _, f := range files {
		l.recent[f.Path] = f
	}
	l.last = max(l.last, n)
	return nil
}

// forget drops the entries of plain log batch n from memory.
func (l *sourceLog) forget(n int64) {
	for _, f := range l.batches[n] {
		if l.recent[f.Path].Batch == n {
			delete(l.recent, f.Path)
		}
	}
	delete(l.batches, n)
}

// discardAfter drops log batches beyond n. They were planned by a run that
// stopped before recording the batch in the offsets log, so nothing read
// them and their files become new again.
func (l *sourceLog) discardAfter(n int64) error {
	for id := range l.batches {
		if id <= n {
			continue
		}
		if err := l.fs.Remove(filepath.Join(l.dir, strconv.FormatInt(id, 10))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("discard source log batch %d: %w", id, err)
		}
		l.forget(id)
	}
	if l.last > n {
		l.last = n
	}
	return nil
}

// files returns the files of log batches in (start, end].
func (l *sourceLog) files(start, end int64) ([]fileEntry, error) {
	var out []fileEntry
	for n := start + 1; n <= end; n++ {
		files, ok := l.batches[n]
		if !ok {
			return nil, fmt.Errorf("source log batch %d is missing from %s (compacted or deleted); the checkpoint cannot replay it", n, l.dir)
		}
		out = append(out, files...)
	}
	return out, nil
}

// rewrite replaces the content of an uncommitted log batch.
func (l *sourceLog) rewrite(n int64, files []fileEntry) error { return l.add(n, files) }

// lookup finds the entry of a file planned before, by path: in the plain
// batches, then in the segments, newest first.
func (l *sourceLog) lookup(path string) (fileEntry, bool) {
	if f, ok := l.recent[path]; ok {
		return f, true
	}
	h := hashPath(path)
	for i := len(l.segs) - 1; i >= 0; i-- {
		if f, ok := l.segs[i].lookup(path, h); ok {
			return f, true
		}
	}
	return fileEntry{}, false
}

// logCursor looks up the paths of a listing: as lookup does, but cheaper
// for paths in increasing order (a directory's entries, an object store's
// keys), where each segment is read forward from the last path found. A
// path before the previous one starts over. It sees the segments of the
// log when it was made and the plain batches as they are.
type logCursor struct {
	l    *sourceLog
	segs []segmentCursor
	last string
}

func (l *sourceLog) cursor() *logCursor {
	c := &logCursor{l: l, segs: make([]segmentCursor, len(l.segs))}
	for i, s := range l.segs {
		c.segs[i].s = s
	}
	return c
}

func (c *logCursor) lookup(path string) (fileEntry, bool) {
	if f, ok := c.l.recent[path]; ok {
		return f, true
	}
	if path < c.last {
		for i := range c.segs {
			c.segs[i].at = false
		}
	}
	c.last = path
	h := hashPath(path)
	for i := len(c.segs) - 1; i >= 0; i-- {
		if f, ok := c.segs[i].seek(path, h); ok {
			return f, true
		}
	}
	return fileEntry{}, false
}

// maxModTime is the newest modification time of a file in the log; false
// when the log holds none.
func (l *sourceLog) maxModTime() (int64, bool) {
	newest, any := int64(math.MinInt64), false
	for _, s := range l.segs {
		if s.acct.total > 0 {
			newest, any = max(newest, s.acct.wm.ms), true
		}
	}
	for _, files := range l.batches {
		for _, f := range files {
			newest, any = max(newest, f.ModTime), true
		}
	}
	return newest, any
}

// account is the count, digest and watermark of the log's entries of log
// batches up to n: the segments' headers combined, and the plain batches.
func (l *sourceLog) account(n int64) account {
	a := account{wm: watermark{ms: math.MinInt64}}
	for _, s := range l.segs {
		a.addAll(s.accountThrough(n))
	}
	for id, files := range l.batches {
		if id <= n {
			for _, f := range files {
				a.add(f)
			}
		}
	}
	return a
}

func (d *digest) xor(o digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

// addAll adds the files of another account, of other files.
func (a *account) addAll(o account) {
	if o.total == 0 {
		return
	}
	a.total += o.total
	a.digest.xor(o.digest)
	if a.wm.less(fileEntry{Path: o.wm.path, ModTime: o.wm.ms}) {
		a.wm = o.wm
	}
}

// compactThrough folds log batches up to committed into a segment once
// enough have accumulated, and merges segments as they grow: the newest
// into the one before it while it is at least half that one's size. Files
// modified before oldest are let go (max-file-age: a listing ignores
// them). Each file written is durable before the files it replaces are
// removed, so a crash at any point leaves a log that reads the same.
func (l *sourceLog) compactThrough(committed, oldest int64) error {
	var pending []int64
	n := 0
	for id, files := range l.batches {
		if id <= committed {
			pending = append(pending, id)
			n += len(files)
		}
	}
	if len(pending) < compactEvery && n < compactEntries {
		return nil
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i] < pending[j] })
	if len(l.segs) > 0 && l.segs[0].legacy != "" {
		// A checkpoint of an earlier version: its JSON compact file is
		// written in the segment form.
		if err := l.writeSegment(l.segs[0]); err != nil {
			return err
		}
		l.stale = append(l.stale, l.segs[0].legacy)
		l.segs[0].legacy = ""
	}
	var all []fileEntry
	for _, id := range pending {
		for _, f := range l.batches[id] {
			if f.ModTime >= oldest {
				// An ETag pins the reads and the clean-up of a batch, both
				// done by now; folded, an entry tells a replaced object by
				// its size and time, and its 16 random bytes stay out.
				f.ETag = ""
				all = append(all, f)
			}
		}
	}
	s := segmentFromEntries(pending[0], pending[len(pending)-1], sortedUnique(all))
	if err := l.writeSegment(s); err != nil {
		return err
	}
	l.segs = append(l.segs, s)
	l.compact = s.hi
	for _, id := range pending {
		l.forget(id)
		l.stale = append(l.stale, strconv.FormatInt(id, 10))
	}
	for len(l.segs) >= 2 {
		older, newer := l.segs[len(l.segs)-2], l.segs[len(l.segs)-1]
		if 2*newer.acct.total < older.acct.total {
			break
		}
		merged, err := mergeSegments(older, newer, oldest)
		if err != nil {
			return fmt.Errorf("merge source log segments %s and %s: %w", older.name(), newer.name(), err)
		}
		if err := l.writeSegment(merged); err != nil {
			return err
		}
		l.segs = append(l.segs[:len(l.segs)-2], merged)
		l.stale = append(l.stale, older.name(), newer.name())
	}
	return l.removeStale()
}

func (l *sourceLog) writeSegment(s *segment) error {
	data, err := s.encode()
	if err == nil {
		err = l.fs.WriteFile(filepath.Join(l.dir, s.name()), data)
	}
	if err != nil {
		return fmt.Errorf("compact source log: %w", err)
	}
	return nil
}

// removeStale removes the files newer ones supersede; those it fails to
// remove wait for the next compaction.
func (l *sourceLog) removeStale() error {
	var errs []error
	kept := l.stale[:0]
	for _, name := range l.stale {
		if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			kept = append(kept, name)
		}
	}
	l.stale = kept
	if len(errs) == 0 {
		errs = append(errs, l.fs.SyncDir(l.dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("compact source log: %w", err)
	}
	return nil
}

// restore starts an empty log with files, all of log batch n, as one
// segment: the state a rebuilt checkpoint resumes from.
func (l *sourceLog) restore(n int64, files []fileEntry) error {
	if err := l.fs.MkdirAll(l.dir); err != nil {
		return fmt.Errorf("create source log %s: %w", l.dir, err)
	}
	if n < 0 {
		if len(files) > 0 {
			return fmt.Errorf("cannot restore %d files into the source log %s before its first log batch", len(files), l.dir)
		}
		return nil
	}
	for i := range files {
		files[i].Batch = n
	}
	s := segmentFromEntries(n, n, sortedUnique(files))
	data, err := s.encode()
	if err == nil {
		err = l.fs.WriteFile(filepath.Join(l.dir, s.name()), data)
	}
	if err != nil {
		return fmt.Errorf("write source log %s: %w", l.dir, err)
	}
	l.segs = []*segment{s}
	l.compact, l.last = n, n
	return nil
}
