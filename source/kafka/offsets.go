package kafka

import "github.com/floe-io/floe/internal/cluster"

// The source's offsets are Spark's, and a cluster of workers publishes and
// commits ranges of them (internal/cluster), so the types live there.
type (
	// Offsets are per topic and partition the next offset to read.
	Offsets = cluster.Offsets
	// TopicPartition names one partition.
	TopicPartition = cluster.TopicPartition
	// Range is what one batch reads of a partition: the offsets [From, Until).
	Range = cluster.Range
)

// Limit cuts the ranges to at most limit offsets in all (cluster.Limit).
func Limit(ranges []Range, limit int64) []Range { return cluster.Limit(ranges, limit) }
