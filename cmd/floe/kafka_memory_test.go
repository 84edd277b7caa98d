package main_test

import (
	"flag"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

var (
	kafkaBacklog      = flag.Int64("kafka-backlog", 0, "TestKafkaBacklogMemory: messages of 200 bytes in the backlog one available-now run drains at default settings (0 skips it)")
	kafkaBacklogBytes = flag.String("kafka-backlog-bytes", "", "TestKafkaBacklogMemory: maxBytesPerTrigger instead of the default (0: no limit)")
)

// One available-now run over a backlog of -kafka-backlog messages of 200
// bytes at default settings lands each once, and its peak RSS
// (/usr/bin/time) is logged: the default byte budget per batch
// (maxBytesPerTrigger) bounds it whatever the backlog.
func TestKafkaBacklogMemory(t *testing.T) {
	if *kafkaBacklog == 0 {
		t.Skip("set -kafka-backlog N to measure")
	}
	if _, err := exec.LookPath("/usr/bin/time"); err != nil {
		t.Skip("needs /usr/bin/time")
	}
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 8)
	topic := c.Name("events")
	pad := strings.Repeat("x", 200)
	for first := int64(0); first < *kafkaBacklog; first += 100_000 {
		n := min(100_000, *kafkaBacklog-first)
		recs := make([]*kgo.Record, n)
		for i := range recs {
			id := first + int64(i)
			v := fmt.Appendf(nil, `{"id":%d,"v":"`, id)
			v = append(append(v, pad[:200-len(v)-2]...), '"', '}')
			recs[i] = &kgo.Record{Topic: topic, Partition: int32(id % 8), Value: v}
		}
		c.Produce(t, recs...)
	}
	args := kafkaStream(e, c, "--maintenance=false")
	if *kafkaBacklogBytes != "" {
		args = append(args, "-o", "maxBytesPerTrigger="+*kafkaBacklogBytes)
	}
	r := e.RunEnv("/usr/bin/time", nil, append([]string{"-v", floeBin}, args...)...)
	if r.Code != 0 {
		t.Fatalf("the run failed: %s", r)
	}
	m := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("no peak RSS in:\n%s", r.Stderr)
	}
	kb, _ := strconv.ParseInt(m[1], 10, 64)
	batches := strings.Count(r.Stderr, "batch ")
	cpu := 0.0
	for _, k := range []string{"User", "System"} {
		if m := regexp.MustCompile(k + ` time \(seconds\): ([0-9.]+)`).FindStringSubmatch(r.Stderr); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			cpu += v
		}
	}
	wall := regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)`).FindStringSubmatch(r.Stderr)
	t.Logf("%d messages of 200 bytes: peak RSS %d MB, %d batches, %.2f CPU-s, wall %v", *kafkaBacklog, kb/1024, batches, cpu, wall[1:])
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, *kafkaBacklog); msg != "" {
		t.Fatal(msg)
	}
}
