package catalogs

import (
	"fmt"
	"os"
	"sync"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/internal/ingest"
)

// An SQLite catalog whose database file is deleted or replaced while floe
// runs goes on committing into the open, unlinked file: every commit
// "succeeds" and is lost when the process ends. The file each open
// embedded catalog started with is kept, so that a writer can check it
// before recording a commit as done.
var watched sync.Map // catalog.Catalog -> dbFile

type dbFile struct {
	path string
	info os.FileInfo
}

func watch(cat catalog.Catalog, path string) {
	if info, err := os.Stat(path); err == nil {
		watched.Store(cat, dbFile{path: path, info: info})
	}
}

// Intact reports an error when cat is an SQLite catalog whose database
// file is no longer the one it opened; other catalogs are always intact.
func Intact(cat catalog.Catalog) error {
	v, ok := watched.Load(cat)
	if !ok {
		return nil
	}
	f := v.(dbFile)
	info, err := os.Stat(f.path)
	if err == nil && os.SameFile(info, f.info) {
		return nil
	}
	return fmt.Errorf("%w: the catalog database %s was deleted or replaced while floe ran, so commits since went into the deleted file; restore the database from a backup, or register each table's newest metadata file in the new catalog with floe table register", ingest.ErrConfig, f.path)
}

// Forget stops watching a catalog being closed.
func Forget(cat catalog.Catalog) { watched.Delete(cat) }
