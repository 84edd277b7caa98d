package partition_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
)

func TestParseField(t *testing.T) {
	t.Parallel()
	good := []struct {
		expr   string
		source string
		tr     iceberg.Transform
	}{
		{"region", "region", iceberg.IdentityTransform{}},
		{" meta.region ", "meta.region", iceberg.IdentityTransform{}},
		{"bucket(id, 16)", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"BUCKET( id ,16 )", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"bucket(16, id)", "id", iceberg.BucketTransform{NumBuckets: 16}},
		{"truncate(name, 4)", "name", iceberg.TruncateTransform{Width: 4}},
		{"year(ts)", "ts", iceberg.YearTransform{}},
		{"Month(ts)", "ts", iceberg.MonthTransform{}},
		{"day(meta.ts)", "meta.ts", iceberg.DayTransform{}},
		{"hour(ts)", "ts", iceberg.HourTransform{}},
		{"void(x)", "x", iceberg.VoidTransform{}},
		{"identity(x)", "x", iceberg.IdentityTransform{}},
	}
	for _, g := range good {
		f, err := partition.ParseField(g.expr)
		if err != nil {
			t.Errorf("partition.ParseField(%q): %v", g.expr, err)
			continue
		}
		if f.Expr != g.expr || f.Source != g.source || !f.Transform.Equals(g.tr) {
			t.Errorf("partition.ParseField(%q) = %+v, want source %q transform %s", g.expr, f, g.source, g.tr)
		}
	}
	bad := []struct{ expr, msg string }{
		{"", `invalid configuration: partition field "": empty expression; use col, bucket(col, N), truncate(col, W), year(col), month(col), day(col), hour(col) or void(col)`},
		{"bucket(id)", `partition field "bucket(id)": bucket takes a column and N; use`},
		{"bucket(id, 0)", `partition field "bucket(id, 0)": N "0" must be a positive integer; use`},
		{"truncate(s, -3)", `W "-3" must be a positive integer`},
		{"truncate(s, x)", `W "x" must be a positive integer`},
		{"days(ts)", `unknown transform "days"`},
		{"day(ts", `missing closing parenthesis`},
		{"day(a, b)", `day takes one column`},
		{"day()", `argument "" is not a column name or number`},
		{"a b", `not a column name or transform`},
		{"bucket(id, 99999999999)", `N "99999999999" must be a positive integer`},
	}
	for _, b := range bad {
		_, err := partition.ParseField(b.expr)
		if !errors.Is(err, ingest.ErrConfig) || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("partition.ParseField(%q) = %v, want ingest.ErrConfig containing %q", b.expr, err, b.msg)
		}
	}
	if _, err := partition.ParseFields([]string{"a", "bucket(b)"}); err == nil {
		t.Error("partition.ParseFields accepted a bad entry")
	}
}

