package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/source"
)

var (
	_ cluster.Source   = (*Source)(nil)
	_ source.Resumable = (*Source)(nil)
)

// OwnPosition is false for a worker of a cluster (kafka.group.id under a
// processing-time trigger, which makes the engine join the group): the
// cluster's offsets are in the table's record, and the worker's checkpoint
// holds none.
func (s *Source) OwnPosition(trigger config.Trigger) bool {
	return s.groupID == "" || trigger.Kind != config.TriggerProcessingTime
}

// JoinCluster joins kafka.group.id as a worker of a cluster: the group's
// protocol gives it partitions, which it reads through the source as
// usual; the group's own fetching stays paused. ok is false when no group
// is named.
func (s *Source) JoinCluster(ctx context.Context) (cluster.Member, bool, error) {
	if s.groupID == "" {
		return nil, false, nil
	}
	if s.assign != nil {
		return nil, false, fmt.Errorf("%w: source.options.assign names the partitions to read, which a cluster (kafka.group.id with a processing-time trigger) leaves to the group; use subscribe or subscribePattern", source.ErrConfig)
	}
	m := &member{s: s, held: map[TopicPartition]bool{}}
	m.control = strings.TrimSpace(s.opts["controlTopic"])
	if m.control == "" {
		m.control = "floe-control-" + s.groupID
	}
	if err := m.ensureControl(ctx); err != nil {
		return nil, false, err
	}
	opts := append(s.kopts[:len(s.kopts):len(s.kopts)],
		kgo.ConsumerGroup(s.groupID),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(m.assigned),
		kgo.OnPartitionsRevoked(m.revoked),
		kgo.OnPartitionsLost(m.revoked),
		kgo.WithHooks(groupHook{m}))
	for _, g := range groupTimings {
		d := g.def
		if v := strings.TrimSpace(s.opts[g.key]); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return nil, false, fmt.Errorf("%w: source.options.%s %q is not a number of milliseconds", source.ErrConfig, g.key, v)
			}
			d = time.Duration(ms) * time.Millisecond
		}
		opts = append(opts, g.set(d))
	}
	if s.pattern != nil {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(s.pattern.String()))
	} else {
		opts = append(opts, kgo.ConsumeTopics(s.topics...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, false, fmt.Errorf("%w: kafka source: %v", source.ErrConfig, err)
	}
	m.cl = cl
	// Messages are read by range, as in a single process; the group only
	// assigns partitions. Polling in the background lets the group's
	// callbacks run.
	if s.pattern != nil {
		cl.PauseFetchTopics(s.pattern.String())
	} else {
		cl.PauseFetchTopics(s.topics...)
	}
	pollCtx, cancel := context.WithCancel(context.Background())
	m.stopPoll = cancel
	m.polled.Add(1)
	go func() {
		defer m.polled.Done()
		for pollCtx.Err() == nil {
			cl.PollFetches(pollCtx)
		}
	}()
	return m, true, nil
}

// groupTimings are a worker's timings in the group, with the defaults that
// apply when the options set none. A consumer's (45 s session, 3 s
// heartbeat, 60 s rebalance) would stop a cluster's commits for 46 to 48 s
// after its coordinator dies; these bring the next commit within about
// 7 s plus one interval (docs/kafka.md, "Failover").
var groupTimings = []struct {
	key string
	def time.Duration
	set func(time.Duration) kgo.GroupOpt
}{
	// The brokers' least by default (group.min.session.timeout.ms): how
	// long a dead worker holds its partitions, or the coordinator's role.
	{"kafka.session.timeout.ms", defaultSessionTimeout, kgo.SessionTimeout},
	// Members hear of a rebalance only in a heartbeat's answer, so a
	// hand-over waits for one: twelve to a session, at little cost.
	{"kafka.heartbeat.interval.ms", 500 * time.Millisecond, kgo.HeartbeatInterval},
	// A worker does nothing slow before it rejoins (its group callbacks
	// only note the partitions), and a member that died between joining
	// and syncing holds the whole group up to this long.
	{"kafka.max.poll.interval.ms", 10 * time.Second, kgo.RebalanceTimeout},
}

const defaultSessionTimeout = 6 * time.Second

// member is one worker's place in the group.
type member struct {
	s       *Source
	cl      *kgo.Client
	control string

	stopPoll context.CancelFunc
	polled   sync.WaitGroup
	// committing is set while a group commit (CommitGroup) is on its way.
	committing atomic.Bool
	commits    sync.WaitGroup

	mu   sync.Mutex
	held map[TopicPartition]bool
	gen  int32  // the generation that gave held
	id   string // this worker's member id in it
	// actingID and acting are id and gen as of the last Assignment: the
	// membership the worker's interval acts in.
	actingID string
	acting   int32
	// refused is why the group's coordinator last turned this worker
	// away, until a join succeeds again.
	refused error
}

// groupHook hears of the group's errors, which franz-go retries without
// end: a worker refused for good would otherwise run on with nothing.
type groupHook struct{ m *member }

var _ kgo.HookGroupManageError = groupHook{}

// OnGroupManageError runs on the group's goroutine, before it joins again
// and so before the assigned of a join that succeeds.
func (h groupHook) OnGroupManageError(err error) {
	h.m.mu.Lock()
	h.m.refused = err
	h.m.mu.Unlock()
}

// assigned runs on every join that succeeds, with the partitions new to
// this worker (none, too).
func (m *member) assigned(_ context.Context, cl *kgo.Client, parts map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refused = nil
	m.id, m.gen = cl.GroupMetadata()
	for t, ps := range parts {
		for _, p := range ps {
			m.held[TopicPartition{Topic: t, Partition: p}] = true
		}
	}
}

func (m *member) revoked(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, ps := range parts {
		for _, p := range ps {
			delete(m.held, TopicPartition{Topic: t, Partition: p})
		}
	}
}

func (m *member) Group() string { return m.s.groupID }

// Assignment is the partitions held, the group generation, and whether
// this worker coordinates: the one holding the first partition of all. A
// worker the group turned away since it last joined fails (refusal).
func (m *member) Assignment(ctx context.Context) (cluster.Assignment, error) {
	m.mu.Lock()
	if err := m.refused; err != nil {
		m.mu.Unlock()
		return cluster.Assignment{}, m.refusal(err)
	}
	gen := m.gen
	m.actingID, m.acting = m.id, gen
	held := make([]TopicPartition, 0, len(m.held))
	for tp := range m.held {
		held = append(held, tp)
	}
	m.mu.Unlock()
	slices.SortFunc(held, cluster.CompareTP)
	a := cluster.Assignment{Held: held, Generation: gen}
	if len(held) == 0 {
		return a, nil
	}
	l, err := m.s.partitions(ctx)
	if err != nil {
		return a, err
	}
	first := held[0]
	for tp := range l.parts {
		if cluster.CompareTP(tp, first) < 0 {
			return a, nil
		}
	}
	a.Coordinator = true
	return a, nil
}

// refusal is the error of a worker the group turned away with err: a
// configuration error, exit 2, where only a change of the options lets it
// join (the session timeout, a group whose other members assign by
// another protocol), else the error to retry, as for brokers out of reach.
func (m *member) refusal(err error) error {
	switch {
	case errors.Is(err, kerr.InvalidSessionTimeout):
		timeout := strings.TrimSpace(m.s.opts["kafka.session.timeout.ms"])
		if timeout == "" {
			timeout = fmt.Sprintf("%d (a cluster's default)", defaultSessionTimeout.Milliseconds())
		}
		return fmt.Errorf("%w: kafka source: consumer group %s refuses this worker (INVALID_SESSION_TIMEOUT): kafka.session.timeout.ms %s is outside the brokers' group.min.session.timeout.ms to group.max.session.timeout.ms (6000 to 1800000 unless set); set source.options.kafka.session.timeout.ms between them, for failover within seconds to their minimum",
			source.ErrConfig, m.s.groupID, timeout)
	case errors.Is(err, kerr.InconsistentGroupProtocol):
		return fmt.Errorf("%w: kafka source: consumer group %s refuses this worker (INCONSISTENT_GROUP_PROTOCOL): other consumers of the group assign partitions by another protocol than floe's workers (cooperative-sticky); set source.options.kafka.group.id to a group only this query's workers use",
			source.ErrConfig, m.s.groupID)
	}
	return fmt.Errorf("kafka source: consumer group %s: %w", m.s.groupID, err)
}

// Initial is where partitions the table has no offset of start: before
// the cluster's first commit, startingOffsets or startingTimestamp,
// resolved now; after it, their earliest offset, as partitions found
// later start in a single process (resolving latest then would skip what
// was written to them before the group gave them out).
func (m *member) Initial(ctx context.Context, tps []TopicPartition, started bool) (Offsets, error) {
	all, err := m.s.partitions(ctx)
	if err != nil {
		return nil, err
	}
	mine := map[TopicPartition]listed{}
	for _, tp := range tps {
		if l, ok := all.parts[tp]; ok {
			mine[tp] = l
		}
	}
	if started {
		init := Offsets{}
		for tp, l := range mine {
			init.Set(tp, l.start)
		}
		return init, nil
	}
	return m.s.resolveInitial(ctx, mine)
}

// Current tells whether this worker is a member of the group as the
// broker has it now, in the membership of its last Assignment: a worker
// stopped or cut off past the session timeout is not, nor is one that
// joined again (under a new member id) while its interval hung, which
// still acts on the partitions of a membership gone.
func (m *member) Current(ctx context.Context) (bool, error) {
	m.mu.Lock()
	id, gen := m.actingID, m.acting
	m.mu.Unlock()
	if nowID, nowGen := m.cl.GroupMetadata(); nowID != id || nowGen != gen {
		return false, nil
	}
	groups, err := m.s.adm.DescribeGroups(ctx, m.s.groupID)
	if err != nil {
		return false, fmt.Errorf("kafka source: describe group %s: %w", m.s.groupID, err)
	}
	g, ok := groups[m.s.groupID]
	if !ok || g.Err != nil {
		return false, fmt.Errorf("kafka source: describe group %s: %v", m.s.groupID, g.Err)
	}
	for _, mem := range g.Members {
		if mem.MemberID == id {
			return true, nil
		}
	}
	return false, nil
}

// Plan is the ranges from start, read from topics of the recorded ids, to
// the held partitions' ends now, bounded by limit.MaxRows
// (maxOffsetsPerTrigger) as in a single process. A partition whose log no
// longer goes on from start stops the worker (failOnDataLoss) or waits
// until the coordinator sets it back to its earliest offset.
func (m *member) Plan(ctx context.Context, start Offsets, ids cluster.TopicIDs, limit source.ReadLimit) ([]Range, error) {
	l, err := m.s.partitions(ctx)
	if err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	m.s.latest = l.parts
	m.s.mu.Unlock()
	found, err := cluster.FindDiscontinuities(start, ids, l.logs(), l.ids)
	if err != nil {
		return nil, err
	}
	if err := m.s.judge(found); err != nil {
		return nil, err
	}
	var ranges []Range
	tps, err := start.Partitions()
	if err != nil {
		return nil, err
	}
	for _, tp := range tps {
		p, ok := l.parts[tp]
		if !ok || slices.ContainsFunc(found, func(d cluster.Discontinuity) bool { return d.TopicPartition == tp }) {
			continue
		}
		from := from(start, nil, tp, p)
		if p.end <= from {
			continue
		}
		ranges = append(ranges, Range{TopicPartition: tp, From: from, Until: p.end})
	}
	return Limit(ranges, m.s.sizes.maxMessages(limit)), nil
}

// Discontinuities holds the table's ends, read from topics of ids, against
// the brokers now, for the coordinator (cluster.Discontinuities).
func (m *member) Discontinuities(ctx context.Context, ends Offsets, ids cluster.TopicIDs) ([]cluster.Discontinuity, cluster.TopicIDs, error) {
	l, err := m.s.partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	found, err := cluster.FindDiscontinuities(ends, ids, l.logs(), l.ids)
	if err != nil {
		return nil, nil, err
	}
	if err := m.s.judge(found); err != nil {
		return nil, nil, err
	}
	return found, l.ids, nil
}

// ensureControl creates the control topic, one partition so that events
// have one order, or checks the one there.
func (m *member) ensureControl(ctx context.Context) error {
	details, err := m.s.adm.ListTopics(ctx, m.control)
	if err != nil {
		return fmt.Errorf("kafka source: look up control topic %s (check kafka.bootstrap.servers): %w", m.control, err)
	}
	if d, ok := details[m.control]; ok && d.Err == nil {
		if n := len(d.Partitions); n != 1 {
			return fmt.Errorf("%w: control topic %s has %d partitions; a cluster's events need one order: create it with one partition, or name another with source.options.controlTopic", source.ErrConfig, m.control, n)
		}
		return nil
	}
	resp, err := m.s.adm.CreateTopic(ctx, 1, -1, nil, m.control)
	if err == nil {
		err = resp.Err
	}
	if errors.Is(err, kerr.TopicAlreadyExists) {
		// Another worker starting at the same time created it, as here.
		return nil
	}
	if err != nil {
		return fmt.Errorf("kafka source: create control topic %s (or create it with one partition yourself): %w", m.control, err)
	}
	return nil
}

// Publish appends an event to the control topic.
func (m *member) Publish(ctx context.Context, value []byte) error {
	if err := m.s.cl.ProduceSync(ctx, &kgo.Record{Topic: m.control, Partition: 0, Value: value}).FirstErr(); err != nil {
		return fmt.Errorf("kafka source: publish to control topic %s: %w", m.control, err)
	}
	return nil
}

// ReadControl reads the control topic from offset from to its end now.
func (m *member) ReadControl(ctx context.Context, from int64) ([]cluster.ControlRecord, int64, error) {
	ends, err := m.s.adm.ListEndOffsets(ctx, m.control)
	if err != nil {
		return nil, from, fmt.Errorf("kafka source: list control topic %s: %w", m.control, err)
	}
	end, ok := ends.Lookup(m.control, 0)
	if !ok || end.Err != nil {
		return nil, from, fmt.Errorf("kafka source: control topic %s has no partition 0: %v", m.control, end.Err)
	}
	starts, err := m.s.adm.ListStartOffsets(ctx, m.control)
	if err != nil {
		return nil, from, fmt.Errorf("kafka source: list control topic %s: %w", m.control, err)
	}
	st, ok := starts.Lookup(m.control, 0)
	if end.Offset < from && ok && st.Err == nil {
		// The topic was created again: its events are all new to the
		// table's record (old ones are dropped as stale or foreign).
		m.s.warn("kafka source: control topic %s ends at offset %d, before offset %d the table's record has read up to: it was created again; reading it from its start", m.control, end.Offset, from)
		from = st.Offset
	}
	if end.Offset <= from {
		return nil, from, nil
	}
	if ok && st.Err == nil && st.Offset > from {
		m.s.warn("kafka source: control topic %s no longer holds offsets %d to %d (retention): their events cannot be committed, and their workers read those ranges again", m.control, from, st.Offset-1)
		from = st.Offset
	}
	p := &part{src: m.s, r: Range{TopicPartition: TopicPartition{Topic: m.control}, From: from, Until: end.Offset}}
	if err := p.fetch(ctx); err != nil {
		return nil, from, err
	}
	out := make([]cluster.ControlRecord, len(p.records))
	for i, r := range p.records {
		out[i] = cluster.ControlRecord{Offset: r.Offset, Value: r.Value}
	}
	return out, end.Offset, nil
}

// CommitGroup commits the table's offsets of the held partitions for the
// group, for lag dashboards only.
func (m *member) CommitGroup(ctx context.Context, ends Offsets) {
	m.mu.Lock()
	commit := map[string]map[int32]kgo.EpochOffset{}
	for tp := range m.held {
		if n, ok := ends.Get(tp); ok && n >= 0 {
			if commit[tp.Topic] == nil {
				commit[tp.Topic] = map[int32]kgo.EpochOffset{}
			}
			commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: n}
		}
	}
	m.mu.Unlock()
	if len(commit) == 0 {
		return
	}
	// In the background: CommitOffsets waits out a rebalance before it
	// sends, which must not hold up the interval (the coordinator's
	// commits); one still waiting makes the next interval's unneeded.
	if !m.committing.CompareAndSwap(false, true) {
		return
	}
	m.commits.Add(1)
	go func() {
		defer m.commits.Done()
		defer m.committing.Store(false)
		m.cl.CommitOffsets(context.WithoutCancel(ctx), commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				m.s.warn("kafka source: commit offsets of group %s (for lag monitoring only): %v", m.s.groupID, err)
			}
		})
	}()
}

// Close leaves the group.
func (m *member) Close() error {
	m.stopPoll()
	m.polled.Wait()
	// Closing the client ends a group commit still waiting.
	m.cl.Close()
	m.commits.Wait()
	return nil
}
