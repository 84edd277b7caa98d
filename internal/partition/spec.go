// Package partition is the partition spec as users write it: the
// partition-fields entries parsed, a new table's spec built from them, an
// existing table's spec matched against them and described back, and the
// transforms floe's writer computes. The writer, the committer and the
// root share it, so the committer needs nothing of the writer.
package partition

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/floe-io/floe/internal/ingest"
)

// Field is one parsed `partition-fields` entry.
type Field struct {
	Expr      string            // as written, for messages
	Source    string            // dotted source column name, e.g. "ts" or "meta.region"
	Transform iceberg.Transform // iceberg.IdentityTransform{}, BucketTransform{NumBuckets}, ...
}

const partitionForms = "col, bucket(col, N), truncate(col, W), year(col), month(col), day(col), hour(col) or void(col)"

// ParseField parses "col", "bucket(col, N)", "truncate(col, W)",
// "year(col)", "month(col)", "day(col)", "hour(col)" and "void(col)".
// Transform names are case-insensitive; Spark's argument order
// "bucket(N, col)" is accepted too, since users copy it from DDL.
func ParseField(expr string) (Field, error) {
	bad := func(why string) (Field, error) {
		return Field{}, fmt.Errorf("%w: partition field %q: %s; use %s", ingest.ErrConfig, expr, why, partitionForms)
	}
	s := strings.TrimSpace(expr)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if s == "" {
			return bad("empty expression")
		}
		if strings.ContainsAny(s, "), \t") {
			return bad("not a column name or transform")
		}
		return Field{Expr: expr, Source: s, Transform: iceberg.IdentityTransform{}}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return bad("missing closing parenthesis")
	}
	name := strings.ToLower(strings.TrimSpace(s[:open]))
	var args []string
	for a := range strings.SplitSeq(s[open+1:len(s)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, "() \t") {
			return bad(fmt.Sprintf("argument %q is not a column name or number", a))
		}
	}
	one := func(t iceberg.Transform) (Field, error) {
		if len(args) != 1 {
			return bad(fmt.Sprintf("%s takes one column", name))
		}
		return Field{Expr: expr, Source: args[0], Transform: t}, nil
	}
	withParam := func(param string, mk func(int) iceberg.Transform) (Field, error) {
		if len(args) != 2 {
			return bad(fmt.Sprintf("%s takes a column and %s", name, param))
		}
		col, num := args[0], args[1]
		if _, err := strconv.Atoi(col); err == nil {
			if _, err := strconv.Atoi(num); err != nil {
				col, num = num, col
			}
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 || n > math.MaxInt32 {
			return bad(fmt.Sprintf("%s %q must be a positive integer", param, num))
		}
		return Field{Expr: expr, Source: col, Transform: mk(int(n))}, nil
	}
	switch name {
	case "identity":
		return one(iceberg.IdentityTransform{})
	case "year":
		return one(iceberg.YearTransform{})
	case "month":
		return one(iceberg.MonthTransform{})
	case "day":
		return one(iceberg.DayTransform{})
	case "hour":
		return one(iceberg.HourTransform{})
	case "void":
		return one(iceberg.VoidTransform{})
	case "bucket":
		return withParam("N", func(n int) iceberg.Transform { return iceberg.BucketTransform{NumBuckets: n} })
	case "truncate":
		return withParam("W", func(w int) iceberg.Transform { return iceberg.TruncateTransform{Width: w} })
	}
	return bad(fmt.Sprintf("unknown transform %q", name))
}

// ParseFields parses every entry, stopping at the first bad one.
func ParseFields(exprs []string) ([]Field, error) {
	fields := make([]Field, 0, len(exprs))
	for _, e := range exprs {
		f, err := ParseField(e)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// FieldName follows Iceberg Java and Spark, so that tables floe
// creates look like tables those engines create, except that a nested
// source's dots become underscores: iceberg-go's manifest writer refuses
// partition names that are not Avro names, where Java would escape them.
func FieldName(source string, t iceberg.Transform) string {
	source = strings.ReplaceAll(source, ".", "_")
	switch t.(type) {
	case iceberg.IdentityTransform:
		return source
	case iceberg.BucketTransform:
		return source + "_bucket"
	case iceberg.TruncateTransform:
		return source + "_trunc"
	case iceberg.VoidTransform:
		return source + "_null"
	}
	return source + "_" + t.String()
}

// NewSpec builds the spec for a table being created from schema sc.
// Field ids start at 1000, as in every Iceberg implementation.
func NewSpec(sc *iceberg.Schema, fields []Field) (iceberg.PartitionSpec, error) {
	opts := make([]iceberg.PartitionOption, 0, len(fields))
	for i, f := range fields {
		src, ok := sc.FindFieldByName(f.Source)
		if !ok {
			src, ok = sc.FindFieldByNameCaseInsensitive(f.Source)
		}
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition field %q: no column %q in the table schema; available columns: %s", ingest.ErrConfig, f.Expr, f.Source, strings.Join(partitionableColumns(sc), ", "))
		}
		name, _ := sc.FindColumnName(src.ID)
		if !f.Transform.CanTransform(src.Type) || !Writable(src.Type, f.Transform) {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition field %q: transform %s cannot apply to column %q of type %s; %s", ingest.ErrConfig, f.Expr, f.Transform, name, src.Type, transformHint(f.Transform))
		}
		for _, prev := range fields[:i] {
			if strings.EqualFold(prev.Source, f.Source) && (prev.Transform.Equals(f.Transform) || isTime(prev.Transform) && isTime(f.Transform)) {
				return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition fields %q and %q partition column %q twice the same way; keep one", ingest.ErrConfig, prev.Expr, f.Expr, name)
			}
		}
		id := iceberg.PartitionDataIDStart + i
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(src.ID, FieldName(name, f.Transform), f.Transform, sc, &id))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition fields: %w", ingest.ErrConfig, err)
	}
	return spec, nil
}

