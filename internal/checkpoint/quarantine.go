package checkpoint

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// QuarantineDir is where the checkpoint in dir keeps the input files set
// aside by on-bad-file: quarantine.
func QuarantineDir(dir string) string { return filepath.Join(dir, "quarantine") }

// Quarantine moves a bad input file into the checkpoint's QuarantineDir
// and returns where it went; a name already taken there gets a timestamp
// prefix.
func (c *Checkpoint) Quarantine(path string) (string, error) {
	dir := QuarantineDir(c.Dir)
	if err := c.fs.MkdirAll(dir); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(path))
	if _, err := c.fs.Stat(dst); err == nil {
		dst = filepath.Join(dir, fmt.Sprintf("%d-%s", time.Now().UnixNano(), filepath.Base(path)))
	}
	if err := c.fs.Rename(path, dst); err != nil {
		// Across file systems a rename fails: copy, then remove.
		if cerr := c.copyIn(path, dst); cerr != nil {
			return "", cerr
		}
		if rerr := os.Remove(path); rerr != nil {
			return "", rerr
		}
	}
	return dst, nil
}

// copyIn copies the input file src, which lies outside the checkpoint, to
// dst inside it.
func (c *Checkpoint) copyIn(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
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
