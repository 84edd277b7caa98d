package main_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// The Kafka part of the fault harness: topics deleted and created again,
// messages deleted by retention, a broker restarted without its log. Each
// round injects the fault, checks that the default run (failOnDataLoss)
// exits 1 naming the partitions and offsets, then that a run with
// failOnDataLoss=false lands every message it promises exactly once, as
// iceberg-go's scan reads the table.

// kafkaModel is what a scenario's topic holds and what the table must:
// per partition the ids of the messages by offset, how far the table has
// read, and the ids the table must hold once each.
type kafkaModel struct {
	t       *testing.T
	e       *env
	k       *kafkatest.Cluster
	topic   string // events, as the cluster names it
	rng     *rand.Rand
	logs    [][]int64 // per partition, the ids by offset
	start   []int64   // per partition, the first offset retention left
	read    []int64   // per partition, the offset the table has read up to
	next    int64     // the next id to produce
	want    map[int64]bool
	checked int64 // rows read back by the checks
}

func newKafkaModel(t *testing.T, e *env, k *kafkatest.Cluster, partitions int, seed uint64) *kafkaModel {
	m := &kafkaModel{t: t, e: e, k: k, topic: k.Name("events"), rng: rand.New(rand.NewPCG(seed, 30)), want: map[int64]bool{}}
	m.reset(partitions)
	return m
}

// reset is the topic's logs started again, empty: everything the table
// had not read of them is lost.
func (m *kafkaModel) reset(partitions int) {
	m.logs, m.start, m.read = make([][]int64, partitions), make([]int64, partitions), make([]int64, partitions)
}

// produce writes n messages {"id":N} to random partitions.
func (m *kafkaModel) produce(n int) {
	m.t.Helper()
	to := make([]int, n)
	for i := range to {
		to[i] = m.rng.IntN(len(m.logs))
	}
	m.produceTo(to)
}

// produceTo writes a message {"id":N} to each partition of to, in order.
func (m *kafkaModel) produceTo(to []int) {
	m.t.Helper()
	if len(to) == 0 {
		return
	}
	recs := make([]*kgo.Record, len(to))
	for i, p := range to {
		recs[i] = &kgo.Record{Topic: m.topic, Partition: int32(p), Value: fmt.Appendf(nil, `{"id":%d,"v":"m%d"}`, m.next, m.next)}
		m.logs[p] = append(m.logs[p], m.next)
		m.next++
	}
	m.k.Produce(m.t, recs...)
}

// end is the next offset of partition p.
func (m *kafkaModel) end(p int) int64 { return int64(len(m.logs[p])) }

// landed records that the table read every partition up to to[p]
// (its end when to is nil), from where it had read or retention left.
func (m *kafkaModel) landed(to []int64) {
	for p := range m.logs {
		until := m.end(p)
		if to != nil {
			until = to[p]
		}
		for o := max(m.read[p], m.start[p]); o < until; o++ {
			m.want[m.logs[p][o]] = true
		}
		m.read[p] = max(m.read[p], until)
	}
}

// stream runs the scenario's stream of events into db.events.
func (m *kafkaModel) stream(extra ...string) fixture.Result {
	m.t.Helper()
	return m.e.Run(kafkaStream(m.e, m.k, extra...)...)
}

// ok runs the stream and fails the test unless it exits 0.
func (m *kafkaModel) ok(extra ...string) {
	m.t.Helper()
	if r := m.stream(extra...); r.Code != 0 {
		m.t.Fatalf("stream %v: exit %d\n%s", extra, r.Code, r.Stderr)
	}
}

// refused runs the stream with failOnDataLoss on (the default) and fails
// the test unless it exits 1 naming each of want and the option.
func (m *kafkaModel) refused(want ...string) {
	m.t.Helper()
	r := m.stream()
	if r.Code != 1 || !strings.Contains(r.Stderr, "source cannot continue: kafka source:") || !strings.Contains(r.Stderr, "failOnDataLoss=false") {
		m.t.Fatalf("want exit 1 naming the data loss and failOnDataLoss=false, got exit %d\n%s", r.Code, r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			m.t.Fatalf("the refusal does not name %q:\n%s", w, r.Stderr)
		}
	}
}

// check reads the table with iceberg-go's scan and counts the ids it must
// hold and does not (lost) and the rows beyond one of each (duplicated,
// or never promised); it fails the test on either.
func (m *kafkaModel) check() (lost, duplicated int) {
	m.t.Helper()
	ids := m.e.TableIDs("db.events")
	for id, n := range ids {
		m.checked += int64(n)
		switch {
		case !m.want[id]:
			duplicated += n
		case n > 1:
			duplicated += n - 1
		}
	}
	for id := range m.want {
		if ids[id] == 0 {
			lost++
		}
	}
	if lost > 0 || duplicated > 0 {
		m.t.Fatalf("%d ids lost, %d rows duplicated or never promised (%d rows, %d promised)", lost, duplicated, len(ids), len(m.want))
	}
	return lost, duplicated
}

// named is what a refusal says of partition p read up to its offset.
func (m *kafkaModel) named(p int) string {
	return fmt.Sprintf("%s/%d", m.topic, p)
}

// readUpTo is the words of a refusal for partition p's recorded offset.
func (m *kafkaModel) readUpTo(p int) string {
	return fmt.Sprintf("read up to offset %d", m.read[p])
}

