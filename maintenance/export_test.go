package maintenance

import "github.com/apache/iceberg-go"

// CoarserFields lets the package's tests call coarserFields with each
// field given as its source column, transform and distinct values.
func CoarserFields(need float64, sources []string, transforms []iceberg.Transform, distinct []int) []string {
	fields := make([]fieldStats, len(sources))
	for i := range sources {
		fields[i] = fieldStats{source: sources[i], transform: transforms[i], distinct: distinct[i]}
	}
	return coarserFields(fields, need)
}
