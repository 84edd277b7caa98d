package interop_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/fixture"
)

// Appends in several snapshots of an unpartitioned table.
func TestAppendUnpartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 4, 500
	for i := range int64(files) {
		if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("f-%02d.parquet", i)), i*rows, rows); err != nil {
			t.Fatal(err)
		}
	}
	e.OK(e.StreamArgs("db.append", "--max-files-per-trigger", "1")...)
	st := e.checkTable("db.append")
	if st.Rows != files*rows {
		t.Fatalf("%d rows, want %d", st.Rows, files*rows)
	}
	if want := strconv.Itoa(files * rows * (files*rows - 1) / 2); st.Sums["id"] != want {
		t.Fatalf("sum(id) = %s, want %s", st.Sums["id"], want)
	}
}

// Complete mode: the second run's batch replaces the table's contents, and
// the other readers must see only the second batch too.
func TestCompleteMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := fixture.WriteIDFile(filepath.Join(e.Landing, "a.parquet"), 0, 1000); err != nil {
		t.Fatal(err)
	}
	e.OK(e.StreamArgs("db.complete", "--mode", "complete")...)
	first := e.checkTable("db.complete")
	if first.Rows != 1000 {
		t.Fatalf("first run: %d rows, want 1000", first.Rows)
	}
	if err := fixture.WriteIDFile(filepath.Join(e.Landing, "b.parquet"), 5000, 300); err != nil {
		t.Fatal(err)
	}
	e.OK(e.StreamArgs("db.complete", "--mode", "complete")...)
	second := e.checkTable("db.complete")
	if second.Rows != 300 {
		t.Fatalf("second run: %d rows, want 300 (the second batch only)", second.Rows)
	}
	if want := strconv.Itoa(300*5000 + 300*299/2); second.Sums["id"] != want {
		t.Fatalf("second run: sum(id) = %s, want %s", second.Sums["id"], want)
	}
}

// allTypesSchema holds every type floe writes: the primitives, a struct, a
// list and a map.
var allTypesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "tm", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "u", Type: extensions.NewUUIDType(), Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	{Name: "li", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

// withoutColumn returns rec without the named column, releasing rec.
func withoutColumn(rec arrow.RecordBatch, name string) arrow.RecordBatch {
	defer rec.Release()
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if f.Name != name {
			fields = append(fields, f)
			cols = append(cols, rec.Column(i))
		}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// allTypesRecord builds n rows from seed; every column is null in some rows,
// and values cover negatives, the pre-1970 range, sub-millisecond times,
// non-ASCII and escaped text, empty strings, lists and maps.
func allTypesRecord(seed uint64, n int) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(memory.DefaultAllocator, allTypesSchema)
	defer b.Release()
	texts := []string{"", "plain", "héllo \"q\"\n\ttab", "日本語", "back\\slash", "emoji 🙂", "<&>"}
	for r := 0; r < n; r++ {
		null := func(col int) bool { return (r+col)%7 == 3 }
		app := func(col int, f func()) {
			if null(col) {
				b.Field(col).AppendNull()
			} else {
				f()
			}
		}
		app(0, func() { b.Field(0).(*array.BooleanBuilder).Append(rng.IntN(2) == 0) })
		app(1, func() { b.Field(1).(*array.Int32Builder).Append(rng.Int32() - 1<<30) })
		app(2, func() { b.Field(2).(*array.Int64Builder).Append(rng.Int64() - 1<<62) })
		app(3, func() { b.Field(3).(*array.Float32Builder).Append(float32(rng.NormFloat64() * 1e3)) })
		app(4, func() { b.Field(4).(*array.Float64Builder).Append(rng.NormFloat64() * 1e12) })
		// |unscaled| < 2^53: hyparquet returns decimals as doubles.
		app(5, func() {
			b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(rng.Int64N(2e12) - 1e12))
		})
		app(6, func() { b.Field(6).(*array.Date32Builder).Append(arrow.Date32(rng.IntN(40000) - 10000)) })
		app(7, func() { b.Field(7).(*array.Time64Builder).Append(arrow.Time64(rng.Int64N(86400 * 1e6))) })
		app(8, func() {
			b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int64N(4e15) - 1e15))
		})
		app(9, func() {
			b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int64N(4e15) - 1e15))
		})
		app(10, func() { b.Field(10).(*array.StringBuilder).Append(texts[r%len(texts)] + strconv.Itoa(r)) })
		app(11, func() {
			var u uuid.UUID
			for i := range u {
				u[i] = byte(rng.IntN(256))
			}
			b.Field(11).(*extensions.UUIDBuilder).Append(u)
		})
		app(12, func() {
			bs := make([]byte, r%5)
			for i := range bs {
				bs[i] = byte(rng.IntN(256))
			}
			b.Field(12).(*array.BinaryBuilder).Append(bs)
		})
		app(13, func() {
			sb := b.Field(13).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(r))
			if r%3 == 0 {
				sb.FieldBuilder(1).(*array.StringBuilder).AppendNull()
			} else {
				sb.FieldBuilder(1).(*array.StringBuilder).Append("y" + strconv.Itoa(r))
			}
		})
		app(14, func() {
			lb := b.Field(14).(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Int32Builder)
			for k := 0; k < r%4; k++ {
				if k == 1 {
					vb.AppendNull()
				} else {
					vb.Append(int32(r*10 + k))
				}
			}
		})
		app(15, func() {
			mb := b.Field(15).(*array.MapBuilder)
			mb.Append(true)
			for k := 0; k < r%3; k++ {
				mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", 2-k))
				if k == 1 {
					mb.ItemBuilder().(*array.Int64Builder).AppendNull()
				} else {
					mb.ItemBuilder().(*array.Int64Builder).Append(int64(r - k))
				}
			}
		})
	}
	return b.NewRecordBatch()
}

