package checkpoint

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/floe-io/floe/source"
)

// FS is the file system a checkpoint is kept on: the operating system's
// (OS), or in tests one that fails a chosen write or sync (FaultFS). The
// source's state inside the checkpoint goes through its source.FS part.
type FS interface {
	source.FS
	// Stat describes path, following symbolic links.
	Stat(path string) (fs.FileInfo, error)
	// Rename moves a file or directory, replacing a file at to.
	Rename(from, to string) error
	// RemoveAll deletes path and everything under it; a missing path is
	// no error.
	RemoveAll(path string) error
	// MkdirTemp creates a new directory in dir, its name pattern with a
	// random string in place of the last "*", and returns its path.
	MkdirTemp(dir, pattern string) (string, error)
	// Create makes a new, empty file at path, replacing one there, for a
	// copy too large to hold in memory.
	Create(path string) (File, error)
	// Lock takes an exclusive lock on the file at path, created when
	// missing, without waiting; the lock holds until the closer is
	// closed or the process ends, however it ends.
	Lock(path string) (io.Closer, error)
}

// File is a file being written by Create.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// OS is the operating system's file system.
var OS FS = osFS{source.OSFS}

type osFS struct{ source.FS }

func (osFS) Stat(path string) (fs.FileInfo, error)         { return os.Stat(path) }
func (osFS) Rename(from, to string) error                  { return os.Rename(from, to) }
func (osFS) RemoveAll(path string) error                   { return os.RemoveAll(path) }
func (osFS) MkdirTemp(dir, pattern string) (string, error) { return os.MkdirTemp(dir, pattern) }

func (osFS) Create(path string) (File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Lock is flock(2): the kernel drops it when the process dies.
func (osFS) Lock(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
