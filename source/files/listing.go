package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// heldFiles are the files a listing found and left out, by reason: an
// available-now run that leaves one, or a stream that ignores one for good,
// names it in a warning.
type heldFiles struct {
	young      []string // younger than min-file-age: a later batch
	unfinished []string // Parquet without its footer, fresh: a later batch
	old        []string // older than max-file-age: never
}

// list returns the files eligible for the next batch, in planning order,
// and the files it held back; it lists only paths after `after` (relative
// to the root, see incremental), or everything when after is "". An
// incremental listing of an object store, whose keys come in order, ends
// once enough says the files found fill a batch: the rest come later.
func (s *Files) list(ctx context.Context, after string, enough func(fileEntry) bool) ([]fileEntry, heldFiles, listing, error) {
	now := s.now()
	var cands []fileEntry
	var held heldFiles
	maxSeen, anySeen := s.log.maxModTime()
	ageLimit := int64(0)
	// As Spark does, the age limit is off when the newest files are taken
	// first under a file limit: the first batch would push the window past
	// the rest of the backlog, which would then never be read.
	ageOff := s.cfg.LatestFirst && s.cfg.MaxFilesPerTrigger > 0
	if s.cfg.MaxFileAge > 0 && anySeen && !ageOff {
		ageLimit = maxSeen - time.Duration(s.cfg.MaxFileAge).Milliseconds()
	}
	l := listing{full: after == ""}
	seen := s.log.cursor()
	visit := func(e fileEntry, rel string) error {
		p := e.Path
		if old, ok := seen.lookup(p); ok {
			if !sameVersion(old, e) {
				s.warnOnce("changed:"+p, fmt.Sprintf("file %s changed after it was ingested in batch %d (size %d -> %d); files are read once, so the change is not ingested", p, old.Batch, old.Size, e.Size))
			}
			l.handled = append(l.handled, rel)
			l.lastRead = max(l.lastRead, rel)
			return nil
		}
		age := now.Sub(time.UnixMilli(e.ModTime))
		switch {
		case ageLimit > 0 && e.ModTime < ageLimit:
			held.old = append(held.old, p)
			l.handled = append(l.handled, rel)
		case s.cfg.MinFileAge > 0 && age < time.Duration(s.cfg.MinFileAge):
			held.young = append(held.young, p)
			l.held = append(l.held, rel)
		case s.cfg.Format == "parquet" && age < freshWindow && !s.hasParquetFooter(p, e.Size):
			held.unfinished = append(held.unfinished, p) // still being copied in; its footer comes last
			l.held = append(l.held, rel)
		default:
			cands = append(cands, e)
			if after != "" && enough != nil && enough(e) {
				return errEnough
			}
		}
		return nil
	}
	var nested int
	if o, ok := s.store.(*objectStore); ok {
		var err error
		if nested, err = s.listObjects(ctx, o, after, visit); err != nil {
			return nil, held, l, fmt.Errorf("list landing prefix %s: %w", s.dir, err)
		}
		if nested > 0 {
			what := fmt.Sprintf("%d prefixes below %s hold objects that are not read", nested, s.dir)
			if nested == 1 {
				what = fmt.Sprintf("1 prefix below %s holds objects that are not read", s.dir)
			}
			s.warnOnce(fmt.Sprintf("nested:%d", nested), what+": the file source does not recurse by default; pass --recursive (source.recursive: true) to ingest them")
		}
	} else {
		w := &walk{s: s, ctx: ctx, after: after, read: map[string]string{}, listed: map[fileID]string{}}
		w.file = func(p, rel string, info fs.FileInfo) {
			_ = visit(fileEntry{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixMilli()}, rel)
		}
		err := w.run()
		if errors.Is(err, errLinked) || err == nil && w.linked {
			// The walk met a link: this run lists in full (see errLinked).
			s.inc.off = true
			s.tell(fmt.Sprintf("listing the whole of %s on every batch: it holds linked files, which only a full listing reads once", s.dir))
			return s.list(ctx, "", nil)
		}
		if err != nil {
			return nil, held, l, fmt.Errorf("list landing directory %s: %w", s.dir, err)
		}
		if w.nested > 0 {
			// Every listing finds them again: told once a run, and again
			// only when their number changes.
			what := fmt.Sprintf("%d files sit in subdirectories of %s and are not read", w.nested, s.dir)
			if w.nested == 1 {
				what = fmt.Sprintf("1 file sits in a subdirectory of %s and is not read", s.dir)
			}
			s.warnOnce(fmt.Sprintf("nested:%d", w.nested), what+": the file source does not recurse by default; pass --recursive (source.recursive: true) to ingest them")
		}
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
	return cands, held, l, nil
}

// warnHeld names the files a listing for a batch held back that may
// otherwise never be read, or not soon: the ones max-file-age ignores, and
// Parquet files waiting for their footer. Each file is named once a run.
func (s *Files) warnHeld(held heldFiles) {
	s.warnFiles("old:", held.old, func(names string) string {
		return fmt.Sprintf("max-file-age (%s) ignores %s: older than the newest file ingested by more than that, so never read; raise or turn off source.max-file-age to read them", s.cfg.MaxFileAge, names)
	})
	s.warnFiles("unfinished:", held.unfinished, func(names string) string {
		return fmt.Sprintf("waiting for %s: Parquet without its footer, changed within the last %s, so taken to be still being written; a later batch reads it once complete, or reports it as a bad file if it has no footer by then", names, freshWindow)
	})
}

// warnFiles gives one warning, from message, naming those of paths not
// named for the same kind of reason earlier in the run.
func (s *Files) warnFiles(kind string, paths []string, message func(names string) string) {
	var fresh []string
	for _, p := range paths {
		if !s.told[kind+p] {
			s.told[kind+p] = true
			fresh = append(fresh, p)
		}
	}
	if len(fresh) > 0 {
		s.warns = append(s.warns, message(fileNames(fresh)))
	}
}

// warnOnce adds a warning unless one with the same key was given this run.
func (s *Files) warnOnce(key, msg string) {
	if s.told[key] {
		return
	}
	s.told[key] = true
	s.warns = append(s.warns, msg)
}

// fileNames lists paths for a message: all of a few, the first of many.
func fileNames(paths []string) string {
	const shown = 5
	sort.Strings(paths)
	if len(paths) == 1 {
		return paths[0]
	}
	if len(paths) <= shown {
		return fmt.Sprintf("%d files (%s)", len(paths), strings.Join(paths, ", "))
	}
	return fmt.Sprintf("%d files (%s and %d more)", len(paths), strings.Join(paths[:shown], ", "), len(paths)-shown)
}

// walk is one pass over the landing directory. Symbolic links are
// followed, to files and to directories, as the files they name are what
// producers meant to land (a volume mounted through a link, a file linked
// in). Each real directory and each file is read once, under the first
// path that reaches it: the landing directory's own tree comes first, then
// the directories that links lead to, then the files that links name. So
// a link to a directory already read, or to one of its ancestors (a loop),
// adds nothing, and neither does a link to a file already listed.
type walk struct {
	s         *Files
	ctx       context.Context
	after     string // list only paths (relative, "/"-separated) after it
	file      func(p, rel string, info fs.FileInfo)
	read      map[string]string // real directory -> the path it is read by
	listed    map[fileID]string // file -> the path it is listed by
	links     []string          // links to directories, followed after the real tree
	fileLinks []string          // links to files, followed last
	nested    int               // files in subdirectories, which a non-recursive source skips
	linked    bool              // a file with several hard links was met (see errLinked)
}

// fileID identifies a file whatever its name.
type fileID struct{ dev, ino uint64 }

func (w *walk) run() error {
	root, err := filepath.EvalSymlinks(w.s.dir)
	if err != nil {
		return err
	}
	w.read[root] = w.s.dir
	if err := w.dir(w.s.dir, root); err != nil {
		return err
	}
	for len(w.links) > 0 {
		l := w.links[0]
		w.links = w.links[1:]
		if err := w.follow(l); err != nil {
			return err
		}
	}
	for _, p := range w.fileLinks {
		if info, err := os.Stat(p); err == nil {
			w.visit(p, info)
		}
	}
	return nil
}

// dir lists the directory p, whose real path is real. Only the landing
// directory itself must be readable; a subdirectory removed while listing
// is skipped, and one that cannot be read is named in a warning.
func (w *walk) dir(p, real string) error {
	entries, err := os.ReadDir(p)
	if err != nil {
		if p == w.s.dir {
			return err
		}
		if !errors.Is(err, fs.ErrNotExist) {
			w.s.warnOnce("unreadable:"+p, fmt.Sprintf("directory %s cannot be read (%v); its files are not ingested until it can", p, err))
		}
		return nil
	}
	for _, d := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if hidden(name) {
			continue
		}
		child := filepath.Join(p, name)
		if w.after != "" {
			if d.Type()&fs.ModeSymlink != 0 {
				return errLinked
			}
			rel := w.rel(child)
			if d.IsDir() && !descend(rel, w.after) || !d.IsDir() && rel <= w.after {
				continue
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			info, err := os.Stat(child)
			if err != nil {
				if _, lerr := os.Lstat(child); lerr == nil {
					w.s.warnOnce("link:"+child, fmt.Sprintf("symbolic link %s cannot be followed (%v); it is skipped until it can", child, err))
				}
				continue
			}
			if info.IsDir() {
				w.links = append(w.links, child)
			} else {
				w.fileLinks = append(w.fileLinks, child)
			}
		case d.IsDir():
			childReal := filepath.Join(real, name)
			if w.own(child, childReal) {
				continue
			}
			w.read[childReal] = child
			if err := w.dir(child, childReal); err != nil {
				return err
			}
		default:
			info, err := d.Info()
			if err != nil {
				continue // removed while listing
			}
			w.visit(child, info)
		}
	}
	return nil
}

// follow reads the directory a link names, unless it was read already. A
// link inside the path a directory is read by leads back to it: a loop.
func (w *walk) follow(link string) error {
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		w.s.warnOnce("link:"+link, fmt.Sprintf("symbolic link %s cannot be followed (%v); it is skipped until it can", link, err))
		return nil
	}
	if prev, ok := w.read[real]; ok {
		if within(link, prev) {
			w.s.warnOnce("link:"+link, fmt.Sprintf("symbolic link %s leads back to %s, a directory that holds it (a loop); it is not followed", link, prev))
		} else {
			w.s.warnOnce("link:"+link, fmt.Sprintf("symbolic link %s leads to %s, which is read already as %s; its files are read once, under that path", link, real, prev))
		}
		return nil
	}
	if w.own(link, real) {
		return nil
	}
	w.read[real] = link
	return w.dir(link, real)
}

