package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// store is where the landing files are: a local directory tree, or a
// prefix of an object store (objects.go). Listing differs too much between
// the two to share (links and inodes here, prefixes and ETags there);
// everything after it goes through this interface.
type store interface {
	// stat is the file at path as it is now; a missing one is
	// fs.ErrNotExist.
	stat(ctx context.Context, path string) (fileEntry, error)
	// open reads the file e names; an object store's reads fail with an
	// UnstableFileError once the object is no longer the one planned.
	// Reads of the file's end are kept in tail, which every open of one
	// part shares: its Parquet footer is read once, not once per reader.
	open(ctx context.Context, e fileEntry, tail *tailCache) (object, error)
	// remove deletes a file; one already gone is not an error.
	remove(ctx context.Context, path string) error
	// archive moves a file to dst, an object store by a copy and a delete.
	archive(ctx context.Context, e fileEntry, dst string) error
	// pinned tells whether every read of a planned file fails once the
	// file is no longer that version (S3's If-Match), which makes a look
	// at the file before and after reading it needless.
	pinned() bool
	// join is the path of rel below the landing root.
	join(rel string) string
	// rel is path relative to the landing root, with "/" separators.
	rel(path string) (string, error)
	close() error
}

// object is an open landing file: read front to back by the text and Avro
// readers, at offsets by the Parquet reader and the column-chunk copy.
type object interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}

// isURL tells an object-store location from a local path.
func isURL(p string) bool { return strings.Contains(p, "://") }

// localPath is a file:// URL's path, or p.
func localPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}

// localStore is a directory on a local (or mounted) file system.
type localStore struct{ dir string }

func (l localStore) stat(_ context.Context, p string) (fileEntry, error) {
	st, err := os.Stat(p)
	if err != nil {
		return fileEntry{}, err
	}
	return fileEntry{Path: p, Size: st.Size(), ModTime: st.ModTime().UnixMilli()}, nil
}

func (l localStore) open(_ context.Context, e fileEntry, _ *tailCache) (object, error) {
	return os.Open(e.Path)
}

func (l localStore) remove(_ context.Context, p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (l localStore) archive(_ context.Context, e fileEntry, dst string) error {
	if isURL(dst) {
		return fmt.Errorf("the archive directory %s is not on the local file system, where the landing directory is; archive to a local directory", dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Rename(e.Path, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (l localStore) pinned() bool { return false }

func (l localStore) join(rel string) string { return filepath.Join(l.dir, filepath.FromSlash(rel)) }

func (l localStore) rel(p string) (string, error) {
	r, err := filepath.Rel(l.dir, p)
	return filepath.ToSlash(r), err
}

func (l localStore) close() error { return nil }

// sameVersion tells whether two looks at a path saw the same file: by
// size and time, and by ETag where an object store gives one.
func sameVersion(a, b fileEntry) bool {
	if a.Size != b.Size {
		return false
	}
	if a.ETag != "" && b.ETag != "" {
		return a.ETag == b.ETag
	}
	return a.ModTime == b.ModTime
}
