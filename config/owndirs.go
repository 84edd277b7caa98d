package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// CheckOwnDirs refuses a files source that would read floe's own output
// back as input: dirs maps configuration keys ("checkpoint",
// "catalog.warehouse") to the local directories floe writes for them, and
// source.source-archive-dir is checked too. A directory is refused when it
// is the landing directory, or lies below it and source.recursive reads it
// (a hidden directory, "_checkpoint" say, is never listed, so it is fine).
//
// Validate compares paths as written; this resolves them on disk, through
// symbolic links, so one directory under two names is still one. That is
// why it is separate: it reads the filesystem, and the caller knows the
// directories (the warehouse may come from $FLOE_WAREHOUSE).
func (p *Pipeline) CheckOwnDirs(dirs map[string]string) error {
	s := &p.Source
	if s.Type == "iceberg" || s.Path == "" {
		return nil
	}
	remote := strings.Contains(s.Path, "://") && !strings.HasPrefix(s.Path, "file://")
	// where is a directory as compared, and as shown; ok is false for one
	// that cannot be compared (on another kind of store, or unresolvable).
	where := func(d string) (real, shown string, ok bool) {
		d = strings.TrimPrefix(d, "file://")
		if remote || strings.Contains(d, "://") {
			return strings.TrimRight(d, "/"), d, remote && strings.Contains(d, "://")
		}
		real, err := RealPath(d)
		if err != nil {
			return "", "", false
		}
		if shown = d; real != filepath.Clean(d) {
			shown = d + " (" + real + " on disk)"
		}
		return real, shown, true
	}
	src, _, ok := where(s.Path)
	if !ok {
		return nil // the source reports a landing directory it cannot reach
	}
	check := map[string]string{}
	for k, d := range dirs {
		check[k] = d
	}
	if s.CleanSource == "archive" && s.ArchiveDir != "" {
		check["source.source-archive-dir"] = s.ArchiveDir
	}
	var ps problems
	for _, key := range []string{"checkpoint", "catalog.warehouse", "source.source-archive-dir"} {
		d, ok := check[key]
		if !ok || d == "" {
			continue
		}
		real, shown, ok := where(d)
		if !ok {
			continue
		}
		what := strings.TrimPrefix(key, "catalog.")
		what = strings.TrimPrefix(what, "source.")
		rel, inside := below(src, real, remote)
		switch {
		case !inside:
			// Outside the landing directory.
		case rel == ".":
			ps.add(key, 0, "the %s %s is the landing directory source.path %s itself, so floe would read its own files as input; "+
				"use a directory outside the landing directory", what, shown, s.Path)
		case key != "source.source-archive-dir" && !s.Recursive:
			// Below the landing directory, which is read without its subdirectories.
		case key != "source.source-archive-dir" && hiddenPath(rel):
			// Below a hidden directory, which the listing skips.
		default:
			ps.add(key, 0, "the %s %s is inside the landing directory source.path %s, and source.recursive reads every directory below it, "+
				"so floe would ingest its own output again on every run; move the %s outside the landing directory, or turn recursive off",
				what, shown, s.Path, what)
		}
	}
	return ps.err()
}

// below is dir relative to base ("." for base itself, "/"-separated for a
// URL), and whether dir is base or inside it.
func below(base, dir string, urls bool) (string, bool) {
	if urls {
		if dir == base {
			return ".", true
		}
		rel, ok := strings.CutPrefix(dir, base+"/")
		return filepath.FromSlash(rel), ok
	}
	rel, err := filepath.Rel(base, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// hiddenPath tells whether a relative path goes through a directory the
// files source never lists (a name starting with "." or "_").
func hiddenPath(rel string) bool {
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") {
			return true
		}
	}
	return false
}

// RealPath is p made absolute with every symbolic link resolved, as far as
// p exists: a directory floe has not created yet is resolved through its
// nearest existing parent, so that it compares with the directory it will
// be.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for dir := abs; ; {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = parent
	}
}
