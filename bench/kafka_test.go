package bench_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
)

// kafkaTopic is BenchmarkKafkaIngest's cluster and topic, produced once
// per process so that -count N measures N reads of the same messages.
var kafkaTopic sharedKafka

type sharedKafka struct {
	once sync.Once
	k    *bench.KafkaTopic
	err  error
}

// get starts the cluster and produces the topic the first time; the set-up
// is not measured.
func (s *sharedKafka) get(b *testing.B) *bench.KafkaTopic {
	b.Helper()
	s.once.Do(func() {
		spec, err := bench.KafkaSpecFromEnv()
		if err != nil {
			s.err = err
			return
		}
		t0 := time.Now()
		s.k, s.err = bench.StartKafka(context.Background(), spec)
		if s.err == nil {
			b.Logf("topic of %d messages (%d bytes of values) in %d partitions produced in %s",
				spec.Messages, s.k.Bytes, spec.Partitions, time.Since(t0).Round(time.Millisecond))
		}
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.k
}

func (s *sharedKafka) close() {
	if s.k != nil {
		s.k.Close()
	}
}

// BenchmarkKafkaIngest reads a topic of 1M JSON messages in 8 partitions
// (FLOE_BENCH_KAFKA_MESSAGES changes the count), held by an in-process
// kfake cluster, with floe into a new table, with a bare franz-go
// consumer that drops every record, the limit, and with a Go consumer that
// decodes the JSON into Arrow records with arrow-go's JSON reader. floe's
// table must hold every id exactly once. Each iteration runs every
// contender once, in an order rotated from one to the next, so that a slow
// phase of a shared machine does not fall on one contender's runs. Run it
// with -benchtime 1x and -count 3 (bench/run.sh, KAFKA=only). Each
// contender's measured run carries the pprof label contender=<name>.
func BenchmarkKafkaIngest(b *testing.B) {
	k := kafkaTopic.get(b)
	wall := map[string]time.Duration{}
	cpu := map[string]time.Duration{}
	var total time.Duration
	for range b.N {
		for _, c := range rotate(bench.KafkaContenders, kafkaRounds) {
			r := kafkaRun(b, k, c)
			report.AddKafka(k, r)
			wall[c.Name] += r.Wall
			cpu[c.Name] += r.CPU
			total += r.Wall
		}
		kafkaRounds++
	}
	for _, c := range bench.KafkaContenders {
		name := strings.ReplaceAll(c.Name, " ", "-")
		b.ReportMetric(cpu[c.Name].Seconds()/float64(b.N), name+"-cpu-s/op")
		b.ReportMetric(float64(k.Messages)*float64(b.N)/cpu[c.Name].Seconds(), name+"-msgs/cpu-s")
		b.ReportMetric(float64(k.Messages)*float64(b.N)/wall[c.Name].Seconds(), name+"-msgs/s")
	}
	// ns/op is the measured runs alone, without the set-up and checks.
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
}

// kafkaRounds rotates the contenders' order from one iteration to the
// next, across -count runs too.
var kafkaRounds int

// kafkaRun runs c once over k in a fresh directory, removed afterwards.
func kafkaRun(tb testing.TB, k *bench.KafkaTopic, c bench.KafkaContender) bench.KafkaResult {
	tb.Helper()
	work, err := os.MkdirTemp("", "floe-bench-kafka-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(work)
	r, err := c.Run(bench.WithContender(tb.Context(), c.Name), k, work)
	if err != nil {
		tb.Fatal(err)
	}
	if r.Messages != k.Messages || r.Bytes != k.Bytes {
		tb.Fatalf("%s: %d messages of %d bytes, want %d of %d", c.Name, r.Messages, r.Bytes, k.Messages, k.Bytes)
	}
	return r
}

// TestKafkaIngestContenders runs the Kafka benchmark's contenders over a
// topic of 5,000 messages: floe's table must hold every id once (checked
// inside bench.FloeKafka with iceberg-go's scan) and the consumers must
// count every message and byte (the arrow-go one every id, too).
func TestKafkaIngestContenders(t *testing.T) {
	t.Parallel()
	k, err := bench.StartKafka(t.Context(), bench.KafkaSpec{Messages: 5000, Partitions: 8, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if mean := k.Bytes / k.Messages; mean < 180 || mean > 220 {
		t.Errorf("messages of %d bytes on average, want about 200", mean)
	}
	var rep bench.Report
	for _, c := range bench.KafkaContenders {
		rep.AddKafka(k, kafkaRun(t, k, c))
	}
	var out strings.Builder
	rep.Write(&out)
	for _, ratio := range []string{"floe / franz-go consume", "floe / arrow-go consumer"} {
		if !strings.Contains(out.String(), ratio) {
			t.Errorf("the report has no ratio %s:\n%s", ratio, out.String())
		}
	}
	t.Log(out.String())
}