// Topics deleted and created again, each round with fewer messages than
// the query had read (and a random number of partitions) and with more.
func TestFaultKafkaTopicRecreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.Start(t, "events", 2)
	m := newKafkaModel(t, e, k, 2, 1)
	faults := 0
	for round := range *faultRounds {
		for _, more := range []bool{false, true} {
			m.produce(400 + m.rng.IntN(800))
			m.ok()
			m.landed(nil)
			// Messages the query never read are lost with the topic.
			m.produce(m.rng.IntN(100))
			var want []string
			least := m.read[0]
			for p := range m.logs {
				want = append(want, m.named(p), m.readUpTo(p))
				least = min(least, m.read[p])
			}
			partitions := 1 + m.rng.IntN(3)
			k.DeleteTopic(t, m.topic)
			k.CreateTopic(t, m.topic, partitions)
			m.reset(partitions)
			faults++
			n := partitions * int(least) / 2
			if more {
				n = partitions * int(least+1+m.rng.Int64N(least+1))
			}
			m.produce(n)
			m.refused(append(want, "topic "+m.topic+" was deleted and created again")...)
			m.ok("-o", "failOnDataLoss=false")
			m.landed(nil)
			m.check()
		}
		// The default run goes on from the new topic's offsets.
		m.produce(m.rng.IntN(300))
		m.ok()
		m.landed(nil)
		m.check()
		t.Logf("round %d: %d messages, %d in the table", round+1, m.next, len(m.want))
	}
	t.Logf("faults: topic-recreated=%d rows checked=%d lost=0 duplicated=0", faults, m.checked)
}

// Messages deleted by retention (DeleteRecords) before the query read
// them: the default run exits 1 naming the partition and the offsets
// deleted; with failOnDataLoss=false every message still there lands once.
func TestFaultKafkaTrim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.Start(t, "events", 3)
	m := newKafkaModel(t, e, k, 3, 2)
	faults := 0
	for round := range *faultRounds {
		m.produce(600 + m.rng.IntN(900))
		// Read a random part of each partition's new messages.
		to := make([]int64, len(m.logs))
		ending := map[string]map[string]int64{m.topic: {}}
		for p := range m.logs {
			// The last partition keeps some unread, for retention to take.
			to[p] = m.read[p] + m.rng.Int64N(m.end(p)-m.read[p])
			ending[m.topic][fmt.Sprint(p)] = to[p]
		}
		spec, _ := json.Marshal(ending)
		m.ok("-o", "endingOffsets="+string(spec))
		m.landed(to)
		// Retention deletes from one or more partitions part of what the
		// query has not read; the first such partition is named.
		var want []string
		for p := range m.logs {
			if m.rng.IntN(3) == 0 && p != len(m.logs)-1 {
				continue
			}
			before := m.read[p] + 1 + m.rng.Int64N(m.end(p)-m.read[p])
			k.Trim(t, m.topic, int32(p), before)
			m.start[p] = before
			faults++
			if want == nil {
				want = []string{fmt.Sprintf("partition %s: offsets %d to %d were deleted (retention)", m.named(p), m.read[p], before-1)}
			}
		}
		if want != nil {
			m.refused(want...)
		}
		m.ok("-o", "failOnDataLoss=false")
		m.landed(nil)
		m.check()
		t.Logf("round %d: %d messages, %d in the table", round+1, m.next, len(m.want))
	}
	t.Logf("faults: trim=%d rows checked=%d lost=0 duplicated=0", faults, m.checked)
}

// A broker restarted with an empty log: with new topic ids (its metadata
// lost too) and with the same (its controller kept the topics), each
// round; the new logs hold fewer messages than the query read, as they do
// after a restart, so that the same ids leave the offsets to tell.
func TestFaultKafkaBrokerRestarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := kafkatest.StartOnDisk(t, "events", 2)
	m := newKafkaModel(t, e, k, 2, 3)
	faults := map[string]int{}
	for round := range *faultRounds {
		for _, kind := range []string{"restarted-empty", "restarted-losing-logs"} {
			m.produce(600 + m.rng.IntN(900))
			m.ok()
			m.landed(nil)
			m.produce(m.rng.IntN(100))
			var want []string
			least := m.read[0]
			for p := range m.logs {
				want = append(want, m.named(p), m.readUpTo(p))
				least = min(least, m.read[p])
			}
			if kind == "restarted-empty" {
				k.RestartEmpty(t)
			} else {
				k.RestartLosingLogs(t)
			}
			m.reset(len(m.logs))
			faults[kind]++
			// Fewer messages in each partition than the query had read.
			var to []int
			for p := range m.logs {
				for range m.rng.Int64N(least) {
					to = append(to, p)
				}
			}
			m.rng.Shuffle(len(to), func(i, j int) { to[i], to[j] = to[j], to[i] })
			m.produceTo(to)
			m.refused(want...)
			m.ok("-o", "failOnDataLoss=false")
			m.landed(nil)
			m.check()
		}
		t.Logf("round %d: %d messages, %d in the table", round+1, m.next, len(m.want))
	}
	t.Logf("faults: broker-restarted-empty=%d broker-restarted-losing-logs=%d rows checked=%d lost=0 duplicated=0",
		faults["restarted-empty"], faults["restarted-losing-logs"], m.checked)
}
