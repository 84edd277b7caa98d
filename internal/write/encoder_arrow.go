package write

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// arrowEncoder writes one data file with arrow-go's pqarrow.
type arrowEncoder struct {
	rowGroups
	fw *pqarrow.FileWriter
}

func newArrowEncoder(schema *arrow.Schema, out *countingWriter, opts fileOptions) (*arrowEncoder, error) {
	fw, err := pqarrow.NewFileWriter(schema, out, opts.props, opts.arrowProps)
	if err != nil {
		return nil, err
	}
	e := &arrowEncoder{fw: fw}
	e.rowGroups = newRowGroups(func() int64 { return out.n }, opts, opts.groupRows(0), fw.WriteBuffered, fw.NewBufferedRowGroupChecked)
	return e, nil
}

func (e *arrowEncoder) Close() (*metadata.FileMetaData, error) {
	if err := e.fw.Close(); err != nil {
		return nil, err
	}
	return e.fw.FileMetadata()
}
