package ingest

import (
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
)

// DataFile is what a writer hands the committer for one file it wrote: the
// table it belongs to, the location and the Iceberg data-file descriptor
// built from the Parquet footer (statistics and partition included), so
// that the commit never re-reads files. It is plain data, so that a
// committer in another process can take it.
type DataFile struct {
	Table     string
	Path      string
	SizeBytes int64
	Rows      int64
	File      iceberg.DataFile
}

// RemoveFiles deletes data files that will not be committed. A file
// already gone is no error; any other failure leaves an orphan, which
// remove-orphan-files finds.
func RemoveFiles(fsys icebergio.IO, files []DataFile) {
	for _, f := range files {
		_ = fsys.Remove(f.Path)
	}
}
