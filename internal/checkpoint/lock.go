package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"

	"github.com/floe-io/floe/internal/ingest"
)

// lockDir takes the lock of the checkpoint in dir, creating the directory:
// two runs of one query at once (a scheduled job overlapping its previous
// run) would plan the same batch twice.
func lockDir(fsys FS, dir string) (io.Closer, error) {
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create checkpoint %s: %w", dir, err)
	}
	l, err := fsys.Lock(filepath.Join(dir, ".lock"))
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("%w: checkpoint %s is in use by another floe run of this query; wait for it to finish or stop it", ingest.ErrCheckpointInUse, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("lock checkpoint %s: %w", dir, err)
	}
	return l, nil
}
