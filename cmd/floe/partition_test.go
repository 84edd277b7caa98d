package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/partref"
)

// transformSchema has one column per source type the transforms are tested
// on; every column holds some nulls.
var transformSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
}, nil)

// No empty string: iceberg-go 0.7 records an empty lower bound in the manifest
// list as absent and then prunes that partition from every equality scan.
var strs = []string{"iceberg", "ice", "icebox", "Zürich", "zürichsee", "a", "日本語テキスト", "parquet", "partition"}

// writeTransformInput writes rows covering negative numbers, dates before
// 1970 and several years, months, days and hours.
func writeTransformInput(t *testing.T, path string, rows int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 2))
	b := array.NewRecordBuilder(memory.DefaultAllocator, transformSchema)
	defer b.Release()
	base := time.Date(1968, 11, 3, 22, 0, 0, 0, time.UTC)
	for id := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(id))
		null := id%17 == 5
		if null {
			for c := 1; c < 6; c++ {
				b.Field(c).AppendNull()
			}
			continue
		}
		b.Field(1).(*array.StringBuilder).Append(strs[rng.IntN(len(strs))])
		b.Field(2).(*array.Int32Builder).Append(int32(rng.IntN(200) - 100))
		b.Field(3).(*array.Int64Builder).Append(rng.Int64N(2_000_000) - 1_000_000)
		ts := base.Add(time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour))))
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(ts))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

// transformCase is one partition field, with the spec's value of a row
// computed by partref (written from the spec, not by floe's writer), in
// the JSON form `floe table files --json` prints.
type transformCase struct {
	expr, col string
	value     func(v any) any
}

// filter is col = probe as an Iceberg expression (probe as columnValues
// returns it).
func (c transformCase) filter(probe any) iceberg.BooleanExpression {
	ref := iceberg.Reference(c.col)
	switch v := probe.(type) {
	case string:
		return iceberg.EqualTo(ref, v)
	case int32:
		return iceberg.EqualTo(ref, v)
	case int64:
		return iceberg.EqualTo(ref, v)
	case time.Time:
		if c.col == "d" {
			return iceberg.EqualTo(ref, iceberg.Date(arrow.Date32FromTime(v)))
		}
		return iceberg.EqualTo(ref, iceberg.Timestamp(v.UnixMicro()))
	}
	panic(fmt.Sprintf("probe %T", probe))
}

func dateText(days int32) string { return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02") }

func num[T int32 | int64](v T) any { return float64(v) }

func TestPartitionTransforms(t *testing.T) {
	t.Parallel()
	cases := []transformCase{
		{"s", "s", func(v any) any { return v }},
		{"i", "i", func(v any) any { return num(v.(int32)) }},
		{"l", "l", func(v any) any { return num(v.(int64)) }},
		{"d", "d", func(v any) any { return dateText(partref.Day(partref.Date(v.(time.Time)))) }},
		{"ts", "ts", func(v any) any { return v.(time.Time).Format("2006-01-02T15:04:05.999999") }},
		{"bucket(i, 16)", "i", func(v any) any { return num(partref.Bucket(v.(int32), 16)) }},
		{"bucket(l, 16)", "l", func(v any) any { return num(partref.Bucket(v.(int64), 16)) }},
		{"bucket(s, 16)", "s", func(v any) any { return num(partref.Bucket(v.(string), 16)) }},
		{"truncate(s, 4)", "s", func(v any) any { return partref.Truncate(v.(string), 4) }},
		{"truncate(i, 10)", "i", func(v any) any { return num(partref.Truncate(v.(int32), 10).(int32)) }},
		{"truncate(l, 10)", "l", func(v any) any { return num(partref.Truncate(v.(int64), 10).(int64)) }},
		{"year(d)", "d", func(v any) any { return num(partref.Year(partref.Date(v.(time.Time)))) }},
		{"month(d)", "d", func(v any) any { return num(partref.Month(partref.Date(v.(time.Time)))) }},
		{"day(d)", "d", func(v any) any { return dateText(partref.Day(partref.Date(v.(time.Time)))) }},
		{"year(ts)", "ts", func(v any) any { return num(partref.Year(v.(time.Time))) }},
		{"month(ts)", "ts", func(v any) any { return num(partref.Month(v.(time.Time))) }},
		{"day(ts)", "ts", func(v any) any { return dateText(partref.Day(v.(time.Time))) }},
		{"hour(ts)", "ts", func(v any) any { return num(partref.Hour(v.(time.Time))) }},
		{"void(s)", "s", func(any) any { return nil }},
	}
	e := newEnv(t)
	writeTransformInput(t, filepath.Join(e.Landing, "in.parquet"), 3000)
	ctx := context.Background()
	for n, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			t.Parallel()
			e := &env{e.For(t)}
			name := fmt.Sprintf("db.t%02d", n)
			e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", name,
				"--checkpoint", filepath.Join(e.Dir, "ckpt", name), "--partition-fields", c.expr)
			files := e.files(name)
			if len(files) < 2 && !strings.HasPrefix(c.expr, "void") {
				t.Fatalf("%d data files; the input spans many partitions", len(files))
			}
			var field string
			for k := range files[0].Partition {
				field = k
			}
			seen := map[string]bool{}
			var rows int64
			for _, f := range files {
				want := f.Partition[field]
				key := fmt.Sprint(want)
				if seen[key] {
					t.Errorf("two files for partition %s=%v in one batch", field, want)
				}
				seen[key] = true
				for _, v := range columnValues(t, f.Path, c.col) {
					got := any(nil)
					if v != nil {
						got = c.value(v)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("file %s has partition %s=%v, but holds a row whose %s=%v has partition value %v", filepath.Base(f.Path), field, want, c.col, v, got)
					}
					rows++
				}
			}
			if rows != 3000 {
				t.Fatalf("files hold %d rows, want 3000", rows)
			}
			checkPruning(ctx, t, e, name, files, c)
		})
	}
}

