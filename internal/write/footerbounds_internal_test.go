package write

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// minOnlyFooter writes, with arrow-go's Parquet writer, row groups of the
// given strings; a group whose largest value is over 4 KiB gets a minimum
// and no maximum.
func minOnlyFooter(t *testing.T, groups ...[]string) *metadata.FileMetaData {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}}, nil)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for _, v := range g {
			b.Field(0).(*array.StringBuilder).Append(v)
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := w.Write(rec) // Write starts a row group per record
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	md, err := w.FileMetadata()
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// The Iceberg bounds of a file whose row group records a minimum alone:
// iceberg-go took the absent maximum for the empty string and the other groups' maximum
// for the file's, below the long value, so that every engine skipped the
// file for it. The column keeps its counts and loses its bounds.
func TestMetricsPropertiesDropBoundsOfMinOnlyGroups(t *testing.T) {
	long := "az" + strings.Repeat("zy", 2100)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String})
	for _, c := range []struct {
		name   string
		groups [][]string
		bounds bool
	}{
		{"long maximum", [][]string{{"a_b", long}, {"a", strings.Repeat("a", 2001)}}, false},
		{"long group alone", [][]string{{long}, {"a", "b"}}, false},
		{"short values", [][]string{{"a_b", "c"}, {"a", "b"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := minOnlyFooter(t, c.groups...)
			df, err := table.DataFileFromMetadata(table.DataFileArgs{Schema: sc, Format: iceberg.ParquetFile, Metadata: md,
				FilePath: "f.parquet", FileSize: 1, Content: iceberg.EntryContentData, FormatVersion: 2,
				Properties: metricsProperties(iceberg.Properties{}, md)})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := df.LowerBoundValues()[1], df.UpperBoundValues()[1]
			if has := lo != nil || hi != nil; has != c.bounds {
				t.Fatalf("bounds %q, %q; want bounds: %v", lo, hi, c.bounds)
			}
			if df.ValueCounts()[1] == 0 {
				t.Errorf("value count lost")
			}
			for _, g := range c.groups {
				for _, v := range g {
					if lo != nil && v < string(lo) || hi != nil && v[:min(len(v), 16)] > string(hi) {
						t.Errorf("%.10q lies outside the bounds %q, %q", v, lo, hi)
					}
				}
			}
		})
	}
}