// own tells whether a directory is, or is inside, one floe writes (the
// checkpoint, the warehouse, the archive), which is never read as input.
// A recursive source holding one is refused at start; this covers links
// into them, and keeps their files out of a non-recursive source's count.
func (w *walk) own(p, real string) bool {
	for _, o := range w.s.own {
		if within(real, o) {
			if w.s.cfg.Recursive {
				w.s.warnOnce("own:"+p, fmt.Sprintf("directory %s is %s, which floe writes; it is not read as input", p, o))
			}
			return true
		}
	}
	return false
}

// errEnough ends an incremental listing that found a batch's files.
var errEnough = errors.New("enough files for a batch")

// errLinked ends a walk after a path that only a full listing reads
// right: a symbolic link, or a file with several hard links, may name a
// file read before under a path that sorts before the walk's start, and
// only a walk that reaches that path too reads the file once.
var errLinked = errors.New("a linked file")

// rel is p relative to the landing directory, "/" between levels.
func (w *walk) rel(p string) string {
	rel, _ := filepath.Rel(w.s.dir, p)
	return filepath.ToSlash(rel)
}

// visit hands a regular file, reached at p, to the listing.
func (w *walk) visit(p string, info fs.FileInfo) {
	if !info.Mode().IsRegular() {
		return
	}
	rel := w.rel(p)
	if !w.s.cfg.Recursive && strings.Contains(rel, "/") {
		w.nested++
		return
	}
	if g := w.s.cfg.PathGlobFilter; g != "" {
		if ok, _ := path.Match(g, filepath.Base(p)); !ok {
			return
		}
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		if w.after != "" && st.Nlink > 1 {
			w.linked = true
			return
		}
		id := fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
		if prev, ok := w.listed[id]; ok {
			w.s.warnOnce("same:"+p, fmt.Sprintf("%s is the same file as %s; it is read once, under that path", p, prev))
			return
		}
		w.listed[id] = p
	}
	w.file(p, rel, info)
}

