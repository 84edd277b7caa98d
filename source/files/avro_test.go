package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/fixture"
)

// eventSchema is a record of the types Kafka Connect's S3 sink writes most,
// logical types included.
const eventSchema = `{"type": "record", "name": "Event", "namespace": "ex", "fields": [
	{"name": "id", "type": "long"},
	{"name": "name", "type": ["null", "string"]},
	{"name": "amount", "type": "double"},
	{"name": "ok", "type": "boolean"},
	{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
	{"name": "day", "type": {"type": "int", "logicalType": "date"}}
]}`

// event is row i of the Avro files and of their Parquet twin.
func event(i int) (id int64, name *string, amount float64, ok bool, tsMicros int64, day int32) {
	if i%7 != 0 {
		s := fmt.Sprintf("n%d-é", i%50)
		name = &s
	}
	return int64(i), name, float64(i)*1.25 - 300, i%3 == 0, 1_767_225_600_000_000 + int64(i)*1_000_003, int32(20_000 + i%400)
}

// writeAvro writes rows [first, first+n) as an Avro container file with
// the given codec, in blocks of 1,000 records.
func writeAvro(t *testing.T, path string, first, n int, codec ocf.Codec) {
	t.Helper()
	s, err := avro.Parse(eventSchema, avrorows.SchemaOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := []ocf.WriterOpt{ocf.WithBlockCount(1000)}
	if codec != nil {
		opts = append(opts, ocf.WithCodec(codec))
	}
	w, err := ocf.NewWriter(f, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for i := first; i < first+n; i++ {
		id, name, amount, ok, ts, day := event(i)
		var nv any
		if name != nil {
			nv = *name
		}
		if err := w.Encode(map[string]any{"id": id, "name": nv, "amount": amount, "ok": ok, "ts": ts, "day": day}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeParquetTwin writes rows [first, first+n) as Parquet, with the
// Arrow types the Avro types map to.
func writeParquetTwin(t *testing.T, path string, first, n int) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := first; i < first+n; i++ {
		id, name, amount, ok, ts, day := event(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		if name == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*name)
		}
		b.Field(2).(*array.Float64Builder).Append(amount)
		b.Field(3).(*array.BooleanBuilder).Append(ok)
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32(day))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

// Avro container files, as Kafka Connect's S3 sink writes them (null,
// deflate, snappy or zstd blocks), land the same rows, of the same column
// types, as a Parquet twin of the same values; a file larger than a
// record batch is read whole (uncompressed blocks: the codecs change
// nothing above the block reader, and each large file costs seconds under
// the race detector).
func TestAvroContainerFilesLandAsTheirParquetTwin(t *testing.T) {
	t.Parallel()
	zstdCodec, err := ocf.ZstdCodec(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		codec ocf.Codec
		rows  int
	}{{"null", nil, 70_000}, {"deflate", ocf.DeflateCodec(6), 3_000}, {"snappy", ocf.SnappyCodec(), 3_000}, {"zstd", zstdCodec, 3_000}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			twin := newPipelineDir(t)
			writeParquetTwin(t, filepath.Join(twin.landing, "a.parquet"), 0, tc.rows)
			writeParquetTwin(t, filepath.Join(twin.landing, "b.parquet"), tc.rows, 500)
			twin.mustStream(config.Source{Format: "parquet"}, "db.t")
			want, wantFields := twin.rows("db.t"), twin.fields("db.t")
			if len(want) != tc.rows+500 {
				t.Fatalf("the Parquet twin landed %d rows", len(want))
			}
			d := newPipelineDir(t)
			writeAvro(t, filepath.Join(d.landing, "a.avro"), 0, tc.rows, tc.codec)
			writeAvro(t, filepath.Join(d.landing, "b.avro"), tc.rows, 500, tc.codec)
			d.mustStream(config.Source{Format: "avro"}, "db.t")
			d.sameTable("db.t", want, wantFields)
		})
	}
}

// A file that is not an Avro container, or is cut short, is a bad file
// that says so.
func TestAvroBadFiles(t *testing.T) {
	t.Parallel()
	p, path := onePart(t, config.Source{Format: "avro"}, "a.avro", "id,name\n1,x\n")
	_, err := readPart(t, p)
	if bf := badFile(t, err, path); !strings.Contains(bf.Error(), "not a readable Avro container file") {
		t.Fatalf("a CSV file read as Avro: %v", err)
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.avro")
	writeAvro(t, full, 0, 5000, nil)
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	p, path = onePart(t, config.Source{Format: "avro"}, "cut.avro", string(b[:len(b)*2/3]))
	_, err = readPart(t, p)
	badFile(t, err, path)
}
