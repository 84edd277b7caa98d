package main_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// produceIDs writes n JSON messages {"id":first+i,"v":"..."} round-robin
// over the topic's partitions.
func produceIDs(t *testing.T, c *kafkatest.Cluster, topic string, partitions int32, first, n int64) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		id := first + int64(i)
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(id % int64(partitions)), Value: fmt.Appendf(nil, `{"id":%d,"v":"m%d"}`, id, id)}
	}
	c.Produce(t, recs...)
}

// kafkaStream streams the cluster's topic events into db.events.
func kafkaStream(e *env, c *kafkatest.Cluster, extra ...string) []string {
	return append([]string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + c.Name("events"),
		"--format", "json", "--table", "db.events", "--checkpoint", e.Ckpt, "--trigger", "available-now"}, extra...)
}

// A topic of 100,000 JSON messages in 8 partitions lands in the table
// exactly once, read back by iceberg-go's scan; a second run commits
// nothing.
func TestKafkaJSONExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 8)
	produceIDs(t, c, c.Name("events"), 8, 0, 100_000)
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100_000); msg != "" {
		t.Fatalf("after the first run: %s", msg)
	}
	snaps := len(e.Snapshots("db.events"))
	e.OK(kafkaStream(e, c)...)
	if got := len(e.Snapshots("db.events")); got != snaps {
		t.Fatalf("a second run with no new messages made %d snapshots, want %d", got, snaps)
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100_000); msg != "" {
		t.Fatalf("after the second run: %s", msg)
	}
}

