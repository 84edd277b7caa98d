// Package kafka is the Kafka source: the messages of a set of topics read
// once each, in micro-batches, with the options, offsets and meaning of
// Spark's Kafka source (KafkaMicroBatchStream).
//
// An offset says, per topic and partition, the next offset to read, so a
// batch's offsets say exactly what it read: the table's record of the end
// of its last batch is enough to resume (see docs/kafka.md). Consumer-group
// offsets are committed after the table's commit only for lag dashboards;
// they are never read back.
package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

func init() {
	source.Register("kafka", func(cfg config.Source, env source.Env) (source.Source, error) {
		s, err := New(cfg, env)
		if err != nil || s.notified == nil {
			return s, err
		}
		return &Notified{s}, nil
	})
}

// chunkOffsets is the most offsets one part reads, so that a partition's
// large backlog is written by several goroutines.
const chunkOffsets = 250_000

// initialFile holds the starting offsets resolved when the query first
// planned, so that "latest" or a timestamp means the same on a re-run.
const initialFile = "initial-offsets"

// Source reads the messages of the topics its options name.
type Source struct {
	opts     map[string]string
	kopts    []kgo.Opt
	cl       *kgo.Client
	adm      *kadm.Client
	stateDir string
	stateFS  source.FS
	log      *slog.Logger

	topics  []string
	pattern *regexp.Regexp
	assign  map[string][]int32

	starting       string // "earliest", "latest" or JSON
	startingTs     int64  // epoch ms; -1 when not set
	ending         string // "latest" or JSON, for available-now
	failOnDataLoss bool
	includeHeaders bool
	deadLetters    bool // on-bad-record: dead-letter
	// sizes is the messages read so far, which size batches in bytes.
	sizes    sizes
	groupID  string
	format   string // "kafka", "json", "debezium-json", "avro", "debezium-avro", "protobuf" or "json-schema"
	schema   *arrow.Schema
	registry *Registry // with the registry formats
	// upsert is set in mode upsert for a topic of rows, whose tombstones
	// delete their keys (tombstones.go).
	upsert *source.Upsert
	// notified is set when the messages are object-store event
	// notifications (objectNotifications): the batch's rows are those of
	// the objects they announce.
	notified *notified

	// capEnd is the end of the backlog fixed by an available-now run;
	// nil otherwise.
	capEnd Offsets

	mu    sync.Mutex
	table *arrow.Schema
	// tableKeys are the table's identifier fields, the key of a plain
	// Kafka key when the sink names none.
	tableKeys []string
	warnings  []string
	// latest are the partitions' logs as the last plan listed them, for
	// the lag the progress records report (metrics.go).
	latest map[TopicPartition]listed
	// newestTs is the newest message timestamp (epoch ms) read since the
	// last progress record, for its commit lag.
	newestTs atomic.Int64
	// fetched counts the messages read since the last progress record,
	// and the partitions they came from.
	fetched fetchCount
	// pos is where the source goes on from, with the topic ids of its
	// offsets; listedIDs the topic ids the last listing found
	// (discontinuity.go).
	pos       position
	listedIDs cluster.TopicIDs
}

var (
	_ source.Source          = (*Source)(nil)
	_ source.SchemaAware     = (*Source)(nil)
	_ source.MetricsReporter = (*Source)(nil)
)

