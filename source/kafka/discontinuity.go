package kafka

import (
	"context"
	"fmt"
	"strings"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/source"
)

// A topic deleted and created again, or a broker that lost its log, starts
// a partition's offsets again at 0: the offsets the query read up to are
// then above the partition's end, or, once as many messages were written
// again, look like a place in the new log. So each batch's record (the
// checkpoint's and the table's) carries, beside its offsets, the ids of
// the topics they were read from (cluster.InputTopicIDs), and each plan
// holds both against the brokers before it reads on (Spark's
// failOnDataLoss, which sees only the offsets).

var _ source.Recorder = (*Source)(nil)

// position is where the source goes on from: a batch's end offset and the
// ids of the topics it was read from; ids is nil when they are unknown (a
// record written before records carried them).
type position struct {
	end string
	ids cluster.TopicIDs
}

// idsAt returns the ids of the topics offset o was read from, or nil when
// the source does not know them.
func (s *Source) idsAt(o source.Offset) cluster.TopicIDs {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos.ids == nil || s.pos.end != string(o) {
		return nil
	}
	return s.pos.ids
}

func (s *Source) setPosition(o source.Offset, ids cluster.TopicIDs) {
	s.mu.Lock()
	s.pos = position{end: string(o), ids: ids}
	s.mu.Unlock()
}

// discontinuities holds the offsets st, read from topics of the ids
// recorded, against the brokers' listing l: with failOnDataLoss (the
// default) any partition that does not go on from st stops the query,
// naming it; otherwise each is named in a warning and returned, to be read
// again from its earliest offset. A partition set back to earliest that is
// gone waits for its topic to come back, and is read from its first offset
// then.
func (s *Source) discontinuities(st Offsets, recorded cluster.TopicIDs, l listing) ([]TopicPartition, error) {
	found, err := cluster.FindDiscontinuities(st, recorded, l.logs(), l.ids)
	if err != nil {
		return nil, err
	}
	if err := s.judge(found); err != nil {
		return nil, err
	}
	for _, msg := range cluster.Describe(found) {
		s.warn("kafka source: %s; reading again from the earliest offset, as failOnDataLoss is false", msg)
	}
	reset := make([]TopicPartition, len(found))
	for i, d := range found {
		reset[i] = d.TopicPartition
	}
	return reset, nil
}

// judge turns discontinuities, with failOnDataLoss (the default), into
// the error that stops the query: exit 1, naming each partition, the
// offset it was read up to, its log now, and the option.
func (s *Source) judge(found []cluster.Discontinuity) error {
	if len(found) == 0 || !s.failOnDataLoss {
		return nil
	}
	return fmt.Errorf("%w: kafka source: %s; messages the query had not read may be lost, and the offsets it holds do not go on in the partitions' logs now. "+
		"Set source.options.failOnDataLoss=false to read such partitions again from their earliest offset, with a warning", source.ErrCannotContinue, strings.Join(cluster.Describe(found), "; "))
}

// BatchInput is the account of batch (start, end]: the ids of the topics
// its end offsets were read from.
func (s *Source) BatchInput(prev map[string]string, start, end source.Offset) (map[string]string, error) {
	en, err := source.DecodeOffset[Offsets](end, "kafka source")
	if err != nil {
		return nil, err
	}
	ids := s.idsAt(end)
	if ids == nil {
		// A batch an earlier run planned, run again after a stop: its
		// offsets are of the topics the previous account names, and of
		// those listed now for topics new to it (Read has just listed them).
		before, err := cluster.ParseTopicIDs(prev)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		listed := s.listedIDs
		s.mu.Unlock()
		ids = before.Merge(listed)
	}
	ids = ids.Of(en)
	s.setPosition(end, ids)
	return map[string]string{cluster.InputTopicIDs: ids.String()}, nil
}

// CheckInput takes the ids of the topics the newest committed batch was
// read from, which the next plan holds against the brokers. A record
// without them (an older floe's) leaves them unknown: only the offsets
// are checked until the next batch records them.
func (s *Source) CheckInput(input map[string]string, _, end source.Offset) error {
	ids, err := cluster.ParseTopicIDs(input)
	if err != nil || ids == nil {
		return err
	}
	s.setPosition(end, ids)
	return nil
}

// RebuildInput has nothing to remake: the account is the ids themselves,
// which the rebuilt checkpoint keeps.
func (s *Source) RebuildInput(context.Context, map[string]string, source.Offset) error { return nil }