// checkPruning plans scans filtered on the source column, for values that
// rows hold, and checks that each reads exactly the file of the value's
// partition.
func checkPruning(ctx context.Context, t *testing.T, e *env, name string, files []dataFile, c transformCase) {
	t.Helper()
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: e.Warehouse})
	if err != nil {
		t.Fatal(err)
	}
	ident, _ := floe.ParseIdent(name)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, f := range files[:min(3, len(files))] {
		var probe any
		for _, v := range columnValues(t, f.Path, c.col) {
			if v != nil {
				probe = v
				break
			}
		}
		if probe == nil {
			continue
		}
		probes++
		tasks, err := tbl.Scan(table.WithRowFilter(c.filter(probe))).PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var planned []string
		for _, task := range tasks {
			planned = append(planned, task.File.FilePath())
		}
		wantValue := fmt.Sprint(c.value(probe))
		var want []string
		for _, f := range files {
			if strings.HasPrefix(c.expr, "void") || fmt.Sprint(f.Partition[firstKey(f.Partition)]) == wantValue {
				want = append(want, f.Path)
			}
		}
		slices.Sort(planned)
		slices.Sort(want)
		if !slices.Equal(planned, want) {
			t.Fatalf("filter %v planned %d of %d files %v, want the %d of partition value %s: %v", c.filter(probe), len(planned), len(files), planned, len(want), wantValue, want)
		}
	}
	if probes == 0 {
		t.Fatal("no file has a value to filter on")
	}
}

func firstKey(m map[string]any) string {
	for k := range m {
		return k
	}
	return ""
}

// columnValues reads one column of a data file as Go values (time.Time for
// dates and timestamps, nil for null).
func columnValues(t *testing.T, path, col string) []any {
	t.Helper()
	tbl, err := fixture.ReadParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices(col)
	if len(idx) != 1 {
		t.Fatalf("data file %s has no column %s", path, col)
	}
	var out []any
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		for i := range chunk.Len() {
			if chunk.IsNull(i) {
				out = append(out, nil)
				continue
			}
			switch a := chunk.(type) {
			case *array.String:
				out = append(out, a.Value(i))
			case *array.Int32:
				out = append(out, a.Value(i))
			case *array.Int64:
				out = append(out, a.Value(i))
			case *array.Date32:
				out = append(out, a.Value(i).ToTime())
			case *array.Timestamp:
				out = append(out, time.UnixMicro(int64(a.Value(i))).UTC())
			default:
				t.Fatalf("column %s: unexpected %T", col, chunk)
			}
		}
	}
	return out
}

// floe table describe names the columns a partition field reads, as
// Spark's DESCRIBE does, not their field ids.
func TestDescribeNamesPartitionColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeTransformInput(t, filepath.Join(e.Landing, "in.parquet"), 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.p", "--checkpoint", e.Ckpt, "--partition-fields", "day(ts), bucket(i, 16)")
	desc := e.OK("table", "describe", "db.p").Stdout
	for _, want := range []string{`(?m)^  1000  ts_day +day\(ts\)$`, `(?m)^  1001  i_bucket +bucket\[16\]\(i\)$`} {
		if !regexp.MustCompile(want).MatchString(desc) {
			t.Errorf("want %s in\n%s", want, desc)
		}
	}
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.u", "--checkpoint", e.Ckpt+"-u")
	if desc := e.OK("table", "describe", "db.u").Stdout; !strings.Contains(desc, "partition spec: unpartitioned\n") {
		t.Errorf("an unpartitioned table is not told as such:\n%s", desc)
	}
}

// JSON has no timestamp type, so the README's day(ts) needs the column typed:
// --schema does it from the command line, in Spark's DDL syntax.
func TestSchemaFlagTypesJSONForDayPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"id": 1, "ts": "2026-03-01T10:00:00", "name": "a"}
{"id": 2, "ts": "2026-03-01T23:59:59", "name": "b"}
{"id": 3, "ts": "2026-03-02T00:00:01", "name": "c"}
`
	if err := os.WriteFile(filepath.Join(e.Landing, "a.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"stream", "--source", e.Landing, "--format", "json", "--table", "db.events", "--checkpoint", e.Ckpt,
		"--partition-fields", "day(ts),bucket(id, 16)"}
	e.OK(append(args, "--schema", "id bigint NOT NULL, ts timestamp, name string")...)
	f := e.fields("db.events")
	if f["id"].Type != "long" || !f["id"].Required || f["ts"].Type != "timestamp" || f["name"].Type != "string" {
		t.Fatalf("columns = %+v, want id long required, ts timestamp, name string", f)
	}
	days := map[string]bool{}
	for _, file := range e.files("db.events") {
		days[fmt.Sprint(file.Partition["ts_day"])] = true
	}
	if !days["2026-03-01"] || !days["2026-03-02"] || len(days) != 2 {
		t.Fatalf("day partitions = %v, want 2026-03-01 and 2026-03-02", days)
	}
	r := e.Run(append(args[:len(args):len(args)], "--checkpoint", filepath.Join(e.Dir, "c2"), "--schema", "id long, ts")...)
	if r.Code != 2 || !strings.Contains(r.Stderr, `"ts" has no type`) {
		t.Fatalf("want exit 2 naming the column without a type, got %s", r)
	}
}