func isTime(t iceberg.Transform) bool {
	_, ok := t.(iceberg.TimeTransform)
	return ok
}

func transformHint(t iceberg.Transform) string {
	switch t.(type) {
	case iceberg.BucketTransform:
		return "bucket applies to int, long, decimal, date, time, timestamp, string, binary, fixed and uuid columns"
	case iceberg.TruncateTransform:
		return "truncate applies to int, long, string and binary columns"
	case iceberg.HourTransform:
		return "hour applies to timestamp columns"
	case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform:
		return "year, month and day apply to date and timestamp columns"
	}
	return "identity applies to primitive columns"
}

// Writable narrows Transform.CanTransform to what floe's writer computes,
// so that a spec it could not write fails when the table is created, not
// at the first write into it.
func Writable(src iceberg.Type, t iceberg.Transform) bool {
	switch t.(type) {
	case iceberg.VoidTransform:
		return true
	case iceberg.IdentityTransform, iceberg.BucketTransform, iceberg.YearTransform,
		iceberg.MonthTransform, iceberg.DayTransform, iceberg.HourTransform:
	case iceberg.TruncateTransform:
		if _, ok := src.(iceberg.DecimalType); ok {
			return false
		}
	default:
		return false
	}
	switch src.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType,
		iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.BooleanType, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType, iceberg.DecimalType:
		return t.CanTransform(src)
	}
	return false
}

// partitionableColumns lists the primitive columns, nested ones dotted, in
// schema order.
func partitionableColumns(sc *iceberg.Schema) []string {
	byName, err := iceberg.IndexByName(sc)
	if err != nil {
		return nil
	}
	type col struct {
		id   int
		name string
	}
	var cols []col
	for name, id := range byName {
		if t, ok := sc.FindTypeByID(id); ok {
			if _, prim := t.(iceberg.PrimitiveType); prim {
				cols = append(cols, col{id, name})
			}
		}
	}
	slices.SortFunc(cols, func(a, b col) int { return a.id - b.id })
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}

// SpecMatches reports whether spec, a table's current spec bound to sc, has
// exactly these fields in order: same source columns, equal transforms.
func SpecMatches(spec iceberg.PartitionSpec, sc *iceberg.Schema, fields []Field) bool {
	if spec.NumFields() != len(fields) {
		return false
	}
	for i, f := range fields {
		pf := spec.Field(i)
		src, ok := sc.FindFieldByName(f.Source)
		if !ok {
			src, ok = sc.FindFieldByNameCaseInsensitive(f.Source)
		}
		if !ok || src.ID != pf.SourceID() || !pf.Transform.Equals(f.Transform) {
			return false
		}
	}
	return true
}

// DescribeSpec renders a spec the way users write partition-fields, e.g.
// "day(ts), bucket(id, 16), region".
func DescribeSpec(spec iceberg.PartitionSpec, sc *iceberg.Schema) string {
	parts := make([]string, 0, spec.NumFields())
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); ok {
			parts = append(parts, SourceName(sc, pf))
			continue
		}
		parts = append(parts, Expr(SourceName(sc, pf), pf.Transform))
	}
	return strings.Join(parts, ", ")
}

// SourceName is the column a partition field derives from, named as
// messages name a dropped one.
func SourceName(sc *iceberg.Schema, pf iceberg.PartitionField) string {
	if src, ok := sc.FindColumnName(pf.SourceID()); ok {
		return src
	}
	return fmt.Sprintf("<dropped column %d>", pf.SourceID())
}

// Expr writes transform t of column src as partition-fields takes it,
// identity spelled out so that the transform is always named: day(ts),
// identity(country), bucket(id, 16).
func Expr(src string, t iceberg.Transform) string {
	switch t := t.(type) {
	case iceberg.BucketTransform:
		return fmt.Sprintf("bucket(%s, %d)", src, t.NumBuckets)
	case iceberg.TruncateTransform:
		return fmt.Sprintf("truncate(%s, %d)", src, t.Width)
	}
	return fmt.Sprintf("%s(%s)", t, src)
}

// JoinExprs lists fields as partition-fields wrote them.
func JoinExprs(fs []Field) string {
	exprs := make([]string, len(fs))
	for i, f := range fs {
		exprs[i] = f.Expr
	}
	return strings.Join(exprs, ", ")
}
