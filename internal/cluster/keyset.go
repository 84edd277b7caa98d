package cluster

import (
	"context"
	"fmt"
	"io"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// inlineKeySet is the largest key set an event carries itself: a control
// record stays well under the brokers' default message size (1 MB), and
// a larger set goes into a file of the table beside its data files.
const inlineKeySet = 256 << 10

// putKeySet puts an upsert's key set into ev: in the event, or in a file
// of tbl when it is large.
func putKeySet(ctx context.Context, tbl *table.Table, ev *Output, keys []byte) error {
	if len(keys) <= inlineKeySet {
		ev.KeySet = keys
		return nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("table %s: its file system cannot write files", ev.Table)
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return err
	}
	path := locs.NewDataLocation(uuid.NewString() + "-keys.arrows")
	if err := wfs.WriteFile(path, keys); err != nil {
		return fmt.Errorf("write the changed keys of table %s to %s: %w", ev.Table, path, err)
	}
	ev.KeySetFile = path
	return nil
}

// readKeySet reads a key set file.
func readKeySet(ctx context.Context, tbl *table.Table, path string) ([]byte, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the changed keys in %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read the changed keys in %s: %w", path, err)
	}
	return b, nil
}