// New builds the source and its client; brokers are first reached when a
// batch is planned.
func New(cfg config.Source, env source.Env) (*Source, error) {
	o := cfg.Options
	kopts, unknown, err := clientOptions(o)
	if err != nil {
		return nil, err
	}
	log := env.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Source{opts: o, kopts: kopts, stateDir: env.StateDir, stateFS: env.StateFS(), log: log, startingTs: -1,
		starting: strings.TrimSpace(o["startingOffsets"]), ending: strings.TrimSpace(o["endingOffsets"]),
		failOnDataLoss: !strings.EqualFold(strings.TrimSpace(o["failOnDataLoss"]), "false"),
		includeHeaders: strings.EqualFold(strings.TrimSpace(o["includeHeaders"]), "true"),
		groupID:        strings.TrimSpace(o["kafka.group.id"]), format: cfg.Format, deadLetters: env.DeadLetters}
	if len(unknown) > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("kafka source: options %s have no equivalent in floe's Kafka client and are ignored", strings.Join(unknown, ", ")))
	}
	if s.format == "" {
		s.format = "kafka"
	}
	if s.notified, err = newNotified(cfg, env); err != nil {
		return nil, err
	}
	if s.schema, err = jsonrows.Explicit(cfg.Schema); err != nil {
		return nil, fmt.Errorf("%w: %v", source.ErrConfig, err)
	}
	if s.notified == nil {
		switch s.format {
		case "avro", "debezium-avro", "protobuf", "json-schema":
			if s.registry, err = NewRegistry(o); err != nil {
				return nil, err
			}
		}
		switch s.format {
		case "json", "avro", "protobuf", "json-schema":
			s.upsert = env.Upsert
		}
	}
	set := 0
	if v := strings.TrimSpace(o["subscribe"]); v != "" {
		set++
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				s.topics = append(s.topics, t)
			}
		}
	}
	if v := strings.TrimSpace(o["subscribePattern"]); v != "" {
		set++
		if s.pattern, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
			return nil, fmt.Errorf("%w: source.options.subscribePattern %q is not a regular expression: %v", source.ErrConfig, v, err)
		}
	}
	if v := strings.TrimSpace(o["assign"]); v != "" {
		set++
		if err := json.Unmarshal([]byte(v), &s.assign); err != nil || len(s.assign) == 0 {
			return nil, fmt.Errorf("%w: source.options.assign %q is not valid; write JSON such as {\"events\":[0,1]}", source.ErrConfig, v)
		}
		for t := range s.assign {
			s.topics = append(s.topics, t)
		}
		slices.Sort(s.topics)
	}
	if set != 1 {
		return nil, fmt.Errorf("%w: the kafka source needs exactly one of source.options.subscribe, subscribePattern and assign", source.ErrConfig)
	}
	if v := strings.TrimSpace(o["startingTimestamp"]); v != "" {
		if s.startingTs, err = strconv.ParseInt(v, 10, 64); err != nil || s.startingTs < 0 {
			return nil, fmt.Errorf("%w: source.options.startingTimestamp %q is not epoch milliseconds", source.ErrConfig, v)
		}
	}
	for k, v := range map[string]string{"startingOffsets": s.starting, "endingOffsets": s.ending} {
		if _, err := parseSpec(v); err != nil {
			return nil, fmt.Errorf("%w: source.options.%s: %v", source.ErrConfig, k, err)
		}
	}
	if s.ending != "" && strings.EqualFold(s.ending, "earliest") {
		return nil, fmt.Errorf("%w: source.options.endingOffsets cannot be earliest (nothing would be read); use latest or per-partition JSON", source.ErrConfig)
	}
	if s.cl, err = kgo.NewClient(kopts...); err != nil {
		return nil, fmt.Errorf("%w: kafka source: %v", source.ErrConfig, err)
	}
	s.adm = kadm.NewClient(s.cl)
	return s, nil
}

// parseSpec reads startingOffsets or endingOffsets: "", earliest, latest,
// or per-partition JSON with -2 for earliest and -1 for latest.
func parseSpec(v string) (Offsets, error) {
	switch strings.ToLower(v) {
	case "", "earliest", "latest":
		return nil, nil
	}
	var o Offsets
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return nil, fmt.Errorf("%q is not earliest, latest or JSON such as {\"events\":{\"0\":23,\"1\":-2}} (-2 earliest, -1 latest): %v", v, err)
	}
	if _, err := o.Partitions(); err != nil {
		return nil, err
	}
	return o, nil
}

// Description names the topics: two queries reading them read the same
// data.
func (s *Source) Description() string {
	if s.pattern != nil {
		return "kafka:pattern:" + s.opts["subscribePattern"]
	}
	return "kafka:" + strings.Join(s.topics, ",")
}

