package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/floe-io/floe/source"
)

// compactEvery is how many log entries accumulate before they are folded
// into one compact file, as Spark's file source log does every 10 batches.
const compactEvery = 10

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
// stored under <checkpoint>/sources/0: one file per log batch N holding the
// files of that batch, plus N.compact files that fold all earlier ones in.
type sourceLog struct {
	fs      source.FS
	dir     string
	seen    map[string]fileEntry
	batches map[int64][]fileEntry // entries not yet folded into a compact file
	last    int64                 // highest log batch id, -1 when empty
	compact int64                 // id of the newest compact file, -1 when none
}

func openLog(fsys source.FS, dir string) (*sourceLog, error) {
	l := &sourceLog{fs: fsys, dir: dir, seen: map[string]fileEntry{}, batches: map[int64][]fileEntry{}, last: -1, compact: -1}
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read source log %s: %w", dir, err)
	}
	var plain []int64
	for _, e := range entries {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, ".compact"); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > l.compact {
				l.compact = n
			}
			continue
		}
		if n, err := strconv.ParseInt(name, 10, 64); err == nil {
			plain = append(plain, n)
		}
	}
	if l.compact >= 0 {
		var files []fileEntry
		if err := l.readJSON(filepath.Join(dir, strconv.FormatInt(l.compact, 10)+".compact"), &files); err != nil {
			return nil, err
		}
		for _, f := range files {
			l.seen[f.Path] = f
		}
		l.last = l.compact
	}
	sort.Slice(plain, func(i, j int) bool { return plain[i] < plain[j] })
	for _, n := range plain {
		if n <= l.compact {
			continue // folded already; left over from a crash during compaction
		}
		var files []fileEntry
		if err := l.readJSON(filepath.Join(dir, strconv.FormatInt(n, 10)), &files); err != nil {
			return nil, err
		}
		l.batches[n] = files
		for _, f := range files {
			l.seen[f.Path] = f
		}
		if n > l.last {
			l.last = n
		}
	}
	return l, nil
}

func (l *sourceLog) readJSON(path string, v any) error {
	data, err := l.fs.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read source log: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("source log %s is corrupt (%v); restore the checkpoint from a backup", path, err)
	}
	return nil
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
	l.batches[n] = files
	for _, f := range files {
		l.seen[f.Path] = f
	}
	if n > l.last {
		l.last = n
	}
	return nil
}

// discardAfter drops log batches beyond n. They were planned by a run that
// stopped before recording the batch in the offsets log, so nothing read
// them and their files become new again.
func (l *sourceLog) discardAfter(n int64) error {
	for id, files := range l.batches {
		if id <= n {
			continue
		}
		if err := l.fs.Remove(filepath.Join(l.dir, strconv.FormatInt(id, 10))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("discard source log batch %d: %w", id, err)
		}
		for _, f := range files {
			delete(l.seen, f.Path)
		}
		delete(l.batches, id)
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
func (l *sourceLog) rewrite(n int64, files []fileEntry) error {
	for _, f := range l.batches[n] {
		delete(l.seen, f.Path)
	}
	return l.add(n, files)
}

// compactThrough folds log batches up to committed into one compact file
// once enough have accumulated. keep filters the entries worth remembering
// (max-file-age lets old ones go, since such files are ignored anyway).
func (l *sourceLog) compactThrough(committed int64, keep func(fileEntry) bool) error {
	pending := 0
	for id := range l.batches {
		if id <= committed {
			pending++
		}
	}
	if pending < compactEvery {
		return nil
	}
	var all []fileEntry
	for _, f := range l.seen {
		if f.Batch <= committed && keep(f) {
			all = append(all, f)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	if err := l.fs.WriteFile(filepath.Join(l.dir, strconv.FormatInt(committed, 10)+".compact"), data); err != nil {
		return fmt.Errorf("compact source log: %w", err)
	}
	// The compact file is durable; older files are now redundant.
	for id := range l.batches {
		if id <= committed {
			_ = l.fs.Remove(filepath.Join(l.dir, strconv.FormatInt(id, 10)))
			delete(l.batches, id)
		}
	}
	if l.compact >= 0 {
		_ = l.fs.Remove(filepath.Join(l.dir, strconv.FormatInt(l.compact, 10)+".compact"))
	}
	l.compact = committed
	kept := make(map[string]bool, len(all))
	for _, f := range all {
		kept[f.Path] = true
	}
	for p, f := range l.seen {
		if f.Batch <= committed && !kept[p] {
			delete(l.seen, p)
		}
	}
	return l.fs.SyncDir(l.dir)
}

// restore starts an empty log with files, all of log batch n, as one
// compact entry: the state a rebuilt checkpoint resumes from.
func (l *sourceLog) restore(n int64, files []fileEntry) error {
	for i := range files {
		files[i].Batch = n
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	data, err := json.Marshal(files)
	if err != nil {
		return err
	}
	if err := l.fs.MkdirAll(l.dir); err != nil {
		return fmt.Errorf("create source log %s: %w", l.dir, err)
	}
	if err := l.fs.WriteFile(filepath.Join(l.dir, strconv.FormatInt(n, 10)+".compact"), data); err != nil {
		return fmt.Errorf("write source log %s: %w", l.dir, err)
	}
	for _, f := range files {
		l.seen[f.Path] = f
	}
	l.compact, l.last = n, n
	return nil
}
