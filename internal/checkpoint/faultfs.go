package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"sync"
)

// ErrInjected is the error FaultFS fails an operation with.
var ErrInjected = errors.New("injected fault")

// Op is a kind of file-system operation FaultFS counts and fails.
type Op int

const (
	// OpWrite changes the file system: a file written, created, renamed
	// or removed, a directory made or removed, the lock taken.
	OpWrite Op = iota
	// OpSync makes changes durable: the sync of a file written, of a
	// directory.
	OpSync
	// OpRead reads a file, lists a directory or describes a path.
	OpRead
	numOps
)

// FaultFS is an FS for tests that counts operations by kind and fails the
// nth of one kind, as pebble's errorfs does: a test fails each write and
// each sync of a run in turn, and checks what the next run makes of it.
//
// WriteFile is a write, then a sync: its write failed changes nothing,
// its sync failed leaves the new file in place, as a directory sync that
// fails after the rename does, and the caller is told it may not last.
type FaultFS struct {
	fs FS

	mu       sync.Mutex
	counts   [numOps]int
	op       Op
	at       int
	injected string
}

var _ FS = (*FaultFS)(nil)

// NewFaultFS wraps fsys; it fails nothing until FailAt.
func NewFaultFS(fsys FS) *FaultFS { return &FaultFS{fs: fsys} }

// FailAt makes the nth operation of kind op from now on fail, counted from
// 1, and starts the counts again; n 0 fails none.
func (f *FaultFS) FailAt(op Op, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts, f.op, f.at, f.injected = [numOps]int{}, op, n, ""
}

// Count is how many operations of kind op ran since FailAt.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// Injected names the operation that was failed ("sync /c/commits/2"), or
// is "" while none was.
func (f *FaultFS) Injected() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// step counts one operation and fails it when it is the chosen one.
func (f *FaultFS) step(op Op, name, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[op]++
	if op != f.op || f.counts[op] != f.at {
		return nil
	}
	f.injected = name + " " + path
	return &fs.PathError{Op: name, Path: path, Err: ErrInjected}
}

// WriteFile counts a write, then a sync.
func (f *FaultFS) WriteFile(path string, data []byte) error {
	if err := f.step(OpWrite, "write", path); err != nil {
		return err
	}
	if err := f.fs.WriteFile(path, data); err != nil {
		return err
	}
	return f.step(OpSync, "sync", path)
}

// ReadFile counts a read.
func (f *FaultFS) ReadFile(path string) ([]byte, error) {
	if err := f.step(OpRead, "read", path); err != nil {
		return nil, err
	}
	return f.fs.ReadFile(path)
}

// ReadDir counts a read.
func (f *FaultFS) ReadDir(dir string) ([]fs.DirEntry, error) {
	if err := f.step(OpRead, "readdir", dir); err != nil {
		return nil, err
	}
	return f.fs.ReadDir(dir)
}

// Stat counts a read.
func (f *FaultFS) Stat(path string) (fs.FileInfo, error) {
	if err := f.step(OpRead, "stat", path); err != nil {
		return nil, err
	}
	return f.fs.Stat(path)
}

// MkdirAll counts a write.
func (f *FaultFS) MkdirAll(dir string) error {
	if err := f.step(OpWrite, "mkdir", dir); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir)
}

// MkdirTemp counts a write.
func (f *FaultFS) MkdirTemp(dir, pattern string) (string, error) {
	if err := f.step(OpWrite, "mkdirtemp", dir); err != nil {
		return "", err
	}
	return f.fs.MkdirTemp(dir, pattern)
}

// Remove counts a write.
func (f *FaultFS) Remove(path string) error {
	if err := f.step(OpWrite, "remove", path); err != nil {
		return err
	}
	return f.fs.Remove(path)
}

// RemoveAll counts a write.
func (f *FaultFS) RemoveAll(path string) error {
	if err := f.step(OpWrite, "removeall", path); err != nil {
		return err
	}
	return f.fs.RemoveAll(path)
}

// Rename counts a write.
func (f *FaultFS) Rename(from, to string) error {
	if err := f.step(OpWrite, "rename", from); err != nil {
		return err
	}
	return f.fs.Rename(from, to)
}

// SyncDir counts a sync.
func (f *FaultFS) SyncDir(dir string) error {
	if err := f.step(OpSync, "sync", dir); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

// Lock counts a write: it creates the lock file.
func (f *FaultFS) Lock(path string) (io.Closer, error) {
	if err := f.step(OpWrite, "lock", path); err != nil {
		return nil, err
	}
	return f.fs.Lock(path)
}

// Create counts a write, and the file's writes and syncs as its own.
func (f *FaultFS) Create(path string) (File, error) {
	if err := f.step(OpWrite, "create", path); err != nil {
		return nil, err
	}
	file, err := f.fs.Create(path)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, path: path}, nil
}

// faultFile counts a created file's writes and syncs with its FaultFS's.
type faultFile struct {
	File
	fs   *FaultFS
	path string
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.step(OpWrite, "write", f.path); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.step(OpSync, "sync", f.path); err != nil {
		return err
	}
	return f.File.Sync()
}
