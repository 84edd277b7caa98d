package scan

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/filter"
	"github.com/floe-io/floe/internal/ingest"
)

// This file decides which column statistics floe lets prune a read.
// iceberg-go skips data files by the metrics their manifest records and
// Parquet row groups by their column chunk statistics, and trusts both.
// Statistics that contradict themselves (a value count that leaves out the
// nulls, bounds on a column of nulls only, more nulls than rows, a lower
// bound above the upper) describe no possible data, so floe treats them as
// absent: such a file or row group is read and its rows checked against
// the whole filter.
//
// iceberg-go 0.7.0 also misreads sound Parquet statistics: its row-group
// evaluator takes the chunk's count of non-null values (what arrow-go's
// Statistics.NumValues returns) for Iceberg's value count, which includes
// the nulls, so it takes a row group holding as many nulls as values for a
// group of nulls only and skips it for IS NOT NULL, =, <, IN and the like.
// Such row groups are read the same way.
//
// Parquet writers leave out a bound longer than their limit (arrow-go and
// Arrow C++ over 4 KiB) and keep the other; arrow-go v18.8 and v18.9 then
// read the absent maximum of a string or binary chunk as the empty value,
// which lies below every other, and iceberg-go prunes the group for most
// predicates on the column. A group whose string or binary maximum is
// empty is read the same way (one holding only '' is rare).

// colStats are one flat column's statistics in Iceberg's terms over
// records rows: values counts every row's value, nulls and NaNs included.
// A nil count or bound was not recorded.
type colStats struct {
	records             int64
	values, nulls, nans *int64
	lower, upper        []byte
}

// contradicts reports whether s can describe no column of type typ that
// holds one value per row.
func (s colStats) contradicts(typ iceberg.Type) bool {
	over := func(n *int64) bool { return n != nil && (*n < 0 || *n > s.records) }
	if over(s.values) || over(s.nulls) || over(s.nans) {
		return true
	}
	if s.values != nil && *s.values != s.records {
		return true
	}
	if s.nulls != nil && s.nans != nil && *s.nulls+*s.nans > s.records {
		return true
	}
	if s.nulls != nil && *s.nulls == s.records && s.records > 0 && (s.lower != nil || s.upper != nil) {
		return true
	}
	if s.lower == nil || s.upper == nil {
		return false
	}
	lo, err := iceberg.LiteralFromBytes(typ, s.lower)
	if err != nil {
		return true
	}
	hi, err := iceberg.LiteralFromBytes(typ, s.upper)
	if err != nil {
		return true
	}
	c, ok := compareLiterals(lo, hi)
	return !ok || c > 0
}

// compareLiterals orders two literals of one type as Iceberg does; ok is
// false for types without an order. A NaN compares equal to everything:
// old writers record NaN bounds, which iceberg-go already reads as saying
// nothing.
func compareLiterals(a, b iceberg.Literal) (int, bool) {
	switch x := a.(type) {
	case iceberg.TypedLiteral[bool]:
		y, ok := b.(iceberg.TypedLiteral[bool])
		if !ok {
			return 0, false
		}
		return cmp.Compare(boolInt(x.Value()), boolInt(y.Value())), true
	case iceberg.TypedLiteral[int32]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[int64]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[float32]:
		y, ok := b.(iceberg.TypedLiteral[float32])
		if !ok {
			return 0, false
		}
		return floatCompare(float64(x.Value()), float64(y.Value())), true
	case iceberg.TypedLiteral[float64]:
		y, ok := b.(iceberg.TypedLiteral[float64])
		if !ok {
			return 0, false
		}
		return floatCompare(x.Value(), y.Value()), true
	case iceberg.TypedLiteral[iceberg.Date]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[iceberg.Time]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[iceberg.Timestamp]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[iceberg.TimestampNano]:
		return typedCompare(x, b)
	case iceberg.TypedLiteral[string]:
		y, ok := b.(iceberg.TypedLiteral[string])
		if !ok {
			return 0, false
		}
		return strings.Compare(x.Value(), y.Value()), true
	case iceberg.TypedLiteral[[]byte]:
		y, ok := b.(iceberg.TypedLiteral[[]byte])
		if !ok {
			return 0, false
		}
		return bytes.Compare(x.Value(), y.Value()), true
	case iceberg.TypedLiteral[uuid.UUID]:
		y, ok := b.(iceberg.TypedLiteral[uuid.UUID])
		if !ok {
			return 0, false
		}
		xv, yv := x.Value(), y.Value()
		return bytes.Compare(xv[:], yv[:]), true
	case iceberg.TypedLiteral[iceberg.Decimal]:
		y, ok := b.(iceberg.TypedLiteral[iceberg.Decimal])
		if !ok || x.Value().Scale != y.Value().Scale {
			return 0, false
		}
		return x.Value().Val.Cmp(y.Value().Val), true
	}
	return 0, false
}

func floatCompare(a, b float64) int {
	if math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return cmp.Compare(a, b)
}

