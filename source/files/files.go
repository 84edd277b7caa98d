// Package files is the landing-directory source: Parquet, CSV and JSON-lines
// files dropped into a directory are read once each, in micro-batches, with
// the options and meaning of Spark's file stream source.
package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

func init() {
	floe.RegisterSource("files", func(cfg config.Source, env floe.SourceEnv) (floe.Source, error) {
		return New(cfg, env.StateDir)
	})
}

// freshWindow is how recently a file must have changed for a missing
// Parquet footer to mean "still being copied" rather than "corrupt".
const freshWindow = time.Minute

// Files reads a landing directory. Files are identified by path: a file
// planned once is never read again by the same query.
type Files struct {
	cfg   config.Source
	dir   string
	log   *sourceLog
	now   func() time.Time
	cap   map[string]int64 // the backlog fixed by an available-now run: path to size
	warns []string
	told  map[string]bool // changed-after-ingest warnings already given
	// cleaned is the last log batch clean-source handled in this run.
	cleaned *int64
}

var (
	_ floe.Source             = (*Files)(nil)
	_ floe.AvailableNowSource = (*Files)(nil)
	_ floe.ExcludingSource    = (*Files)(nil)
	_ floe.WarningSource      = (*Files)(nil)
	_ floe.DiscardingSource   = (*Files)(nil)
	_ floe.BacklogSource      = (*Files)(nil)
)

// offset is the file source's position: the last log batch included.
type offset struct {
	LogOffset int64 `json:"logOffset"`
}

// New opens the source; stateDir holds its log of seen files.
func New(cfg config.Source, stateDir string) (*Files, error) {
	dir, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("source path %s: %w", cfg.Path, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: source path %s: %v; create the landing directory or fix source.path", floe.ErrConfig, cfg.Path, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: source path %s is not a directory; point source.path at the landing directory", floe.ErrConfig, cfg.Path)
	}
	switch cfg.Format {
	case "parquet", "csv", "json":
	default:
		return nil, fmt.Errorf("%w: source format %q is not supported; use parquet, csv or json", floe.ErrConfig, cfg.Format)
	}
	if _, err := path.Match(cfg.PathGlobFilter, ""); err != nil {
		// Unchecked, a malformed filter silently matches nothing.
		return nil, fmt.Errorf("%w: source path-glob-filter %q is not a valid pattern (%v); use *, ?, [abc], [a-z] and [^a] as path.Match does", floe.ErrConfig, cfg.PathGlobFilter, err)
	}
	log, err := openLog(stateDir)
	if err != nil {
		return nil, err
	}
	return &Files{cfg: cfg, dir: dir, log: log, now: time.Now, told: map[string]bool{}}, nil
}

// Description names the directory and format; it identifies the source in
// snapshot summaries, so two queries over one directory are recognised.
func (s *Files) Description() string {
	return fmt.Sprintf("FileStreamSource[%s, format=%s]", s.dir, s.cfg.Format)
}

// InitialOffset is before the first log batch.
func (s *Files) InitialOffset() floe.Offset { return encode(offset{LogOffset: -1}) }

// PrepareForAvailableNow fixes the backlog: files arriving later wait for
// the next run, as with Spark's Trigger.AvailableNow.
func (s *Files) PrepareForAvailableNow(ctx context.Context) error {
	// This listing only fixes the backlog. Its warnings are dropped: the
	// listings that plan batches give them, after stale plans are discarded
	// (a file of a failed batch's plan has not been ingested, so it has not
	// "changed after it was ingested"), and without giving them twice.
	warns, told := s.warns, maps.Clone(s.told)
	cands, err := s.list(ctx)
	s.warns, s.told = warns, told
	if err != nil {
		return err
	}
	s.cap = make(map[string]int64, len(cands))
	for _, c := range cands {
		s.cap[c.Path] = c.Size
	}
	// list skips files of log batches planned by an earlier run that never
	// recorded the batch (a crash, or a failed batch whose offsets entry was
	// removed). LatestOffset discards those plans and the files become new
	// again; they were there when this run started, so they belong to its
	// backlog. Without this, such a file was silently skipped by one run.
	// Uncommitted plans are never compacted, so they are all in batches.
	for _, files := range s.log.batches {
		for _, f := range files {
			s.cap[f.Path] = f.Size
		}
	}
	return nil
}