// A Kafka run's summary tells what it read in Kafka's terms: messages
// and partitions, not input files, with the consumer lag each batch left
// and the rate.
func TestKafkaSummarySpeaksKafka(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	produceIDs(t, c, c.Name("events"), 4, 0, 100)
	r := e.OK(kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=40", "--progress", "summary")...)
	for _, want := range []string{
		`(?m)^batch 0: 40 messages from 4 partitions, 40 rows, \d+ data files? written, snapshot \d+, \d+ ms, \d+ rows/s, lag 60 messages$`,
		`(?m)^batch 2: 20 messages from 4 partitions, 20 rows, \d+ data files? written, snapshot \d+, \d+ ms, \d+ rows/s, lag 0 messages$`,
		`(?m)^floe: 3 batches, 100 messages read, 100 rows, 3 snapshots committed to db\.events in [0-9.]+m?s, \d+ rows/s$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.Stderr) {
			t.Errorf("want %s in\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "input file") {
		t.Errorf("a Kafka run's summary speaks of input files:\n%s", r.Stderr)
	}
}

// A lost checkpoint: a restart resumes from the table's record of the
// last batch's offsets, with no duplicate and no gap; so does a run after
// floe checkpoint rebuild.
func TestKafkaLostCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	topic := c.Name("events")
	produceIDs(t, c, topic, 4, 0, 1000)
	e.OK(kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=300")...)
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, c, topic, 4, 1000, 1000)
	// A plain restart resumes from the table's offsets.
	r := e.OK(kafkaStream(e, c)...)
	if !strings.Contains(r.Stderr, "was missing; query") || !strings.Contains(r.Stderr, "resumes from table db.events") {
		t.Fatalf("the restart does not say it resumed from the table:\n%s", r.Stderr)
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000); msg != "" {
		t.Fatalf("after the restart without a checkpoint: %s", msg)
	}
	// floe checkpoint rebuild does the same explicitly.
	if err := os.RemoveAll(e.Ckpt); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, c, topic, 4, 2000, 1000)
	if r := e.Run(append([]string{"checkpoint", "rebuild"}, kafkaStream(e, c)[1:]...)...); r.Code != 0 {
		t.Fatalf("checkpoint rebuild: exit %d\n%s", r.Code, r.Stderr)
	}
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 3000); msg != "" {
		t.Fatalf("after the rebuilt checkpoint's run: %s", msg)
	}
}

// The same with the topic produced by kcat, a Kafka client that shares no
// code with floe: 100,000 JSON messages over 8 partitions land exactly
// once; a second run commits nothing.
func TestKafkaKcatProduced(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (Debian package kcat; .ci/run installs it)")
	}
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 8)
	var lines strings.Builder
	for id := range 100_000 {
		fmt.Fprintf(&lines, "{\"id\":%d,\"v\":\"m%d\"}\n", id, id)
	}
	cmd := exec.Command(kcat, "-b", c.Addr(), "-t", c.Name("events"), "-P", "-X", "linger.ms=20")
	cmd.Stdin = strings.NewReader(lines.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100_000); msg != "" {
		t.Fatalf("after the first run: %s", msg)
	}
	snaps := len(e.Snapshots("db.events"))
	e.OK(kafkaStream(e, c)...)
	if got := len(e.Snapshots("db.events")); got != snaps {
		t.Fatalf("a second run with no new messages made %d snapshots, want %d", got, snaps)
	}
}

// A topic of Debezium change events merged by key in mode upsert: the
// events of one key apply in LSN order, tombstones (null values) are
// skipped.
func TestKafkaDebeziumUpsert(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "cdc", 2)
	topic := c.Name("cdc")
	ev := func(p int32, s string) *kgo.Record {
		if s == "" {
			return &kgo.Record{Topic: topic, Partition: p, Key: []byte("k")}
		}
		return &kgo.Record{Topic: topic, Partition: p, Value: []byte(s)}
	}
	c.Produce(t,
		ev(0, pgEvent("r", 1, "ann", 1, false)),
		ev(1, pgEvent("r", 2, "bob", 2, false)),
		ev(0, pgEvent("u", 1, "ann-2", 4, false)),
		ev(1, pgEvent("d", 2, "", 5, true)),
		ev(1, ""),
		ev(0, pgEvent("c", 3, "cid", 6, false)),
	)
	args := []string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + topic,
		"--format", "debezium-json", "--table", "db.c", "--checkpoint", e.Ckpt, "--mode", "upsert", "--identifier-fields", "id"}
	e.OK(args...)
	if got, want := dbzRows(t, e, "db.c", "id", "name"), []string{"1|ann-2", "3|cid"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	c.Produce(t, ev(0, pgEvent("u", 3, "cid-2", 7, false)), ev(1, pgEvent("d", 1, "", 8, true)))
	e.OK(args...)
	if got, want := dbzRows(t, e, "db.c", "id", "name"), []string{"3|cid-2"}; !slices.Equal(got, want) {
		t.Fatalf("after the second run: %v, want %v", got, want)
	}
}

// Offsets deleted by retention before the query read them stop the query
// naming them (failOnDataLoss, on by default); with failOnDataLoss=false
// they are skipped with a warning and the rest is read once.
func TestKafkaFailOnDataLoss(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 1)
		topic := c.Name("events")
		produceIDs(t, c, topic, 1, 0, 100)
		e.OK(kafkaStream(e, c, "-o", fmt.Sprintf(`endingOffsets={%q:{"0":40}}`, topic))...)
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, 40); msg != "" {
			t.Fatalf("after the first run: %s", msg)
		}
		c.Trim(t, topic, 0, 80)
		r := e.Run(kafkaStream(e, c)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "partition "+topic+"/0: offsets 40 to 79 were deleted") || !strings.Contains(r.Stderr, "failOnDataLoss=false") {
			t.Fatalf("want the deleted offsets refused, naming the partition, the offsets and the option, got %s", r)
		}
		r = e.OK(kafkaStream(e, c, "-o", "failOnDataLoss=false")...)
		if !strings.Contains(r.Stderr, "warning") {
			t.Fatalf("want a warning about the skipped offsets:\n%s", r.Stderr)
		}
		ids := e.TableIDs("db.events")
		for id := int64(0); id < 100; id++ {
			want := 0
			if id < 40 || id >= 80 {
				want = 1
			}
			if ids[id] != want {
				t.Fatalf("id %d occurs %d times; want ids 0-39 and 80-99 once each", id, ids[id])
			}
		}
		if len(ids) != 60 {
			t.Fatalf("%d distinct ids, want 60", len(ids))
		}
	})
}

// Exactly once under kill -9: a processing-time stream of a topic that a
// producer keeps writing is killed at random at least 20 times; a last
// run drains the topic, and every message is in the table once.
func TestKafkaKilledExactlyOnce(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 4)
		topic := c.Name("events")
		// The later --trigger wins over kafkaStream's available-now.
		args := kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=500", "--trigger", "100ms")
		produced, kills := killWhileFeeding(t, e, rand.New(rand.NewPCG(9, 9)), func(first, n int64) { produceIDs(t, c, topic, 4, first, n) }, args...)
		// The killed runs committed batches, none twice.
		partial := e.TableIDs("db.events")
		if len(partial) == 0 {
			t.Fatal("no batch was committed between the kills")
		}
		for id, n := range partial {
			if n > 1 {
				t.Fatalf("id %d is in the table %d times after the kills", id, n)
			}
		}
		e.OK(kafkaStream(e, c)...)
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, produced); msg != "" {
			t.Fatalf("after %d kills and %d messages: %s", kills, produced, msg)
		}
	})
}

// Progress records say how far each batch is behind the partitions'
// ends: Spark's offsetsBehindLatest metrics and the latest offsets.
func TestKafkaProgressLag(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 2)
		topic := c.Name("events")
		produced := time.Now()
		produceIDs(t, c, topic, 2, 0, 1000)
		r := e.OK(kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=400", "--progress", "json")...)
		var lags []string
		for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
			var p struct {
				Sources []struct {
					LatestOffset map[string]map[string]int64 `json:"latestOffset"`
					Metrics      map[string]string           `json:"metrics"`
				} `json:"sources"`
			}
			if json.Unmarshal([]byte(line), &p) != nil || len(p.Sources) == 0 || p.Sources[0].Metrics == nil {
				continue
			}
			if got := p.Sources[0].LatestOffset[topic]; got["0"] != 500 || got["1"] != 500 {
				t.Fatalf("latestOffset %v, want 500 in each partition", got)
			}
			lags = append(lags, p.Sources[0].Metrics["maxOffsetsBehindLatest"]+"/"+p.Sources[0].Metrics["offsetsBehindLatest"])
			// The messages were produced before the run: each batch's newest
			// waited at least from then to its commit.
			if ms, err := strconv.ParseInt(p.Sources[0].Metrics["commitLagMs"], 10, 64); err != nil || ms < 0 || ms > time.Since(produced).Milliseconds() {
				t.Fatalf("commitLagMs %q: want the time from the batch's newest message to its commit, at most %v", p.Sources[0].Metrics["commitLagMs"], time.Since(produced))
			}
		}
		var want []string
		for _, behind := range []int{300, 100, 0} {
			want = append(want, fmt.Sprintf(`%d/{%q:{"0":%d,"1":%d}}`, behind, topic, behind, behind))
		}
		if !slices.Equal(lags, want) {
			t.Fatalf("lag by batch %v, want %v", lags, want)
		}
	})
}

// /metrics reports each partition's lag as of the newest batch: 300
// behind in each partition after the first batch of 400 of 1,000 messages,
// 0 once all are in.
func TestKafkaLagMetric(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 2)
		topic := c.Name("events")
		produceIDs(t, c, topic, 2, 0, 1000)
		// Two seconds between batches leave time to scrape after the first.
		stream, base := e.metricsStream(kafkaStream(e, c, "-o", "maxOffsetsPerTrigger=400", "--trigger", "2s", "--maintenance=false")...)
		defer stream.Process.Kill()
		rows := `floe_output_rows_total{table="db.events"}`
		lag := func(p string) string { return `floe_kafka_lag_offsets{partition="` + p + `",topic="` + topic + `"}` }
		fixture.WaitFor(t, 30*time.Second, "the first batch", func() bool { v, _ := scrape(t, base, rows); return v > 0 })
		if v, _ := scrape(t, base, rows); v != 400 {
			t.Fatalf("after the first batch %v rows, want 400", v)
		}
		for _, p := range []string{"0", "1"} {
			if v, ok := scrape(t, base, lag(p)); !ok || v != 300 {
				t.Fatalf("partition %s lag after the first batch: %v (present %v), want 300", p, v, ok)
			}
		}
		fixture.WaitFor(t, 30*time.Second, "every message", func() bool { v, _ := scrape(t, base, rows); return v == 1000 })
		for _, p := range []string{"0", "1"} {
			if v, _ := scrape(t, base, lag(p)); v != 0 {
				t.Fatalf("partition %s lag after every message: %v, want 0", p, v)
			}
		}
		if d := fixture.Exact(e.TableIDs("db.events"), 0, 1000); d != "" {
			t.Fatal(d)
		}
	})
}

// groupLag is the lag of group on each partition of topic ("topic/p"), as
// the brokers' group coordinator has the group's committed offsets: what
// kafka-consumer-groups.sh --describe and lag dashboards show; -1 for a
// partition the group has committed nothing of.
func groupLag(t *testing.T, c *kafkatest.Cluster, group, topic string) map[string]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lags, err := kadm.NewClient(cl).Lag(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	l := lags[group]
	if err := l.Error(); err != nil {
		t.Fatalf("lag of group %s: %v", group, err)
	}
	out := map[string]int64{}
	for _, p := range l.Lag[topic] {
		out[fmt.Sprintf("%s/%d", topic, p.Partition)] = p.Lag
		if p.Commit.At < 0 {
			out[fmt.Sprintf("%s/%d", topic, p.Partition)] = -1
		}
	}
	return out
}

// The group's committed offsets follow the table, for lag dashboards: as
// the brokers' group coordinator reports them, a single process with
// kafka.group.id leaves lag 0 on every partition after each run, and the
// messages produced since as lag; so does a cluster of two workers once
// every message is in the table.
func TestKafkaGroupLag(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		t.Run("single process", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := b.Start(t, "events", 2)
			topic, group := c.Name("events"), c.Name("dashboard")
			produceIDs(t, c, topic, 2, 0, 1000)
			args := kafkaStream(e, c, "-o", "kafka.group.id="+group, "-o", "maxOffsetsPerTrigger=400")
			e.OK(args...)
			zero := map[string]int64{topic + "/0": 0, topic + "/1": 0}
			if got := groupLag(t, c, group, topic); !maps.Equal(got, zero) {
				t.Fatalf("lag after the run %v, want %v", got, zero)
			}
			produceIDs(t, c, topic, 2, 1000, 100)
			if got, want := groupLag(t, c, group, topic), map[string]int64{topic + "/0": 50, topic + "/1": 50}; !maps.Equal(got, want) {
				t.Fatalf("lag after 100 more messages %v, want %v", got, want)
			}
			e.OK(args...)
			if got := groupLag(t, c, group, topic); !maps.Equal(got, zero) {
				t.Fatalf("lag after the next run %v, want %v", got, zero)
			}
			if msg := fixture.Exact(e.TableIDs("db.events"), 0, 1100); msg != "" {
				t.Fatal(msg)
			}
		})
		t.Run("cluster", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := b.Start(t, "events", 4)
			topic := c.Name("events")
			produceIDs(t, c, topic, 4, 0, 2000)
			workers := []*clusterWorker{startClusterWorker(e, c, "a"), startClusterWorker(e, c, "b")}
			fixture.WaitFor(t, 60*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= 2000 })
			zero := map[string]int64{}
			for p := range 4 {
				zero[fmt.Sprintf("%s/%d", topic, p)] = 0
			}
			var got map[string]int64
			fixture.WaitFor(t, 60*time.Second, "the group's lag at 0", func() bool {
				got = groupLag(t, c, c.Name("landers"), topic)
				return maps.Equal(got, zero)
			})
			stopWorkers(t, workers...)
			if msg := fixture.Exact(e.TableIDs("db.events"), 0, 2000); msg != "" {
				t.Fatal(msg)
			}
		})
	})
}

// An available-now run drains a backlog in batches of at most
// maxBytesPerTrigger, each message once.
func TestKafkaBatchBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 2)
	produceIDs(t, c, c.Name("events"), 2, 0, 3000)
	r := e.OK(kafkaStream(e, c, "-o", "maxBytesPerTrigger=100000", "--progress", "json")...)
	batches := strings.Count(r.Stderr, `"batchId"`)
	if batches < 5 {
		t.Fatalf("%d batches for 3,000 messages of about 25 bytes under a 100,000-byte budget (537 bytes a message with overhead), want many:\n%s", batches, r.Stderr)
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 3000); msg != "" {
		t.Fatalf("after %d batches: %s", batches, msg)
	}
}
