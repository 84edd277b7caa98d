package write_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// A small batch of decoded parts is written by one writer while the next
// part is read ahead: the file holds the parts' rows in their order, as
// one writer alone writes them.
func TestSmallBatchReadAheadKeepsOrder(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(5000)
	defer rec.Release()
	inputs := asParts(chunkInputs(t, rec, 700, 1500, 2600, 3100, 4200), func(p fixture.ParquetFilePart) ingest.Part { return arrowOnly{p} })
	tbl, files := writeTable(t, rec.Schema(), nil, inputs)
	if len(files) != 1 || files[0].Rows != 5000 {
		t.Fatalf("%d files, want one of 5,000 rows", len(files))
	}
	// One part is written without reading ahead.
	whole, _ := writeTable(t, rec.Schema(), nil, asParts(chunkInputs(t, rec), func(p fixture.ParquetFilePart) ingest.Part { return arrowOnly{p} }))
	if got, want := tableJSON(t, tbl), tableJSON(t, whole); got != want || len(got) < 10_000 {
		t.Fatalf("rows read back are not the input's, in order (%d vs %d bytes of JSON)", len(got), len(want))
	}
}

// A part that fails while it is read ahead fails the batch naming it, and
// nothing is left behind.
func TestSmallBatchReadAheadFails(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(3000)
	defer rec.Release()
	inputs := asParts(chunkInputs(t, rec, 1000, 2000), func(p fixture.ParquetFilePart) ingest.Part { return arrowOnly{p} })
	inputs[1] = failing{inputs[1]}
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	tbl, err := c.Create(ctx, rec.Schema(), commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&write.Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, inputs)
	var bf *ingest.BadFileError
	if !errors.As(err, &bf) || bf.Path != inputs[1].Name() || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("want the second part named as bad, got %v", err)
	}
}

// failing is a part whose reader fails after its rows.
type failing struct{ ingest.Part }

func (f failing) Open(ctx context.Context) (array.RecordReader, error) {
	rdr, err := f.Part.Open(ctx)
	if err != nil {
		return nil, err
	}
	return failingReader{rdr}, nil
}

type failingReader struct{ array.RecordReader }

func (failingReader) Err() error { return errors.New("the file was cut short") }
