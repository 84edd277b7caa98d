package checkpoint

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/floe-io/floe/source"
)

// QuarantineDir is where the checkpoint in dir keeps the input files set
// aside by on-bad-file: quarantine.
func QuarantineDir(dir string) string { return filepath.Join(dir, "quarantine") }

// Quarantine moves a bad input file into the checkpoint's QuarantineDir
// and returns where it went; a name already taken there gets a timestamp
// prefix.
func (c *Checkpoint) Quarantine(path string) (string, error) {
	dst, err := c.quarantinePath(path)
	if err != nil {
		return "", err
	}
	if err := c.fs.Rename(path, dst); err != nil {
		// Across file systems a rename fails: copy, then remove.
		in, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer in.Close()
		if cerr := c.copyIn(in, dst); cerr != nil {
			return "", cerr
		}
		if rerr := os.Remove(path); rerr != nil {
			return "", rerr
		}
	}
	return dst, nil
}

// QuarantineRemote is Quarantine for a file on an object store (a URL):
// its bytes are copied in, then the source deletes it.
func (c *Checkpoint) QuarantineRemote(ctx context.Context, path string, files source.RemoteFiles) (string, error) {
	dst, err := c.quarantinePath(path)
	if err != nil {
		return "", err
	}
	in, err := files.OpenFile(ctx, path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	if err := c.copyIn(in, dst); err != nil {
		return "", err
	}
	if err := files.RemoveFile(ctx, path); err != nil {
		return "", err
	}
	return dst, nil
}

// quarantinePath is where path goes in QuarantineDir: under its name, or
// with a timestamp prefix when the name is taken.
func (c *Checkpoint) quarantinePath(path string) (string, error) {
	dir := QuarantineDir(c.Dir)
	if err := c.fs.MkdirAll(dir); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(path))
	if _, err := c.fs.Stat(dst); err == nil {
		dst = filepath.Join(dir, fmt.Sprintf("%d-%s", time.Now().UnixNano(), filepath.Base(path)))
	}
	return dst, nil
}

// copyIn copies an input file, which lies outside the checkpoint, to dst
// inside it.
func (c *Checkpoint) copyIn(in io.Reader, dst string) error {
	out, err := c.fs.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
