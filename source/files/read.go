package files

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// batchRows is the number of rows per Arrow record handed to the writer:
// large enough to amortise per-record costs, small enough to stream.
const batchRows = 64 * 1024

// filePart reads one landing file.
type filePart struct {
	entry fileEntry
	cfg   config.Source
}

func (p *filePart) Name() string { return p.entry.Path }

func (p *filePart) bad(err error) error { return &floe.BadFileError{Path: p.entry.Path, Err: err} }

// Open checks that the file is the one planned, then reads it in its format.
// The returned reader checks again at the end, so a file that grew or was
// rewritten while read is reported as unstable instead of ingested torn.
func (p *filePart) Open(ctx context.Context) (array.RecordReader, error) {
	if err := p.unchanged(); err != nil {
		return nil, err
	}
	if p.entry.Size == 0 {
		return nil, p.bad(errors.New("the file is empty (0 bytes); remove it or replace it with a complete file"))
	}
	var (
		rdr array.RecordReader
		err error
	)
	switch p.cfg.Format {
	case "parquet":
		rdr, err = p.openParquet(ctx)
	case "csv":
		rdr, err = p.openCSV()
	case "json":
		rdr, err = p.openJSON()
	default:
		err = fmt.Errorf("format %q is not supported", p.cfg.Format)
	}
	if err != nil {
		if cerr := p.unchanged(); cerr != nil {
			return nil, cerr
		}
		var bf *floe.BadFileError
		if errors.As(err, &bf) {
			return nil, err
		}
		return nil, p.bad(err)
	}
	return &checkedReader{RecordReader: rdr, part: p}, nil
}

// unchanged compares the file with what planning saw.
func (p *filePart) unchanged() error {
	st, err := os.Stat(p.entry.Path)
	if err != nil {
		return p.bad(fmt.Errorf("cannot read the file: %w", err))
	}
	if st.Size() != p.entry.Size || st.ModTime().UnixMilli() != p.entry.ModTime {
		return &floe.UnstableFileError{Path: p.entry.Path, Reason: fmt.Sprintf("size %d -> %d since it was listed", p.entry.Size, st.Size())}
	}
	return nil
}

func (p *filePart) openParquet(ctx context.Context) (array.RecordReader, error) {
	pf, err := file.OpenParquetFile(p.entry.Path, false)
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet file (%v); it may be truncated or corrupt", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot read the Parquet schema: %w", err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot read the Parquet data: %w", err)
	}
	return &closingReader{RecordReader: rr, close: pf.Close}, nil
}

func (p *filePart) openCSV() (array.RecordReader, error) {
	delim := ','
	if d := p.cfg.CSV.Delimiter; d != "" {
		delim = []rune(d)[0]
	}
	header := p.cfg.CSV.Header == nil || *p.cfg.CSV.Header
	schema, err := explicitSchema(p.cfg.Schema)
	if err != nil {
		return nil, err
	}
	if schema == nil {
		if schema, err = inferCSV(p.entry.Path, delim, header); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(p.entry.Path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20), schema,
		csv.WithHeader(header), csv.WithComma(delim), csv.WithChunk(batchRows),
		csv.WithNullReader(true, ""))
	return &closingReader{RecordReader: r, close: f.Close}, nil
}

func (p *filePart) openJSON() (array.RecordReader, error) {
	schema, err := explicitSchema(p.cfg.Schema)
	if err != nil {
		return nil, err
	}
	if schema == nil {
		if schema, err = inferJSON(p.entry.Path); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(p.entry.Path)
	if err != nil {
		return nil, err
	}
	return newJSONReader(f, schema), nil
}

// checkedReader turns read errors into BadFileErrors naming the file, and
// re-checks the file when it has been read to the end.
type checkedReader struct {
	array.RecordReader
	part *filePart
	err  error
}

func (r *checkedReader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.RecordReader.Next() {
		return true
	}
	if err := r.RecordReader.Err(); err != nil && !errors.Is(err, io.EOF) {
		if cerr := r.part.unchanged(); cerr != nil {
			r.err = cerr
		} else {
			var bf *floe.BadFileError
			if errors.As(err, &bf) {
				r.err = err
			} else {
				r.err = r.part.bad(err)
			}
		}
		return false
	}
	r.err = r.part.unchanged()
	return false
}

func (r *checkedReader) Err() error { return r.err }

// closingReader closes the underlying file when the reader is released.
type closingReader struct {
	array.RecordReader
	close func() error
	done  bool
}

func (r *closingReader) Release() {
	r.RecordReader.Release()
	if !r.done {
		r.done = true
		_ = r.close()
	}
}

// explicitSchema turns the configured columns into an Arrow schema, or nil
// when none are configured.
func explicitSchema(cols []config.Column) (*arrow.Schema, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := arrowType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("source.schema[%d] %s: %w", i, c.Name, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: !c.Required}
	}
	return arrow.NewSchema(fields, nil), nil
}
