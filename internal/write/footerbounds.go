package write

import (
	"maps"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
)

// metricsProperties are the table properties a data file's Iceberg metrics
// are computed with: tbl's, with counts alone for the columns whose row
// groups do not all record the bounds of the values they hold. iceberg-go
// takes a file's bounds as the extremes of its row groups' bounds, passing
// over a group that records no minimum and maximum, and arrow-go reads a
// group that records a minimum alone (its writer leaves out a bound over
// 4 KiB and keeps the other) as having the empty maximum: either way the
// file would get bounds its values lie outside, and every engine reading
// the manifest would skip it for values it holds.
func metricsProperties(props iceberg.Properties, md *metadata.FileMetaData) iceberg.Properties {
	var out iceberg.Properties
	for i := 0; i < md.Schema.NumColumns(); i++ {
		if !boundless(md, i) {
			continue
		}
		if out == nil {
			out = maps.Clone(props)
			if out == nil {
				out = iceberg.Properties{}
			}
		}
		out["write.metadata.metrics.column."+md.Schema.Column(i).ColumnPath().String()] = "counts"
	}
	if out == nil {
		return props
	}
	return out
}

// boundless reports whether a row group holds values of column i without
// bounds that arrow-go reads as they were written: none, or an empty
// string or binary maximum, which is what an absent maximum reads as (and
// what a group of empty values alone records, rare enough to lose its
// bounds for).
func boundless(md *metadata.FileMetaData, i int) bool {
	for g := 0; g < md.NumRowGroups(); g++ {
		cc, err := md.RowGroup(g).ColumnChunk(i)
		if err != nil {
			return true
		}
		if set, err := cc.StatsSet(); err != nil || !set {
			continue // iceberg-go then records no bounds for the column
		}
		st, err := cc.Statistics()
		if err != nil || st == nil {
			continue
		}
		if !st.HasMinMax() {
			if !st.HasNullCount() || st.NullCount() < cc.NumValues() {
				return true
			}
			continue
		}
		switch st.Type() {
		case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
			if len(st.EncodeMax()) == 0 {
				return true
			}
		}
	}
	return false
}
