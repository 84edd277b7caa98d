package cluster_test

import (
	"slices"
	"testing"

	"github.com/floe-io/floe/internal/cluster"
)

// maxOffsetsPerTrigger is split across partitions in proportion to their
// backlog, shares below one rounded up and above one down, as in Spark.
func TestLimitSplitsByBacklog(t *testing.T) {
	t.Parallel()
	r := func(p int32, from, until int64) cluster.Range {
		return cluster.Range{TopicPartition: cluster.TopicPartition{Topic: "t", Partition: p}, From: from, Until: until}
	}
	in := []cluster.Range{r(0, 0, 900), r(1, 10, 100), r(2, 5, 6), r(3, 7, 7)}
	got := cluster.Limit(in, 100)
	var sizes []int64
	for _, g := range got {
		sizes = append(sizes, g.Size())
	}
	// 900/991*100 = 90.8 -> 90; 90/991*100 = 9.08 -> 9; 1/991*100 = 0.1 -> 1.
	if want := []int64{90, 9, 1, 0}; !slices.Equal(sizes, want) {
		t.Fatalf("Limit(100) took %v, want %v", sizes, want)
	}
	if got := cluster.Limit(in, 10_000); !slices.Equal(got, in) {
		t.Fatalf("a limit above the backlog changed the ranges: %v", got)
	}
}
