package maintenance

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/scan"
)

// A binpack rewrite hands the writer each data file that no delete
// touches as a part it may copy by column chunk, as ingestion copies a
// Parquet input: the writer checks that the file's columns are the
// table's (by field id, name, type and nullability) and its row groups
// large enough to keep, and decodes and merges it otherwise.

// dataFilePart is one data file of a rewrite, read as the table's rows by
// the group's reader, or copied by chunk.
type dataFilePart struct {
	task   table.FileScanTask
	fs     icebergio.IO
	footer *metadata.FileMetaData
	schema *arrow.Schema // the file's own columns, with their field ids
	rd     *scan.FileReader
}

var _ ingest.ParquetPart = (*dataFilePart)(nil)

// copyablePart returns t as a part the writer may copy, or nil when t has
// deletes or is not Parquet.
func copyablePart(fs icebergio.IO, rd *scan.FileReader, t table.FileScanTask) (*dataFilePart, error) {
	if len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0 || t.File.FileFormat() != iceberg.ParquetFile {
		return nil, nil
	}
	f, err := fs.Open(t.File.FilePath())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", t.File.FilePath(), err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, &ingest.BadFileError{Path: t.File.FilePath(), Err: err}
	}
	defer pf.Close()
	md := pf.MetaData()
	if md.NumRowGroups() == 0 {
		return nil, nil
	}
	schema, err := pqarrow.FromParquet(md.Schema, nil, md.KeyValueMetadata())
	if err != nil {
		return nil, nil
	}
	return &dataFilePart{task: t, fs: fs, footer: md, schema: schema, rd: rd}, nil
}

func (p *dataFilePart) Name() string     { return p.task.File.FilePath() }
func (p *dataFilePart) SizeBytes() int64 { return p.task.File.FileSizeBytes() }

// Schema is the file's own columns: what a copy takes. Read as rows, the
// file yields the table's columns, which are these when it is copied.
func (p *dataFilePart) Schema(context.Context) (*arrow.Schema, error) { return p.schema, nil }

// Open reads the file as the group's other files are read.
func (p *dataFilePart) Open(ctx context.Context) (array.RecordReader, error) {
	return p.rd.Open(ctx, []table.FileScanTask{p.task}), nil
}

// OpenParquet opens the file for a copy of its chunks.
func (p *dataFilePart) OpenParquet(context.Context) (ingest.ParquetFile, error) {
	f, err := p.fs.Open(p.task.File.FilePath())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p.task.File.FilePath(), err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("stat %s: %w", p.task.File.FilePath(), err)
	}
	return &dataFile{File: f, size: st.Size(), footer: p.footer}, nil
}

// dataFile is an open data file of the table.
type dataFile struct {
	icebergio.File
	size   int64
	footer *metadata.FileMetaData
}

func (f *dataFile) Size() int64                    { return f.size }
func (f *dataFile) Footer() *metadata.FileMetaData { return f.footer }

// copyableParts splits a binpack group's tasks into the parts the writer
// may copy and the tasks it reads as rows.
func copyableParts(ctx context.Context, tbl *table.Table, rd *scan.FileReader, tasks []table.FileScanTask) ([]ingest.Part, []table.FileScanTask, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	var parts []ingest.Part
	var rest []table.FileScanTask
	for _, t := range tasks {
		p, err := copyablePart(fs, rd, t)
		if err != nil {
			return nil, nil, err
		}
		if p == nil {
			rest = append(rest, t)
		} else {
			parts = append(parts, p)
		}
	}
	return parts, rest, nil
}
