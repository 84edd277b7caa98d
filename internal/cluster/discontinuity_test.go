package cluster_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/cluster"
)

// Offsets read up to are held against the logs and topic ids now: a
// partition gone, a topic with another id, a log ending before the offset
// read are discontinuities; a record without ids (an older floe's) or
// brokers without them leave only the offsets to tell.
func TestFindDiscontinuities(t *testing.T) {
	t.Parallel()
	tp := func(topic string, p int32) cluster.TopicPartition {
		return cluster.TopicPartition{Topic: topic, Partition: p}
	}
	read := cluster.Offsets{}
	read.Set(tp("a", 0), 100)
	read.Set(tp("a", 1), 100)
	read.Set(tp("b", 0), 100)
	read.Set(tp("c", 0), cluster.Earliest)
	logs := map[cluster.TopicPartition]cluster.Log{tp("a", 0): {0, 150}, tp("a", 1): {0, 150}, tp("b", 0): {0, 150}, tp("c", 0): {0, 10}}
	for _, c := range []struct {
		name          string
		recorded, now cluster.TopicIDs
		logs          func(map[cluster.TopicPartition]cluster.Log)
		want          []string
	}{
		{"same topics", cluster.TopicIDs{"a": "A", "b": "B"}, cluster.TopicIDs{"a": "A", "b": "B"}, nil, nil},
		{"a created again", cluster.TopicIDs{"a": "A", "b": "B"}, cluster.TopicIDs{"a": "A2", "b": "B"}, nil,
			[]string{"topic a was deleted and created again (its id was A, now A2): partition a/0 was read up to offset 100 of the old topic, and the new one holds offsets 0 to 149, partition a/1 was read up to offset 100 of the old topic, and the new one holds offsets 0 to 149"}},
		{"a log lost, same ids", cluster.TopicIDs{"a": "A"}, cluster.TopicIDs{"a": "A"}, func(l map[cluster.TopicPartition]cluster.Log) { l[tp("a", 1)] = cluster.Log{0, 0} },
			[]string{"partition a/1 was read up to offset 100 but now ends at offset 0 and holds no message (its next offset is 0): its log was lost (the topic deleted and created again, or a broker restarted with an empty log)"}},
		{"no ids recorded: only offsets tell", nil, cluster.TopicIDs{"a": "A2"}, func(l map[cluster.TopicPartition]cluster.Log) { l[tp("b", 0)] = cluster.Log{0, 40} },
			[]string{"partition b/0 was read up to offset 100 but now ends at offset 40 and holds offsets 0 to 39: its log was lost (the topic deleted and created again, or a broker restarted with an empty log)"}},
		{"brokers without ids", cluster.TopicIDs{"a": "A"}, cluster.TopicIDs{}, nil, nil},
		{"partitions gone", nil, nil, func(l map[cluster.TopicPartition]cluster.Log) { delete(l, tp("b", 0)); delete(l, tp("c", 0)) },
			[]string{"partition b/0, read up to offset 100, is gone (its topic, or the partition, was deleted)"}},
		{"set back to earliest: any log goes on", cluster.TopicIDs{"c": "C"}, cluster.TopicIDs{"c": "C2"}, func(l map[cluster.TopicPartition]cluster.Log) { delete(l, tp("c", 0)) }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := map[cluster.TopicPartition]cluster.Log{}
			for k, v := range logs {
				l[k] = v
			}
			if c.logs != nil {
				c.logs(l)
			}
			found, err := cluster.FindDiscontinuities(read, c.recorded, l, c.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := cluster.Describe(found); !slices.Equal(got, c.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
