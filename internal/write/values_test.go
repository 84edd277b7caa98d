package write_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

// valuesOnly is a Parquet input that cannot be read as Arrow records: a
// write that takes it copies it or writes its values.
type valuesOnly struct{ fixture.ParquetFilePart }

func (valuesOnly) Open(context.Context) (array.RecordReader, error) {
	return nil, errors.New("read as Arrow records")
}

// arrowOnly hides that a part is a Parquet file: the writer reads it as
// Arrow records.
type arrowOnly struct{ ingest.Part }

func asParts[T ingest.Part](parts []ingest.Part, wrap func(fixture.ParquetFilePart) T) []ingest.Part {
	out := make([]ingest.Part, len(parts))
	for i, p := range parts {
		out[i] = wrap(p.(fixture.ParquetFilePart))
	}
	return out
}

// Parquet inputs the table stores alike but does not copy (copying turned
// off, or row groups too small to keep) are written by their values, into
// data files with the statistics and rows of the Arrow path's.
func TestValuesMatchArrowPath(t *testing.T) {
	t.Parallel()
	rec := allFlatTypes(5000)
	defer rec.Release()
	inputs := chunkInputs(t, rec, 1200, 3100)
	arrowTbl, afiles := writeTable(t, rec.Schema(), nil, asParts(inputs, func(p fixture.ParquetFilePart) ingest.Part { return arrowOnly{p} }))
	for name, props := range map[string]map[string]string{
		"copy off":         {write.CopyChunksKey: "false"},
		"small row groups": {table.ParquetRowGroupSizeBytesKey: "134217728"},
	} {
		valuesTbl, vfiles := writeTable(t, rec.Schema(), props, asParts(inputs, func(p fixture.ParquetFilePart) valuesOnly { return valuesOnly{p} }))
		if got := codecs(t, valuesTbl, vfiles); !maps.Equal(got, map[compress.Compression]bool{compress.Codecs.Zstd: true}) {
			t.Fatalf("%s: files' codecs %v, want the table's zstd alone", name, got)
		}
		if len(vfiles) != 1 || len(afiles) != 1 {
			t.Fatalf("%s: %d files by values and %d by Arrow, want one each", name, len(vfiles), len(afiles))
		}
		va, ar := vfiles[0].File, afiles[0].File
		if va.Count() != 5000 || ar.Count() != 5000 || vfiles[0].Rows != 5000 {
			t.Fatalf("%s: record counts %d (by values, %d by the writer) and %d, want 5000", name, va.Count(), vfiles[0].Rows, ar.Count())
		}
		for what, m := range map[string][2]map[int]int64{
			"value counts": {va.ValueCounts(), ar.ValueCounts()},
			"null counts":  {va.NullValueCounts(), ar.NullValueCounts()},
		} {
			if !maps.Equal(m[0], m[1]) || len(m[0]) != rec.Schema().NumFields() {
				t.Errorf("%s: %s differ:\nvalues %v\narrow  %v", name, what, m[0], m[1])
			}
		}
		for what, m := range map[string][2]map[int][]byte{
			"lower bounds": {va.LowerBoundValues(), ar.LowerBoundValues()},
			"upper bounds": {va.UpperBoundValues(), ar.UpperBoundValues()},
		} {
			if !maps.EqualFunc(m[0], m[1], sameBound) || len(m[0]) != rec.Schema().NumFields() {
				t.Errorf("%s: %s differ or miss columns:\nvalues %v\narrow  %v", name, what, m[0], m[1])
			}
		}
		if got, want := tableJSON(t, valuesTbl), tableJSON(t, arrowTbl); got != want || len(got) < 10_000 {
			t.Fatalf("%s: rows read back differ between values and Arrow (%d vs %d bytes of JSON)", name, len(got), len(want))
		}
	}
}

// A value too long for column bounds in an input written by its values
// rolls the file, as on the Arrow path: the first file keeps bounds on v,
// the next has none, and every row lands once.
func TestValuesLongValueRollsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := idRecord(0, 3000, 1500, 10_000)
	defer rec.Release()
	parts := asParts(chunkInputs(t, rec, 1000, 2000), func(p fixture.ParquetFilePart) valuesOnly { return valuesOnly{p} })
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "long"}, QueryID: "q"}
	tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{Properties: map[string]string{write.CopyChunksKey: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&write.Writer{Table: tbl, FilePrefix: "long"}).Write(ctx, parts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 {
		t.Fatalf("%d files, want 2: the first with bounds on v, then one without", len(res.Files))
	}
	for _, f := range res.Files {
		_, bounded := f.File.UpperBoundValues()[2]
		if want := f.Rows == 1000; bounded != want || f.Rows != 1000 && f.Rows != 2000 {
			t.Errorf("file of %d rows has bounds on v: %v; want 1000 rows with bounds and 2000 without", f.Rows, bounded)
		}
	}
	commitIDs(t, c, res.Files, 3000)
}

// A page that does not decompress, met while an input's values are
// written, is bad input naming the file, and nothing of the batch is left
// behind, though rows of the file and of the input before it were already
// in the data file.
func TestValuesRefuseCorruptPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := allFlatTypes(3000)
	defer rec.Release()
	inputs := chunkInputs(t, rec, 1000)
	path := inputs[1].Name()
	// The last column's first page: the others are written first.
	corruptChunk(t, path, rec.Schema().NumFields()-1, firstPageBody(t))
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "t"}, QueryID: "q"}
	tbl, err := c.Create(ctx, rec.Schema(), commit.CreateOptions{Properties: map[string]string{write.CopyChunksKey: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	parts := asParts(inputs, func(p fixture.ParquetFilePart) valuesOnly { return valuesOnly{p} })
	_, err = (&write.Writer{Table: tbl, FilePrefix: "t"}).Write(ctx, parts)
	var bf *ingest.BadFileError
	if !errors.As(err, &bf) || bf.Path != path || !strings.Contains(err.Error(), "column t") {
		t.Fatalf("got %v, want a bad file error naming %s and its column t", err, path)
	}
	left, err := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "*.parquet"))
	if err != nil || len(left) > 0 {
		t.Fatalf("data files left behind: %v (%v)", left, err)
	}
}
