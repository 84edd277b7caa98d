package floe

import (
	"bytes"
	"context"
	"errors"
	"os"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// print is the console sink's batch: each part's rows as JSON lines on
// Options.Stdout, after keep, drop or only. A part is printed once it was
// read whole, so a bad file prints nothing of itself; a batch that a crash
// interrupts is printed again on restart, as Spark's console sink does.
func (p *Pipeline) print(ctx context.Context, parts []Part) (WriteResult, error) {
	out := p.opts.Stdout
	if out == nil {
		out = os.Stdout
	}
	var res WriteResult
	var buf bytes.Buffer
	for _, part := range parts {
		buf.Reset()
		n, err := p.printPart(ctx, part, &buf)
		if err != nil {
			return res, err
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return res, err
		}
		res.Rows += n
	}
	return res, nil
}

func (p *Pipeline) printPart(ctx context.Context, part Part, buf *bytes.Buffer) (int64, error) {
	rdr, err := part.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if p.sink.project != nil {
			if rec, err = p.sink.project.apply(rec); err != nil {
				return n, &BadFileError{Path: part.Name(), Err: err}
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
		var uf *UnstableFileError
		var bf *BadFileError
		if ctx.Err() != nil || errors.As(err, &uf) || errors.As(err, &bf) {
			return n, err
		}
		return n, &BadFileError{Path: part.Name(), Err: err}
	}
	return n, nil
}
