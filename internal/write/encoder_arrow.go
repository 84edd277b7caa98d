package write

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// fileEncoder encodes the records of one Parquet data file. Two exist: the
// parquet-go encoder, about 3x cheaper per row on flat schemas, and arrow-go's
// arrowEncoder is the arrow-go path.
type arrowEncoder struct {
	fw       *pqarrow.FileWriter
	rowGroup int64
}

func newArrowEncoder(schema *arrow.Schema, out io.Writer, opts fileOptions) (*arrowEncoder, error) {
	fw, err := pqarrow.NewFileWriter(schema, out, opts.props, opts.arrowProps)
	if err != nil {
		return nil, err
	}
	return &arrowEncoder{fw: fw, rowGroup: opts.rowGroup}, nil
}

func (e *arrowEncoder) Write(rec arrow.RecordBatch) error {
	if err := e.fw.WriteBuffered(rec); err != nil {
		return err
	}
	if e.fw.RowGroupTotalCompressedBytes() >= e.rowGroup {
		return e.fw.NewBufferedRowGroupChecked()
	}
	return nil
}

func (e *arrowEncoder) EncodedBytes() int64 {
	return e.fw.TotalCompressedBytes() + e.fw.RowGroupTotalCompressedBytes()
}

func (e *arrowEncoder) Close() (*metadata.FileMetaData, error) {
	if err := e.fw.Close(); err != nil {
		return nil, err
	}
	return e.fw.FileMetadata()
}