// InitialOffset is before any message; where each partition starts is
// resolved once, when the first batch is planned (initial).
func (s *Source) InitialOffset() source.Offset { return source.EncodeOffset(Offsets{}) }

// SetTableSchema takes the destination table's columns, which JSON values
// are read as where they allow.
func (s *Source) SetTableSchema(schema *iceberg.Schema) {
	var as *arrow.Schema
	var keys []string
	if schema != nil {
		as, _ = table.SchemaToArrowSchema(schema, nil, true, false)
		for _, id := range schema.IdentifierFieldIDs {
			if name, ok := schema.FindColumnName(id); ok {
				keys = append(keys, name)
			}
		}
	}
	s.mu.Lock()
	s.table, s.tableKeys = as, keys
	s.mu.Unlock()
	if s.notified != nil {
		s.notified.objects.SetTableSchema(schema)
	}
}

// Warnings returns what planning found since the last call.
func (s *Source) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warnings
	s.warnings = nil
	return w
}

func (s *Source) warn(format string, args ...any) {
	s.mu.Lock()
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// Close closes the client.
func (s *Source) Close() error {
	s.cl.Close()
	if s.notified != nil {
		return s.notified.objects.Close()
	}
	return nil
}

// listed is a partition's log: its first offset and the next to be written.
type listed struct{ start, end int64 }

// listing is the partitions the options name, with their logs, and their
// topics' ids, as one look at the brokers saw them.
type listing struct {
	parts map[TopicPartition]listed
	ids   cluster.TopicIDs
}

// logs is the partitions' logs in the cluster package's terms.
func (l listing) logs() map[TopicPartition]cluster.Log {
	out := make(map[TopicPartition]cluster.Log, len(l.parts))
	for tp, p := range l.parts {
		out[tp] = cluster.Log{Start: p.start, End: p.end}
	}
	return out
}

// listTries is how many times partitions lists the offsets when a topic
// is deleted or created again while it lists them.
const listTries = 3

// partitions lists the partitions the options name, with their logs and
// their topics' ids. The ids are read before and after the offsets, and
// the offsets again when they differ, so that the offsets are those of
// the topics the ids name.
func (s *Source) partitions(ctx context.Context) (listing, error) {
	for try := 1; ; try++ {
		before, err := s.topicIDs(ctx, s.topics)
		if err != nil {
			return listing{}, err
		}
		topics := s.topics
		if s.pattern != nil {
			topics = nil
			for t := range before.names {
				if s.pattern.MatchString(t) {
					topics = append(topics, t)
				}
			}
			slices.Sort(topics)
		}
		parts, err := s.offsets(ctx, topics)
		if err != nil || len(topics) == 0 {
			return listing{parts: parts, ids: cluster.TopicIDs{}}, err
		}
		after, err := s.topicIDs(ctx, topics)
		if err != nil {
			return listing{}, err
		}
		ids := after.ids.Of(offsetsOf(parts))
		if maps.Equal(before.ids.Of(offsetsOf(parts)), ids) {
			s.mu.Lock()
			s.listedIDs = ids
			s.mu.Unlock()
			return listing{parts: parts, ids: ids}, nil
		}
		if try == listTries {
			return listing{}, fmt.Errorf("kafka source: topics %s were deleted or created again %d times while their offsets were listed; retry when they settle", strings.Join(topics, ", "), listTries)
		}
	}
}

// offsetsOf names the partitions of parts, for TopicIDs.Of.
func offsetsOf(parts map[TopicPartition]listed) Offsets {
	o := Offsets{}
	for tp, l := range parts {
		o.Set(tp, l.end)
	}
	return o
}

// offsets lists the logs of the topics' partitions the options name.
func (s *Source) offsets(ctx context.Context, topics []string) (map[TopicPartition]listed, error) {
	out := map[TopicPartition]listed{}
	if len(topics) == 0 {
		return out, nil
	}
	starts, err := s.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: list offsets of %s (check kafka.bootstrap.servers): %w", strings.Join(topics, ", "), err)
	}
	ends, err := s.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: list offsets of %s (check kafka.bootstrap.servers): %w", strings.Join(topics, ", "), err)
	}
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			return // a topic not created yet: nothing to read
		}
		if s.assign != nil && !slices.Contains(s.assign[e.Topic], e.Partition) {
			return
		}
		tp := TopicPartition{Topic: e.Topic, Partition: e.Partition}
		l := listed{end: e.Offset}
		if st, ok := starts.Lookup(e.Topic, e.Partition); ok && st.Err == nil {
			l.start = st.Offset
		}
		out[tp] = l
	})
	return out, nil
}