// Every type floe writes reads back the same in icebird and DuckDB.
func TestAllTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 2 {
		rec := allTypesRecord(uint64(i+1), 60)
		err := fixture.WriteParquet(filepath.Join(e.Landing, fmt.Sprintf("all-%d.parquet", i)), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	e.OK(e.StreamArgs("db.alltypes", "--max-files-per-trigger", "1")...)
	ti := e.describe("db.alltypes")
	want := map[string]string{"b": "boolean", "i": "int", "l": "long", "f": "float", "d": "double", "dec": "decimal",
		"dt": "date", "tm": "time", "ts": "timestamp", "tstz": "timestamptz", "s": "string", "u": "uuid",
		"bin": "binary", "st": "struct", "li": "list", "m": "map"}
	for _, f := range ti.fields {
		if w := want[f.Name]; f.Type.Kind != w {
			t.Errorf("column %s has Iceberg type %s, want %s", f.Name, f.Type.Kind, w)
		}
		delete(want, f.Name)
	}
	for c := range want {
		t.Errorf("column %s is missing from the table", c)
	}
	st := e.checkTable("db.alltypes")
	if st.Rows != 120 {
		t.Fatalf("%d rows, want 120", st.Rows)
	}
	// Spark reads every other type, in a table without the time column.
	spark := filepath.Join(e.Dir, "spark")
	for i := range 2 {
		rec := withoutColumn(allTypesRecord(uint64(i+1), 60), "tm")
		err := fixture.WriteParquet(filepath.Join(spark, fmt.Sprintf("all-%d.parquet", i)), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	e.OK("stream", "--source", spark, "--format", "parquet", "--table", "db.alltypes_spark", "--checkpoint", filepath.Join(e.Dir, "ckpt-spark"))
	e.checkTable("db.alltypes_spark")
	for c, n := range st.NonNull {
		if n == 0 || n == st.Rows {
			t.Errorf("column %s: %d non-null of %d; the fixture has some nulls and some values in every column", c, n, st.Rows)
		}
	}
	// Compaction reads the two files and writes them again through floe's
	// writer: every value of every type must come through it.
	r := e.OK("maintain", "rewrite-data-files", "db.alltypes", "--min-input-files", "2", "--json")
	var rw struct {
		Rewritten int `json:"rewritten_data_files"`
		Added     int `json:"added_data_files"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rw); err != nil || rw.Rewritten != 2 || rw.Added != 1 {
		t.Fatalf("rewrite-data-files: %+v, %v (%s); want 2 files into 1", rw, err, r.Stdout)
	}
	if after := e.checkTable("db.alltypes"); after.Rows != st.Rows || after.Checksum != st.Checksum {
		t.Fatalf("after compaction: %d rows, checksum %s; before: %d, %s", after.Rows, after.Checksum, st.Rows, st.Checksum)
	}
}

// Special float values keep their exact bits through every reader: NaN,
// infinities, negative zero, extremes and subnormals. (floe's jsonl prints
// NaN and infinities as the strings "NaN", "+Inf", "-Inf".)
func TestFloatSpecials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	fs := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0,
		math.MaxFloat32, math.SmallestNonzeroFloat32, -1.5, 16777217}
	ds := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -1.5, 0.1}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range fs {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Float32Builder).Append(fs[i])
		b.Field(2).(*array.Float64Builder).Append(ds[i])
	}
	b.Field(0).(*array.Int64Builder).Append(99)
	b.Field(1).AppendNull()
	b.Field(2).AppendNull()
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, "floats.parquet"), rec); err != nil {
		t.Fatal(err)
	}
	e.OK(e.StreamArgs("db.floats")...)
	st := e.checkTable("db.floats")
	if st.Rows != int64(len(fs)+1) || st.Sums["f"] != "NaN" || st.Sums["d"] != "NaN" {
		t.Fatalf("stats %+v", st)
	}

	// Without NaN and the infinities the sums are finite and must agree too.
	e2 := newEnv(t)
	rec2 := rec.NewSlice(3, rec.NumRows())
	defer rec2.Release()
	if err := fixture.WriteParquet(filepath.Join(e2.Landing, "floats.parquet"), rec2); err != nil {
		t.Fatal(err)
	}
	e2.OK(e2.StreamArgs("db.floats")...)
	st2 := e2.checkTable("db.floats")
	if st2.Sums["d"] == "NaN" || st2.Sums["d"] == "" {
		t.Fatalf("stats %+v", st2)
	}
}

// A table whose ingest was SIGKILLed several times reads back, after the
// final run, with every row exactly once in every reader.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const files, rows = 30, 200
	for i := range int64(files) {
		if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("f-%03d.parquet", i)), i*rows, rows); err != nil {
			t.Fatal(err)
		}
	}
	args := e.StreamArgs("db.crash", "--max-files-per-trigger", "2")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	const wantKills = 6
	written := int64(files)
	kills, finished := 0, 0
	for kills < wantKills {
		cmd := e.Command(floeBin, nil, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("floe failed after %d kills: %v\n%s", kills, err, stderr.String())
			}
			// The backlog is drained: add input so the next kills hit work.
			finished++
			for range 10 {
				if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("f-%03d.parquet", written)), written*rows, rows); err != nil {
					t.Fatal(err)
				}
				written++
			}
		case <-time.After(time.Duration(30+rng.IntN(250)) * time.Millisecond):
			_ = cmd.Process.Kill()
			<-done
			kills++
		}
	}
	e.OK(args...)
	st := e.checkTable("db.crash")
	total := written * rows
	if st.Rows != total {
		t.Fatalf("after %d kills: %d rows, want %d", kills, st.Rows, total)
	}
	if want := strconv.FormatInt(total*(total-1)/2, 10); st.Sums["id"] != want {
		t.Fatalf("after %d kills: sum(id) = %s, want %s", kills, st.Sums["id"], want)
	}
	t.Logf("%d kills, %d runs that finished, %d rows exactly once in every reader", kills, finished, total)
}

// The checker is not vacuous: a table with a data file missing makes it
// fail, and a data file with one changed value changes its stats, which the
// comparison reports.
func TestCheckerCanFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range int64(3) {
		if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("f-%d.parquet", i)), i*100, 100); err != nil {
			t.Fatal(err)
		}
	}
	e.OK(e.StreamArgs("db.victim", "--max-files-per-trigger", "1")...)
	orig := e.checkTable("db.victim")
	ti := e.describe("db.victim")

	// copyTable copies the table directory and returns the copy's metadata
	// file and the --path-prefix that maps the table's paths to the copy.
	copyTable := func(name string) (dir, metadata, prefix string) {
		src := strings.TrimPrefix(ti.Location, "file://")
		dir = filepath.Join(e.Dir, name)
		if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		metadata = filepath.Join(dir, "metadata", filepath.Base(ti.MetadataLocation))
		return dir, metadata, ti.Location + "=file://" + dir
	}
	dataFiles := func(dir string) []string {
		m, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
		if err != nil || len(m) != 3 {
			t.Fatalf("data files in %s: %v %v", dir, m, err)
		}
		return m
	}

	// An untouched copy must still agree, or the failures below prove nothing.
	_, meta, prefix := copyTable("copy-ok")
	got, err := runChecker(meta, prefix)
	if err != nil {
		t.Fatalf("untouched copy: %v", err)
	}
	if err := compareStats(orig, got); err != nil {
		t.Fatalf("untouched copy: %v", err)
	}

	t.Run("missing data file", func(t *testing.T) {
		dir, meta, prefix := copyTable("copy-missing")
		if err := os.Remove(dataFiles(dir)[1]); err != nil {
			t.Fatal(err)
		}
		got, err := runChecker(meta, prefix)
		if err == nil {
			t.Fatalf("checker succeeded on a table with a data file missing: %+v", got)
		}
		for _, reader := range []string{"icebird", "duckdb"} {
			if !strings.Contains(err.Error(), reader+": ") {
				t.Errorf("%s did not report the missing file: %v", reader, err)
			}
		}
		t.Logf("checker failed as it should: %v", err)
	})

	t.Run("changed value", func(t *testing.T) {
		dir, meta, prefix := copyTable("copy-changed")
		rewriteOneValue(t, dataFiles(dir)[0])
		got, err := runChecker(meta, prefix)
		if err != nil {
			t.Fatalf("checker on the changed copy: %v", err)
		}
		err = compareStats(orig, got)
		if err == nil {
			t.Fatalf("stats of a table with a changed value match the original: %+v", got)
		}
		for _, reader := range []string{"icebird", "duckdb"} {
			if !strings.Contains(err.Error(), reader+": checksum") {
				t.Errorf("%s did not see the changed value: %v", reader, err)
			}
		}
		t.Logf("mismatch reported as it should: %v", err)
	})
}

// rewriteOneValue rewrites a floe data file (id long, v string) with the
// first row's id changed, keeping the schema, field ids and row count. The
// manifest records the file's size, which readers use to find the footer, so
// the new file is padded to the old size between its last page and footer
// (bytes no reader looks at).
func rewriteOneValue(t *testing.T, path string) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fixture.ReadParquet(bytes.NewReader(orig))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	schema := tbl.Schema() // carries PARQUET:field_id in each field's metadata
	if id, ok := schema.Field(0).Metadata.GetValue("PARQUET:field_id"); !ok || id != "1" || schema.Field(0).Name != "id" {
		t.Fatalf("unexpected data file schema %v", schema)
	}
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	var recs []arrow.RecordBatch
	for tr.Next() {
		rec := tr.RecordBatch()
		cols := rec.Columns()
		ids := cols[0].(*array.Int64)
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		for i := 0; i < ids.Len(); i++ {
			switch {
			case ids.IsNull(i):
				ib.AppendNull()
			case len(recs) == 0 && i == 0:
				ib.Append(ids.Value(i) + 1_000_000)
			default:
				ib.Append(ids.Value(i))
			}
		}
		newIDs := ib.NewArray()
		recs = append(recs, array.NewRecordBatch(schema, append([]arrow.Array{newIDs}, cols[1:]...), rec.NumRows()))
		ib.Release()
	}
	// floe's writer settings differ from arrow-go's defaults; try settings
	// from the most to the least compact until the file fits the old size.
	level := compress.DefaultCompressionLevel
	candidates := [][]parquet.WriterProperty{
		{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(19), parquet.WithStats(false), parquet.WithDictionaryDefault(false), parquet.WithCreatedBy("t")},
		{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(19), parquet.WithStats(false), parquet.WithCreatedBy("t")},
		{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(level), parquet.WithStats(false), parquet.WithCreatedBy("t")},
		{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithStats(false), parquet.WithCreatedBy("t")},
	}
	var out []byte
	var sizes []int
	for _, c := range candidates {
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(c...), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, buf.Len())
		if buf.Len() <= len(orig) {
			out = buf.Bytes()
			break
		}
	}
	if out == nil {
		t.Fatalf("every rewrite is larger than the original %d bytes (%v); cannot pad it to the manifest's size", len(orig), sizes)
	}
	footerLen := int(binary.LittleEndian.Uint32(out[len(out)-8:]))
	footerStart := len(out) - 8 - footerLen
	padded := append(append(append([]byte{}, out[:footerStart]...), make([]byte, len(orig)-len(out))...), out[footerStart:]...)
	if err := os.WriteFile(path, padded, 0o644); err != nil {
		t.Fatal(err)
	}
	// The rewrite must keep the field ids, or readers resolving by id would
	// see a missing column rather than a changed value.
	check, err := file.NewParquetReader(bytes.NewReader(padded))
	if err != nil {
		t.Fatalf("rewritten file does not open: %v", err)
	}
	if got := check.MetaData().Schema.Column(0).SchemaNode().FieldID(); got != 1 {
		t.Fatalf("rewritten file lost the field id of id: %d", got)
	}
	if check.NumRows() != int64(tbl.NumRows()) {
		t.Fatalf("rewritten file has %d rows, want %d", check.NumRows(), tbl.NumRows())
	}
}

// The checker's own delete handling, which floe's tables (append and
// overwrite only) do not exercise: on tables written by Iceberg Java and
// Spark with position and equality deletes, icebird and DuckDB must agree.
// Skipped when the shared fixtures are not beside the repository, unless
// FLOE_REQUIRE_SHARED=1.
func TestCheckerDeletesOnPeerTables(t *testing.T) {
	t.Parallel()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	root := fixture.Shared(t, "fixtures/peer-tables/tables")
	cases := []struct {
		name, metadata, prefix string
		rows                   int64
	}{
		{"java position and equality deletes", "hyperparam-iceberg/java/bunnies/metadata/v5.metadata.json",
			"s3a://hyperparam-iceberg/java/bunnies=" + root + "/hyperparam-iceberg/java/bunnies", 15},
		{"spark equality deletes by sequence number", "equality_deletes/warehouse/mydb/mytable/metadata/v7.metadata.json",
			"data/persistent/equality_deletes/=" + root + "/equality_deletes/", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runChecker(filepath.Join(root, c.metadata), c.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if err := compareStats(got["icebird"], got); err != nil {
				t.Fatalf("icebird and DuckDB disagree: %v", err)
			}
			if got["duckdb"].Rows != c.rows {
				t.Fatalf("%d rows, want %d", got["duckdb"].Rows, c.rows)
			}
		})
	}
}

// Partitioned tables read the same in every reader: identity partitions on
// timestamps and strings (whose Hive-style directory names would need
// escaping), bucket, truncate and the time transforms.
func TestPartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Without the time column, which Iceberg's Spark runtime refuses: Spark
	// checks every transform too.
	rec := withoutColumn(allTypesRecord(3, 120), "tm")
	err := fixture.WriteParquet(filepath.Join(e.Landing, "all.parquet"), rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	for i, fields := range [][]string{
		{"ts", "bucket(l, 4)"},
		{"s", "day(tstz)", "month(dt)"},
		{"truncate(s, 2)", "bucket(u, 8)", "year(ts)", "hour(tstz)", "truncate(i, 10)"},
	} {
		table := fmt.Sprintf("db.part%d", i)
		args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", table,
			"--checkpoint", filepath.Join(e.Dir, table)}
		for _, f := range fields {
			args = append(args, "--partition-fields", f)
		}
		e.OK(args...)
		if st := e.checkTable(table); st.Rows != 120 {
			t.Fatalf("%s: %d rows, want 120", table, st.Rows)
		}
	}
}
