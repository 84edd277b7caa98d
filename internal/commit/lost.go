package commit

import (
	"context"
	"fmt"
	stdfs "io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// NewestMetadata is the newest metadata file in dir (a table's metadata
// directory) and its version: the greatest version, and of two files of a
// version the later written, since a commit killed after writing its file
// leaves one of a version a later commit writes again. ok is false when
// dir holds none or cannot be listed.
func NewestMetadata(fsys icebergio.IO, dir string) (newest string, version int64, ok bool) {
	l, listable := fsys.(icebergio.ListableIO)
	if !listable {
		return "", 0, false
	}
	version = -1
	var newestTime time.Time
	_ = l.WalkDir(dir, func(p string, d stdfs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		v, ok := metadataVersion(path.Base(p))
		if !ok {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if v > version || (v == version && info.ModTime().After(newestTime)) {
			newest, version, newestTime = p, v, info.ModTime()
		}
		return nil
	})
	return newest, version, newest != ""
}

// metadataVersion reads the version of a file named
// <version>-<uuid>.metadata.json.
func metadataVersion(name string) (int64, bool) {
	base, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok {
		return 0, false
	}
	v, _, ok := strings.Cut(base, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// refuseLostLocation undoes the creation of tbl when its location already
// holds a table that has been committed to (a metadata file of version 1
// or more): the catalog lost that table, and a new one beside it would
// hide its rows, then mix its metadata versions with the new table's.
// Creators racing for a new table write version 0 only, so they pass.
func (c *Committer) refuseLostLocation(ctx context.Context, tbl *table.Table) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil
	}
	dir := strings.TrimSuffix(tbl.Location(), "/") + "/metadata"
	newest, v, ok := NewestMetadata(fsys, dir)
	if !ok || v < 1 {
		return nil
	}
	if err := c.Catalog.DropTable(ctx, c.Ident); err != nil {
		return fmt.Errorf("table %s: drop the table just created over the metadata of a lost one at %s: %w", c.Name(), tbl.Location(), err)
	}
	_ = fsys.Remove(tbl.MetadataLocation())
	return fmt.Errorf("%w: table %s is not in the catalog, but its location %s holds a table with commits (metadata version %d): the catalog lost it, and a new table there would hide its rows. To start the table over, delete %s; to keep it, register it again: floe table register %s %s",
		ingest.ErrTableLost, c.Name(), tbl.Location(), v, tbl.Location(), c.Name(), newest)
}
