package write

import (
	"bytes"
	"context"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A row group is copied into a partitioned table when its statistics
// prove that every row of it falls in one partition: the partitioner
// itself is asked for the partitions of the row group's minimum and
// maximum, which must be one. That proves it for the transforms that keep
// order (year, month, day, hour, truncate): every value between the two
// falls between their partitions. Identity and bucket do not keep order,
// so for them the minimum must be the maximum. A row group with some
// nulls in a source column, and some values, spans two partitions.

// partitionsOf groups src's row groups by partition, in order of first
// appearance; nil when the statistics of one row group do not prove a
// single partition for it.
func (d *dest) partitionsOf(ctx context.Context, src *copySource, plan *copyPlan) ([]rowGroupsOf, error) {
	var out []rowGroupsOf
	at := map[*partitionKey]int{}
	for g := range src.md.RowGroups {
		key, err := d.rowGroupPartition(ctx, src, plan, g)
		if err != nil || key == nil {
			return nil, err
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, rowGroupsOf{key: key})
		}
		out[i].groups = append(out[i].groups, g)
	}
	return out, nil
}

// rowGroupPartition is the partition of every row of row group g, or nil.
func (d *dest) rowGroupPartition(ctx context.Context, src *copySource, plan *copyPlan, g int) (*partitionKey, error) {
	rg := &src.md.RowGroups[g]
	n := d.schema.NumFields()
	cols := make([]arrow.Array, n)
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	sources := map[int]bool{}
	for _, f := range d.part.fields {
		j := f.path[0]
		cc := &rg.Columns[plan.cols[j]].MetaData
		st := &cc.Statistics
		allNull := st.NullCount == cc.NumValues
		switch {
		case st.NullCount > 0 && !allNull:
			return nil, nil
		case !allNull && (f.xf == xIdentity || f.xf == xBucket) && !bytes.Equal(st.MinValue, st.MaxValue):
			return nil, nil
		}
		if sources[j] {
			continue // a column two fields partition on
		}
		sources[j] = true
		a, ok := boundsArray(d.schema.Field(j).Type, st.MinValue, st.MaxValue, allNull)
		if !ok {
			return nil, nil
		}
		cols[j] = a
	}
	for j := range cols {
		if cols[j] == nil {
			cols[j] = array.MakeArrayOfNull(memoryPool, d.schema.Field(j).Type, 2)
		}
	}
	rec := array.NewRecordBatch(d.schema, cols, 2)
	defer rec.Release()
	groups, err := d.part.split(ctx, rec)
	for _, pg := range groups {
		pg.rec.Release()
	}
	if err != nil || len(groups) != 1 {
		return nil, err
	}
	return groups[0].key, nil
}

// boundsArray is a two-row column of a row group's minimum and maximum
// (both null when its values all are), as Parquet's statistics store
// them (plain encoding, byte arrays without their length).
func boundsArray(dt arrow.DataType, lo, hi []byte, null bool) (arrow.Array, bool) {
	b := array.NewBuilder(memoryPool, dt)
	defer b.Release()
	for _, v := range [][]byte{lo, hi} {
		if null {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			if len(v) != 1 {
				return nil, false
			}
			bb.Append(v[0] != 0)
		case *array.Int32Builder:
			if len(v) != 4 {
				return nil, false
			}
			bb.Append(int32(binary.LittleEndian.Uint32(v)))
		case *array.Date32Builder:
			if len(v) != 4 {
				return nil, false
			}
			bb.Append(arrow.Date32(binary.LittleEndian.Uint32(v)))
		case *array.Int64Builder:
			if len(v) != 8 {
				return nil, false
			}
			bb.Append(int64(binary.LittleEndian.Uint64(v)))
		case *array.TimestampBuilder:
			if len(v) != 8 {
				return nil, false
			}
			bb.Append(arrow.Timestamp(binary.LittleEndian.Uint64(v)))
		case *array.Time64Builder:
			if len(v) != 8 {
				return nil, false
			}
			bb.Append(arrow.Time64(binary.LittleEndian.Uint64(v)))
		case *array.StringBuilder:
			bb.Append(string(v))
		case *array.BinaryBuilder:
			bb.Append(v)
		default:
			return nil, false
		}
	}
	return b.NewArray(), true
}