// Backlog tells how much of an available-now run's input is left.
func (s *Files) Backlog() (floe.Backlog, bool) {
	if s.cap == nil {
		return floe.Backlog{}, false
	}
	b := floe.Backlog{TotalFiles: len(s.cap)}
	for p, size := range s.cap {
		if _, ok := s.log.seen[p]; !ok {
			b.RemainingFiles++
			b.RemainingBytes += size
		}
	}
	return b, true
}

// Warnings returns and clears what planning found worth telling.
func (s *Files) Warnings() []string {
	w := s.warns
	s.warns = nil
	return w
}

// LatestOffset lists the directory, takes new files up to limit, records
// them as the next log batch and returns its id.
func (s *Files) LatestOffset(ctx context.Context, start floe.Offset, limit floe.ReadLimit) (floe.Offset, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	if err := s.log.discardAfter(st.LogOffset); err != nil {
		return nil, err
	}
	cands, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	var picked []fileEntry
	var bytes int64
	for _, c := range cands {
		if _, ok := s.cap[c.Path]; s.cap != nil && !ok {
			continue
		}
		if limit.MaxFiles > 0 && len(picked) >= limit.MaxFiles {
			break
		}
		if limit.MaxBytes > 0 && len(picked) > 0 && bytes >= limit.MaxBytes {
			break
		}
		picked = append(picked, c)
		bytes += c.Size
	}
	if len(picked) == 0 {
		return start, nil
	}
	n := st.LogOffset + 1
	if err := s.log.add(n, picked); err != nil {
		return nil, err
	}
	return encode(offset{LogOffset: n}), nil
}

// list returns the files eligible for the next batch, in planning order.
func (s *Files) list(ctx context.Context) ([]fileEntry, error) {
	now := s.now()
	var cands []fileEntry
	nested := 0
	var maxSeen int64
	for _, f := range s.log.seen {
		maxSeen = max(maxSeen, f.ModTime)
	}
	ageLimit := int64(0)
	// As Spark does, the age limit is off when the newest files are taken
	// first under a file limit: the first batch would push the window past
	// the rest of the backlog, which would then never be read.
	ageOff := s.cfg.LatestFirst && s.cfg.MaxFilesPerTrigger > 0
	if s.cfg.MaxFileAge > 0 && len(s.log.seen) > 0 && !ageOff {
		ageLimit = maxSeen - time.Duration(s.cfg.MaxFileAge).Milliseconds()
	}
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.dir {
				return err
			}
			return nil // a file removed while listing
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if p != s.dir && hidden(name) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(s.dir, p)
		if !s.cfg.Recursive && strings.ContainsRune(rel, filepath.Separator) {
			nested++
			return nil
		}
		if s.cfg.PathGlobFilter != "" {
			if ok, _ := path.Match(s.cfg.PathGlobFilter, name); !ok {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		e := fileEntry{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixMilli()}
		if old, ok := s.log.seen[p]; ok {
			if (old.Size != e.Size || old.ModTime != e.ModTime) && !s.told[p] {
				s.told[p] = true
				s.warns = append(s.warns, fmt.Sprintf("file %s changed after it was ingested in batch %d (size %d -> %d); files are read once, so the change is not ingested", p, old.Batch, old.Size, e.Size))
			}
			return nil
		}
		if ageLimit > 0 && e.ModTime < ageLimit {
			return nil
		}
		if s.cfg.MinFileAge > 0 && now.Sub(info.ModTime()) < time.Duration(s.cfg.MinFileAge) {
			return nil
		}
		if s.cfg.Format == "parquet" && now.Sub(info.ModTime()) < freshWindow && !hasParquetFooter(p, e.Size) {
			return nil // still being copied in; its footer comes last
		}
		cands = append(cands, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list landing directory %s: %w", s.dir, err)
	}
	if nested > 0 {
		s.warns = append(s.warns, fmt.Sprintf("%d files sit in subdirectories of %s and are not read: the file source does not recurse by default; pass --recursive (source.recursive: true) to ingest them", nested, s.dir))
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.ModTime != b.ModTime {
			if s.cfg.LatestFirst {
				return a.ModTime > b.ModTime
			}
			return a.ModTime < b.ModTime
		}
		return a.Path < b.Path
	})
	return cands, nil
}

// hidden follows Hadoop's convention, which Spark's file source applies:
// names starting with "." or "_" are temporary or marker files.
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

func hasParquetFooter(p string, size int64) bool {
	if size < 12 {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		// A file that cannot be opened (no permission) is not one being
		// copied in: report it true so the file is planned and the read
		// names the file and the error, instead of deferring it silently.
		// A file removed since it was listed is skipped as before.
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return false
	}
	return string(tail[:]) == "PAR1"
}

// Read turns the files of log batches (start, end] into parts.
func (s *Files) Read(ctx context.Context, start, end floe.Offset) ([]floe.Part, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	en, err := decode(end)
	if err != nil {
		return nil, err
	}
	entries, err := s.log.files(st.LogOffset, en.LogOffset)
	if err != nil {
		return nil, err
	}
	parts := make([]floe.Part, len(entries))
	for i, e := range entries {
		parts[i] = &filePart{entry: e, cfg: s.cfg}
	}
	return parts, nil
}

// SizeBytes is the file's size when it was planned.
func (p *filePart) SizeBytes() int64 { return p.entry.Size }

// Exclude drops files from the uncommitted log batch end: a file still
// being written becomes new again, a quarantined one is gone from the
// directory.
func (s *Files) Exclude(ctx context.Context, end floe.Offset, names []string) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	var kept []fileEntry
	for _, f := range s.log.batches[en.LogOffset] {
		if !drop[f.Path] {
			kept = append(kept, f)
		}
	}
	if len(kept)+len(names) != len(s.log.batches[en.LogOffset]) {
		return fmt.Errorf("cannot drop %v from log batch %d of %s: not all of them are in it", names, en.LogOffset, s.dir)
	}
	return s.log.rewrite(en.LogOffset, kept)
}

