package source

import (
	"io/fs"
	"os"

	"github.com/floe-io/floe/internal/atomicfile"
)

// FS is the file system of a source's state directory, a part of the
// checkpoint: the engine hands its own through Env.FS, so that a test can
// fail any write or sync of the checkpoint, the source's included.
type FS interface {
	// WriteFile stores data at path whole or not at all: a temporary
	// file, written and synced, renamed over path, and the directory
	// synced. A missing directory is created.
	WriteFile(path string, data []byte) error
	// ReadFile returns the content of path.
	ReadFile(path string) ([]byte, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(dir string) ([]fs.DirEntry, error)
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(dir string) error
	// Remove deletes a file or an empty directory.
	Remove(path string) error
	// SyncDir makes a directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
}

// OSFS is the operating system's file system, which Env.StateFS gives a
// source when the engine hands none.
var OSFS FS = osFS{}

type osFS struct{}

func (osFS) WriteFile(path string, data []byte) error  { return atomicfile.Write(path, data) }
func (osFS) ReadFile(path string) ([]byte, error)      { return os.ReadFile(path) }
func (osFS) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (osFS) MkdirAll(dir string) error                 { return os.MkdirAll(dir, 0o755) }
func (osFS) Remove(path string) error                  { return os.Remove(path) }
func (osFS) SyncDir(dir string) error                  { return atomicfile.SyncDir(dir) }