func TestNewSpec(t *testing.T) {
	t.Parallel()
	sc := fixture.PartitionSchema()
	spec, err := partition.NewSpec(sc, fixture.PartitionFields(t, "day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range spec.Fields() {
		got = append(got, fmt.Sprintf("%d %s %d %s", f.FieldID, f.Name, f.SourceID(), f.Transform))
	}
	want := []string{"1000 ts_day 6 day", "1001 l_bucket 3 bucket[16]", "1002 s_trunc 4 truncate[4]", "1003 meta_region 9 identity", "1004 i_null 2 void", "1005 tstz_hour 7 hour"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec fields = %q, want %q", got, want)
	}
	if d := partition.DescribeSpec(spec, sc); d != "day(ts), bucket(l, 16), truncate(s, 4), meta.region, void(i), hour(tstz)" {
		t.Errorf("partition.DescribeSpec = %q", d)
	}
	if !partition.SpecMatches(spec, sc, fixture.PartitionFields(t, "day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)")) {
		t.Error("partition.SpecMatches(own fields) = false")
	}
	for _, other := range [][]string{
		{"day(ts)", "bucket(l, 8)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
		{"day(ts)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "hour(tstz)"},
		{"bucket(l, 16)", "day(ts)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
		{"day(tstz)", "bucket(l, 16)", "truncate(s, 4)", "meta.region", "void(i)", "hour(tstz)"},
	} {
		if partition.SpecMatches(spec, sc, fixture.PartitionFields(t, other...)) {
			t.Errorf("partition.SpecMatches(%q) = true", other)
		}
	}

	bad := []struct {
		exprs []string
		msg   string
	}{
		{[]string{"nope"}, `partition field "nope": no column "nope" in the table schema; available columns: n, i, l, s, d, ts, tstz, meta.region, f`},
		{[]string{"day(s)"}, `partition field "day(s)": transform day cannot apply to column "s" of type string; year, month and day apply to date and timestamp columns`},
		{[]string{"hour(d)"}, `transform hour cannot apply to column "d" of type date`},
		{[]string{"truncate(d, 3)"}, `transform truncate[3] cannot apply to column "d"`},
		{[]string{"bucket(f, 3)"}, `transform bucket[3] cannot apply to column "f" of type double`},
		{[]string{"s", "s"}, `partition fields "s" and "s" partition column "s" twice the same way; keep one`},
		{[]string{"day(ts)", "hour(ts)"}, `partition fields "day(ts)" and "hour(ts)" partition column "ts" twice`},
	}
	for _, b := range bad {
		_, err := partition.NewSpec(sc, fixture.PartitionFields(t, b.exprs...))
		if !errors.Is(err, ingest.ErrConfig) || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("partition.NewSpec(%q) = %v, want ingest.ErrConfig containing %q", b.exprs, err, b.msg)
		}
	}
	if _, err := partition.NewSpec(sc, fixture.PartitionFields(t, "bucket(s, 4)", "s")); err != nil {
		t.Errorf("bucket and identity of one column: %v", err)
	}
}

// Iceberg allows truncate of a decimal, which floe's writer does not
// compute: a table floe creates must not ask for it.
func TestWritable(t *testing.T) {
	t.Parallel()
	dec := iceberg.DecimalTypeOf(10, 2)
	for _, c := range []struct {
		src  iceberg.Type
		tr   iceberg.Transform
		want bool
	}{
		{dec, iceberg.TruncateTransform{Width: 4}, false},
		{dec, iceberg.BucketTransform{NumBuckets: 4}, true},
		{dec, iceberg.IdentityTransform{}, true},
		{iceberg.PrimitiveTypes.String, iceberg.TruncateTransform{Width: 4}, true},
		{iceberg.PrimitiveTypes.Float64, iceberg.BucketTransform{NumBuckets: 4}, false},
		{iceberg.PrimitiveTypes.Float64, iceberg.VoidTransform{}, true},
		{iceberg.PrimitiveTypes.Date, iceberg.HourTransform{}, false},
		{iceberg.PrimitiveTypes.TimestampNs, iceberg.HourTransform{}, true},
	} {
		if got := partition.Writable(c.src, c.tr); got != c.want {
			t.Errorf("partition.Writable(%s, %s) = %v, want %v", c.src, c.tr, got, c.want)
		}
	}
}

// FuzzParseField checks that the parser never panics, that what it
// accepts has a source, and that the canonical form parses back the same.
func FuzzParseField(f *testing.F) {
	for _, s := range []string{"a", "bucket(a, 3)", "truncate(4, b.c)", "DAY( ts )", "void(x)", "bucket(", "(", ")", "a(b,c,d)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		pf, err := partition.ParseField(expr)
		if err != nil {
			if !errors.Is(err, ingest.ErrConfig) {
				t.Fatalf("%q: error %v is not ingest.ErrConfig", expr, err)
			}
			return
		}
		if pf.Source == "" {
			t.Fatalf("%q: empty source", expr)
		}
		var canon string
		switch tr := pf.Transform.(type) {
		case iceberg.IdentityTransform:
			canon = pf.Source
		case iceberg.BucketTransform:
			canon = fmt.Sprintf("bucket(%s, %d)", pf.Source, tr.NumBuckets)
		case iceberg.TruncateTransform:
			canon = fmt.Sprintf("truncate(%s, %d)", pf.Source, tr.Width)
		default:
			canon = fmt.Sprintf("%s(%s)", tr, pf.Source)
		}
		again, err := partition.ParseField(canon)
		if err != nil || again.Source != pf.Source || !again.Transform.Equals(pf.Transform) {
			t.Fatalf("%q: canonical %q parses as %+v, %v", expr, canon, again, err)
		}
	})
}
