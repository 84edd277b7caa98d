package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// OptionDeadLetterTopic names the topic that on-bad-record: dead-letter
// sends the messages it sets aside to, as Kafka Connect's
// errors.deadletterqueue.topic.name does, instead of the dead-letter table.
const OptionDeadLetterTopic = "deadLetterTopic"

// The headers of a dead letter: Kafka Connect's names for where the
// message came from and why it was set aside, and floe's for the query
// and batch that sent it, by which a re-run batch finds what it sent.
const (
	headerTopic     = "__connect.errors.topic"
	headerPartition = "__connect.errors.partition"
	headerOffset    = "__connect.errors.offset"
	headerError     = "__connect.errors.exception.message"
	headerQuery     = "floe.query"
	headerBatch     = "floe.batch"
)

var _ source.DeadLetterWriter = (*Source)(nil)

// SendsDeadLetters tells whether deadLetterTopic is set.
func (s *Source) SendsDeadLetters() bool { return s.deadLetterTopic() != "" }

func (s *Source) deadLetterTopic() string { return strings.TrimSpace(s.opts[OptionDeadLetterTopic]) }

// SendDeadLetters produces the records to deadLetterTopic, each with its
// key and value as read and the headers above, leaving out those that a
// run which stopped before committing the batch sent already: the
// topic's messages since the batch was planned are read first, and those
// of this query and batch are not sent again.
func (s *Source) SendDeadLetters(ctx context.Context, query string, batchID, plannedMs int64, records []ingest.BadRecord) error {
	topic := s.deadLetterTopic()
	sent, err := s.sentDeadLetters(ctx, topic, query, batchID, plannedMs)
	if err != nil {
		return fmt.Errorf("kafka source: dead-letter topic %s: %w", topic, err)
	}
	var out []*kgo.Record
	for _, r := range records {
		at := origin(r.Topic, r.Partition, r.Offset)
		if sent[at] {
			continue
		}
		out = append(out, &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Headers: []kgo.RecordHeader{
			{Key: headerTopic, Value: []byte(r.Topic)},
			{Key: headerPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
			{Key: headerOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
			{Key: headerError, Value: []byte(r.Err)},
			{Key: headerQuery, Value: []byte(query)},
			{Key: headerBatch, Value: []byte(strconv.FormatInt(batchID, 10))},
		}})
	}
	if len(out) == 0 {
		return nil
	}
	if err := s.cl.ProduceSync(ctx, out...).FirstErr(); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("%w: kafka source: dead-letter topic %s does not exist; create it, or set source.options.%s to one that does", source.ErrConfig, topic, OptionDeadLetterTopic)
		}
		return fmt.Errorf("kafka source: send %d dead letters to topic %s: %w", len(out), topic, err)
	}
	return nil
}

func origin(topic string, partition int32, offset int64) string {
	return fmt.Sprintf("%s/%d/%d", topic, partition, offset)
}

// sentDeadLetters are the origins of the dead letters of query's batch on
// topic, among its messages since plannedMs.
func (s *Source) sentDeadLetters(ctx context.Context, topic, query string, batchID, plannedMs int64) (map[string]bool, error) {
	// Ten minutes earlier, for a broker whose clock (LogAppendTime) is
	// behind floe's: a message read twice costs nothing, one missed sends
	// it again.
	from, err := s.adm.ListOffsetsAfterMilli(ctx, plannedMs-10*60*1000, topic)
	if err != nil {
		return nil, err
	}
	ends, err := s.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := from.Error(); err != nil {
		return nil, err
	}
	want := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	from.Each(func(o kadm.ListedOffset) {
		end, ok := ends.Lookup(o.Topic, o.Partition)
		if !ok || o.Offset < 0 || o.Offset >= end.Offset {
			return
		}
		want[o.Partition] = kgo.NewOffset().At(o.Offset)
		left[o.Partition] = end.Offset
	})
	sent := map[string]bool{}
	if len(want) == 0 {
		return sent, nil
	}
	cl, err := kgo.NewClient(append(s.kopts[:len(s.kopts):len(s.kopts)], kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: want}),
		// A transaction's marker may be a partition's last offset.
		kgo.KeepControlRecords())...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	batch := strconv.FormatInt(batchID, 10)
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			if h[headerQuery] == query && h[headerBatch] == batch {
				sent[h[headerTopic]+"/"+h[headerPartition]+"/"+h[headerOffset]] = true
			}
		})
	}
	return sent, nil
}