// within reports whether dir is base or below it; both are clean paths.
func within(dir, base string) bool {
	return dir == base || strings.HasPrefix(dir, strings.TrimSuffix(base, string(filepath.Separator))+string(filepath.Separator))
}

// hidden follows Hadoop's convention, which Spark's file source applies:
// names starting with "." or "_" are temporary or marker files.
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// hasParquetFooter tells whether a Parquet file ends as a complete one
// does. An object store shows an object only once its upload is complete,
// so a Parquet object without its footer is not being copied in: it is
// planned, and its read reports it as a bad file.
func (s *Files) hasParquetFooter(p string, size int64) bool {
	if _, ok := s.store.(*objectStore); ok {
		return true
	}
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

// listObjects lists the landing prefix of an object store after the
// relative path `after` (all of it when ""), with the rules of the local
// walk: hidden names (a leading "." or "_" in any part of the
// key below the prefix) and the prefixes floe writes are skipped, and the
// glob filter applies to the object's name. It returns how many prefixes
// a listing without recursion left unread.
func (s *Files) listObjects(ctx context.Context, o *objectStore, after string, visit func(e fileEntry, rel string) error) (int, error) {
	nested := 0
	err := o.list(ctx, s.cfg.Recursive, after, func(e fileEntry, isDir bool) error {
		rel, err := o.rel(e.Path)
		if err != nil || after != "" && rel <= after {
			return nil
		}
		for _, part := range strings.Split(rel, "/") {
			if hidden(part) {
				return nil
			}
		}
		for _, own := range s.ownURLs {
			if e.Path == own || strings.HasPrefix(e.Path, own+"/") {
				return nil
			}
		}
		if isDir {
			nested++
			return nil
		}
		if g := s.cfg.PathGlobFilter; g != "" {
			if ok, _ := path.Match(g, path.Base(rel)); !ok {
				return nil
			}
		}
		if err := visit(e, rel); err != nil {
			return err
		}
		return ctx.Err()
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	return nested, err
}