func typedCompare[T int32 | int64 | iceberg.Date | iceberg.Time | iceberg.Timestamp | iceberg.TimestampNano](x iceberg.TypedLiteral[T], b iceberg.Literal) (int, bool) {
	y, ok := b.(iceberg.TypedLiteral[T])
	if !ok {
		return 0, false
	}
	return cmp.Compare(x.Value(), y.Value()), true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prunedOn are the fields a filter's statistics pruning reads: its
// top-level primitive columns (iceberg-go prunes on nothing else, since
// package filter pushes no predicate on a field inside a struct).
func prunedOn(e filter.Expr, sc *iceberg.Schema) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, c := range filter.Columns(e) {
		if len(c.Path) != 1 {
			continue
		}
		f, ok := sc.FindFieldByName(c.Path[0])
		if !ok {
			f, ok = sc.FindFieldByNameCaseInsensitive(c.Path[0])
		}
		if _, prim := f.Type.(iceberg.PrimitiveType); ok && prim && !slices.ContainsFunc(out, func(o iceberg.NestedField) bool { return o.ID == f.ID }) {
			out = append(out, f)
		}
	}
	return out
}

// fileStatsTrusted reports whether the manifest metrics of a data file may
// prune it: none of the fields' metrics contradict themselves.
func fileStatsTrusted(df iceberg.DataFile, fields []iceberg.NestedField) bool {
	values, nulls, nans := df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts()
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	count := func(m map[int]int64, id int) *int64 {
		if v, ok := m[id]; ok {
			return &v
		}
		return nil
	}
	for _, f := range fields {
		s := colStats{
			records: df.Count(),
			values:  count(values, f.ID), nulls: count(nulls, f.ID), nans: count(nans, f.ID),
			lower: lower[f.ID], upper: upper[f.ID],
		}
		if s.contradicts(f.Type) {
			return false
		}
	}
	return true
}

// mayMisreadRowGroups reports whether iceberg-go may misread the row
// group statistics of the data file on fields (see the top of this file):
// a field holds strings or binary values, or the manifest leaves open that
// one holds nulls somewhere.
func mayMisreadRowGroups(df iceberg.DataFile, fields []iceberg.NestedField) bool {
	nulls := df.NullValueCounts()
	for _, f := range fields {
		switch f.Type.(type) {
		case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
			return true
		}
		if n, ok := nulls[f.ID]; !ok || n != 0 {
			return true
		}
	}
	return false
}

// rowGroupStatsTrusted reports whether iceberg-go may prune the row groups
// of a Parquet file by the statistics of the fields' columns: every one is
// sound and says what iceberg-go reads it to say. Only columns carrying a
// field's id count, as only those are pruned on.
func rowGroupStatsTrusted(md *metadata.FileMetaData, fields []iceberg.NestedField) bool {
	byID := map[int]iceberg.NestedField{}
	for _, f := range fields {
		byID[f.ID] = f
	}
	root := md.Schema.Root()
	var cols []int
	var types []iceberg.Type
	for i := 0; i < md.Schema.NumColumns(); i++ {
		c := md.Schema.Column(i)
		// Top-level columns only: their value count is their row count.
		if f, ok := byID[int(c.SchemaNode().FieldID())]; ok && c.SchemaNode().Parent() == root {
			cols, types = append(cols, i), append(types, f.Type)
		}
	}
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		for j, i := range cols {
			chunk, err := rg.ColumnChunk(i)
			if err != nil {
				return false
			}
			if set, err := chunk.StatsSet(); err != nil || !set {
				continue
			}
			st, err := chunk.Statistics()
			if err != nil {
				return false
			}
			if st == nil {
				continue
			}
			values := chunk.NumValues()
			s := colStats{records: rg.NumRows(), values: &values}
			if st.HasNullCount() {
				n := st.NullCount()
				s.nulls = &n
				if nonNull := st.NumValues(); nonNull == n && nonNull > 0 {
					return false // iceberg-go's misreading
				}
			}
			if st.HasMinMax() {
				s.lower, s.upper = icebergBounds(st)
				byteArray := st.Type() == parquet.Types.ByteArray || st.Type() == parquet.Types.FixedLenByteArray
				if byteArray && len(s.upper) == 0 {
					return false // an absent maximum, or '' alone
				}
			}
			if s.contradicts(types[j]) {
				return false
			}
		}
	}
	return true
}

// icebergBounds are a chunk's min and max in Iceberg's single-value
// binary form: Parquet stores a decimal held in INT32 or INT64
// little-endian, Iceberg big-endian.
func icebergBounds(st metadata.TypedStatistics) (lower, upper []byte) {
	lower, upper = st.EncodeMin(), st.EncodeMax()
	d := st.Descr()
	if _, dec := d.LogicalType().(pqschema.DecimalLogicalType); dec &&
		(d.PhysicalType() == parquet.Types.Int32 || d.PhysicalType() == parquet.Types.Int64) {
		slices.Reverse(lower)
		slices.Reverse(upper)
	}
	return lower, upper
}

// floeWrote reports whether floe committed every data file of snapshot s:
// each snapshot of its ancestry that added data files carries floe's
// summary keys, and none has been expired. The files' manifest metrics
// are then floe's own, which never contradict themselves, so the second,
// unfiltered plan that looks for files wrongly pruned is not needed: the
// common case of a table floe alone writes plans once.
func floeWrote(tbl *table.Table, s *table.Snapshot) bool {
	for s != nil {
		p := s.Summary
		if p == nil {
			return false
		}
		added, _ := strconv.Atoi(p.Properties["added-data-files"])
		if added > 0 && p.Properties[ingest.SummaryQueryID] == "" && p.Properties[ingest.SummaryMaintenance] == "" {
			return false
		}
		if s.ParentSnapshotID == nil {
			return true
		}
		if s = tbl.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return false // expired: who added its files cannot be told
		}
	}
	return false
}