// topicsSeen is what a metadata request says of topics: the names of
// those that exist, and their ids.
type topicsSeen struct {
	names map[string]bool
	ids   cluster.TopicIDs
}

// topicIDs asks a broker for the topics (all of them when none is named)
// and their ids. The client's metadata cache is refreshed, since a topic
// created again a moment ago must show its new id; its refresh gives up
// after a few tries, as a run against brokers that are gone should.
func (s *Source) topicIDs(ctx context.Context, topics []string) (topicsSeen, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := s.cl.RequestCachedMetadata(ctx, req, time.Nanosecond)
	if err != nil {
		return topicsSeen{}, fmt.Errorf("kafka source: look up topics (check kafka.bootstrap.servers): %w", err)
	}
	out := topicsSeen{names: map[string]bool{}, ids: cluster.TopicIDs{}}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 || t.IsInternal && topics == nil {
			continue
		}
		out.names[*t.Topic] = true
		if t.TopicID != ([16]byte{}) {
			out.ids[*t.Topic] = kadm.TopicID(t.TopicID).String()
		}
	}
	return out, nil
}

// initial is where each partition present when the query first planned
// starts, resolved from startingOffsets or startingTimestamp then and kept
// in the source's state. Partitions found later start at their earliest
// offset, 0 unless retention removed it.
func (s *Source) initial(ctx context.Context, first bool, parts map[TopicPartition]listed) (Offsets, error) {
	path := filepath.Join(s.stateDir, initialFile)
	if s.stateDir != "" {
		if b, err := s.stateFS.ReadFile(path); err == nil {
			return source.DecodeOffset[Offsets](b, "kafka source initial")
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if !first {
		return Offsets{}, nil
	}
	init, err := s.resolveInitial(ctx, parts)
	if err != nil {
		return nil, err
	}
	if s.stateDir != "" {
		if err := s.stateFS.MkdirAll(s.stateDir); err != nil {
			return nil, err
		}
		if err := s.stateFS.WriteFile(path, source.EncodeOffset(init)); err != nil {
			return nil, err
		}
	}
	return init, nil
}

// resolveInitial is where startingOffsets or startingTimestamp start parts
// now.
func (s *Source) resolveInitial(ctx context.Context, parts map[TopicPartition]listed) (Offsets, error) {
	init := Offsets{}
	spec, _ := parseSpec(s.starting)
	var byTime kadm.ListedOffsets
	if s.startingTs >= 0 && len(parts) > 0 {
		var topics []string
		for tp := range parts {
			if !slices.Contains(topics, tp.Topic) {
				topics = append(topics, tp.Topic)
			}
		}
		var err error
		if byTime, err = s.adm.ListOffsetsAfterMilli(ctx, s.startingTs, topics...); err != nil {
			return nil, fmt.Errorf("kafka source: offsets after startingTimestamp: %w", err)
		}
	}
	for tp, l := range parts {
		at := l.start
		switch {
		case byTime != nil:
			if o, ok := byTime.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil {
				at = o.Offset
			} else {
				at = l.end
			}
		case spec != nil:
			n, ok := spec.Get(tp)
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: source.options.startingOffsets gives no offset for partition %s; list every partition, with -2 for earliest or -1 for latest", source.ErrConfig, tp)
			case n == -1:
				at = l.end
			case n >= 0:
				at = n
			}
		case strings.EqualFold(s.starting, "latest"):
			at = l.end
		}
		init.Set(tp, at)
	}
	return init, nil
}

// earliest in the offsets of a batch is a partition read again from its
// first offset after a discontinuity (cluster.Earliest).
const earliest = cluster.Earliest

// from is where a batch starting at st reads tp, whose log is l.
func from(st, init Offsets, tp TopicPartition, l listed) int64 {
	n, ok := st.Get(tp)
	if !ok {
		n, ok = init.Get(tp)
	}
	switch {
	case !ok:
		return 0
	case n == earliest:
		return l.start
	}
	return n
}

// PrepareForAvailableNow fixes the end of the backlog: endingOffsets, by
// default the partitions' latest offsets now.
func (s *Source) PrepareForAvailableNow(ctx context.Context) error {
	l, err := s.partitions(ctx)
	if err != nil {
		return err
	}
	spec, _ := parseSpec(s.ending)
	end := Offsets{}
	for tp, p := range l.parts {
		at := p.end
		if spec != nil {
			n, ok := spec.Get(tp)
			if !ok {
				continue
			}
			if n >= 0 {
				at = min(n, p.end)
			}
		}
		end.Set(tp, at)
	}
	s.capEnd = end
	return nil
}

// LatestOffset takes every partition's messages after start, up to the
// partitions' latest offsets (or the available-now end), bounded by
// limit.MaxRows (maxOffsetsPerTrigger) split across partitions. A
// partition that no longer goes on from start (discontinuity.go) stops
// the query, or, with failOnDataLoss false, is set to be read again from
// its earliest offset by the next batch.
func (s *Source) LatestOffset(ctx context.Context, start source.Offset, limit source.ReadLimit) (source.Offset, error) {
	st, err := source.DecodeOffset[Offsets](start, "kafka source")
	if err != nil {
		return nil, err
	}
	l, err := s.partitions(ctx)
	if err != nil {
		return nil, err
	}
	init, err := s.initial(ctx, len(st) == 0, l.parts)
	if err != nil {
		return nil, err
	}
	reset, err := s.discontinuities(st, s.idsAt(start), l)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.latest = l.parts
	s.mu.Unlock()
	end := st.Clone()
	for _, tp := range reset {
		end.Set(tp, earliest)
	}
	var ranges []Range
	for _, r := range Plan(st, init, l.parts, s.capEnd) {
		// A partition set back to earliest is read from the next batch on,
		// whose start says so.
		if !slices.Contains(reset, r.TopicPartition) {
			ranges = append(ranges, r)
		}
	}
	ranges = Limit(ranges, s.sizes.maxMessages(limit))
	moved := len(reset) > 0
	for _, r := range ranges {
		if r.Until > r.From {
			end.Set(r.TopicPartition, r.Until)
			moved = true
		}
	}
	if !moved {
		return start, nil
	}
	out := source.EncodeOffset(end)
	s.setPosition(out, l.ids.Of(end))
	return out, nil
}

// Plan is the ranges from start (or init, or 0 for a partition new since)
// to each partition's end, capped by capEnd when it is set, in partition
// order.
func Plan(st, init Offsets, parts map[TopicPartition]listed, capEnd Offsets) []Range {
	var ranges []Range
	for tp, l := range parts {
		until := l.end
		if capEnd != nil {
			c, ok := capEnd.Get(tp)
			if !ok {
				continue
			}
			until = min(until, c)
		}
		f := from(st, init, tp, l)
		ranges = append(ranges, Range{TopicPartition: tp, From: f, Until: max(until, f)})
	}
	slices.SortFunc(ranges, func(a, b Range) int { return cluster.CompareTP(a.TopicPartition, b.TopicPartition) })
	return ranges
}

// dataLoss fails with the message when failOnDataLoss is on (the default),
// else warns and lets the caller skip.
func (s *Source) dataLoss(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if s.failOnDataLoss {
		return fmt.Errorf("%w: kafka source: %s; messages the query has not read are lost. "+
			"Set source.options.failOnDataLoss=false to skip them with a warning", source.ErrCannotContinue, msg)
	}
	s.warn("kafka source: %s; skipped, as failOnDataLoss is false", msg)
	return nil
}

// Read plans one part per partition range of (start, end], or per chunk
// of chunkOffsets of it. A range that can no longer be read as planned
// (its messages deleted, its log lost, its topic created again since) is
// data loss.
func (s *Source) Read(ctx context.Context, start, end source.Offset) ([]source.Part, error) {
	st, err := source.DecodeOffset[Offsets](start, "kafka source")
	if err != nil {
		return nil, err
	}
	en, err := source.DecodeOffset[Offsets](end, "kafka source")
	if err != nil {
		return nil, err
	}
	tps, err := en.Partitions()
	if err != nil {
		return nil, err
	}
	l, err := s.partitions(ctx)
	if err != nil {
		return nil, err
	}
	init, err := s.initial(ctx, false, l.parts)
	if err != nil {
		return nil, err
	}
	// The ids the batch's offsets were planned with: this run's plan, or
	// for a batch planned by an earlier run, those of its start.
	planned := s.idsAt(end)
	if planned == nil {
		planned = s.idsAt(start)
	}
	s.mu.Lock()
	tableSchema := s.table
	s.mu.Unlock()
	var out []source.Part
	var ranges []Range
	starts := map[TopicPartition]int64{}
	for _, tp := range tps {
		until, _ := en.Get(tp)
		if until == earliest {
			continue // set back by this batch; read by the next
		}
		p, ok := l.parts[tp]
		f := from(st, init, tp, p)
		if until <= f {
			continue
		}
		switch was, now := planned[tp.Topic], l.ids[tp.Topic]; {
		case !ok:
			if err := s.dataLoss("partition %s, to be read from offset %d to %d, is gone (topic deleted?)", tp, f, until); err != nil {
				return nil, err
			}
			continue
		case was != "" && now != "" && was != now:
			if err := s.dataLoss("topic %s was deleted and created again (its id was %s, now %s) after offsets %d to %d of partition %s were planned, which the new topic does not hold", tp.Topic, was, now, f, until-1, tp); err != nil {
				return nil, err
			}
			continue
		case until > p.end:
			if err := s.dataLoss("partition %s: offsets %d to %d were planned, but the partition now ends at offset %d: its log was lost (the topic deleted and created again, or a broker restarted with an empty log)", tp, f, until-1, p.end); err != nil {
				return nil, err
			}
			continue
		case p.start > f:
			if err := s.dataLoss("partition %s: offsets %d to %d were deleted (retention) before the query read them", tp, f, min(p.start, until)-1); err != nil {
				return nil, err
			}
			f = p.start
		}
		if s.notified != nil {
			ranges = append(ranges, Range{TopicPartition: tp, From: f, Until: until})
			starts[tp] = p.start
			continue
		}
		for c := f; c < until; c += chunkOffsets {
			out = append(out, &part{src: s, tableSchema: tableSchema, r: Range{TopicPartition: tp, From: c, Until: min(c+chunkOffsets, until)}})
		}
	}
	if s.notified != nil {
		if string(end) != s.notified.excludedEnd {
			s.notified.excluded, s.notified.excludedEnd = map[string]bool{}, ""
		}
		return s.announcedParts(ctx, ranges, starts)
	}
	return out, nil
}

// Commit commits end as the offsets of kafka.group.id, when set, for lag
// dashboards; floe never reads them back, so a failure is a warning.
func (s *Source) Commit(ctx context.Context, end source.Offset) error {
	if s.groupID == "" {
		return nil
	}
	en, err := source.DecodeOffset[Offsets](end, "kafka source")
	if err != nil {
		return err
	}
	tps, err := en.Partitions()
	if err != nil {
		return err
	}
	var os kadm.Offsets = kadm.Offsets{}
	for _, tp := range tps {
		n, _ := en.Get(tp)
		if n < 0 {
			continue // set back to earliest: nothing read yet
		}
		os.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: n, LeaderEpoch: -1})
	}
	resp, err := s.adm.CommitOffsets(ctx, s.groupID, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		s.warn("kafka source: commit offsets of group %s (for lag monitoring only): %v", s.groupID, err)
	}
	return nil
}