// Discard forgets the plan of a batch the engine dropped before it
// committed anything (its offsets entry is gone): the log batches after
// start are removed and their files are new again. Without it the plan
// stays in the checkpoint until the next LatestOffset discards it.
func (s *Files) Discard(ctx context.Context, start, end floe.Offset) error {
	st, err := decode(start)
	if err != nil {
		return err
	}
	return s.log.discardAfter(st.LogOffset)
}

// Commit cleans up the files of committed batches (clean-source) and
// compacts the log.
func (s *Files) Commit(ctx context.Context, end floe.Offset) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	if s.cfg.CleanSource == "archive" || s.cfg.CleanSource == "delete" {
		for id, files := range s.log.batches {
			// Batches cleaned by this run are skipped; after a restart the
			// uncompacted ones are visited again, and their files are gone.
			if id > en.LogOffset || (s.cleaned != nil && id <= *s.cleaned) {
				continue
			}
			for _, f := range files {
				if err := s.clean(f); err != nil {
					s.warns = append(s.warns, err.Error())
				}
			}
		}
	}
	cleaned := en.LogOffset
	s.cleaned = &cleaned
	// The newest file seen is looked for only when the log is compacted:
	// a scan of every file seen on every commit would grow with the stream.
	maxSeen := int64(-1)
	keep := func(f fileEntry) bool {
		if s.cfg.MaxFileAge <= 0 {
			return true
		}
		if maxSeen < 0 {
			maxSeen = 0
			for _, f := range s.log.seen {
				maxSeen = max(maxSeen, f.ModTime)
			}
		}
		return f.ModTime >= maxSeen-time.Duration(s.cfg.MaxFileAge).Milliseconds()
	}
	return s.log.compactThrough(en.LogOffset, keep)
}

// clean archives or deletes one committed file. Files already gone were
// cleaned by an earlier run that stopped before compacting the log.
func (s *Files) clean(f fileEntry) error {
	p := f.Path
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean-source %s: %w", p, err)
	}
	if st.Size() != f.Size || st.ModTime().UnixMilli() != f.ModTime {
		// Rewritten in place since it was ingested: the new content was
		// never read, so it is neither deleted nor archived.
		return fmt.Errorf("clean-source left %s alone: it changed after it was ingested", p)
	}
	if s.cfg.CleanSource == "delete" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clean-source delete %s: %w", p, err)
		}
		return nil
	}
	rel, err := filepath.Rel(s.dir, p)
	if err != nil {
		return err
	}
	dst := filepath.Join(s.cfg.ArchiveDir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("clean-source archive %s: %w", p, err)
	}
	if err := os.Rename(p, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clean-source archive %s to %s: %w", p, dst, err)
	}
	return nil
}

// Close has nothing to release: every file handle is owned by its part.
func (s *Files) Close() error { return nil }

func encode(o offset) floe.Offset { return floe.EncodeOffset(o) }

func decode(o floe.Offset) (offset, error) { return floe.DecodeOffset[offset](o, "file source") }
