package cluster

import (
	"context"

	"github.com/floe-io/floe/source"
)

// Source is a source whose partitions a group of workers shares (Kafka's
// consumer group, kafka.group.id): with a processing-time trigger every
// worker reads the partitions the group gives it and publishes the data
// files it writes, and one of them commits them all, one snapshot per
// interval (docs/ARCHITECTURE.md "Scale-out").
type Source interface {
	source.Source
	// JoinCluster joins the source's group; ok is false when the source's
	// options name none.
	JoinCluster(ctx context.Context) (m Member, ok bool, err error)
}

// Assignment is a worker's share of the group's partitions.
type Assignment struct {
	Held       []TopicPartition
	Generation int32
	// Coordinator is set on the one worker that commits for all.
	Coordinator bool
}

// Member is one worker's place in the group and its way to the control
// topic.
type Member interface {
	Group() string
	Assignment(ctx context.Context) (Assignment, error)
	// Initial is where partitions the table has no offset of start;
	// started tells that the table already records the cluster's offsets
	// (or those of a query it replaces).
	Initial(ctx context.Context, tps []TopicPartition, started bool) (Offsets, error)
	// Current tells whether this worker is a member of the group's
	// current generation.
	Current(ctx context.Context) (bool, error)
	// Plan is the ranges from start, read from topics of the recorded ids,
	// to the partitions' ends now.
	Plan(ctx context.Context, start Offsets, ids TopicIDs, limit source.ReadLimit) ([]Range, error)
	// Discontinuities holds the table's ends against the brokers, for the
	// coordinator (Discontinuities).
	Discontinuities(ctx context.Context, ends Offsets, ids TopicIDs) ([]Discontinuity, TopicIDs, error)
	Publish(ctx context.Context, event []byte) error
	ReadControl(ctx context.Context, from int64) ([]ControlRecord, int64, error)
	// CommitGroup commits the table's offsets for the group, for lag
	// dashboards only.
	CommitGroup(ctx context.Context, ends Offsets)
	Close() error
}
