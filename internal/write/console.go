package write

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

// Print is the console sink: each part's rows as JSON lines on out, after
// keep, drop or only (proj may be nil). A part is printed once it was read
// whole, so a bad file prints nothing of itself; a batch that a crash
// interrupts is printed again on restart, as Spark's console sink does.
func Print(ctx context.Context, out io.Writer, parts []ingest.Part, proj *conform.Projection) (int64, error) {
	var rows int64
	var buf bytes.Buffer
	for _, part := range parts {
		buf.Reset()
		n, err := printPart(ctx, part, proj, &buf)
		if err != nil {
			return rows, err
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return rows, err
		}
		rows += n
	}
	return rows, nil
}

func printPart(ctx context.Context, part ingest.Part, proj *conform.Projection, buf *bytes.Buffer) (int64, error) {
	rdr, err := part.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if proj != nil {
			if rec, err = proj.Apply(rec); err != nil {
				return n, &ingest.BadFileError{Path: part.Name(), Err: err}
			}
		} else {
			rec.Retain()
		}
		err = array.RecordToJSON(rec, buf)
		n += rec.NumRows()
		rec.Release()
		if err != nil {
			return n, err
		}
	}
	if err := rdr.Err(); err != nil {
		var uf *ingest.UnstableFileError
		if ctx.Err() != nil || errors.As(err, &uf) || ingest.NamesInput(err) {
			return n, err
		}
		return n, &ingest.BadFileError{Path: part.Name(), Err: err}
	}
	return n, nil
}
