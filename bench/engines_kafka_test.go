package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// BenchmarkSparkKafka reads one topic of the Kafka benchmark's JSON
// messages (FLOE_BENCH_KAFKA_MESSAGES, default 1M, 8 partitions) on an
// Apache Kafka broker into a table three ways, each a process measured
// whole: floe's binary and Spark's Kafka source (availableNow), and Kafka
// Connect's Iceberg sink (a standalone worker, 2 tasks, committing every
// 10 s through floe serve), measured from its start until every message is
// in the table. Spark reads every table after: each message once. Then
// the sink's crash: its worker killed after its first commit and started
// again, and Spark counts the rows once it has caught up.
func BenchmarkSparkKafka(b *testing.B) {
	spark, err := bench.NewSparkEngine()
	if err != nil {
		b.Skip(err)
	}
	spec, err := bench.KafkaSpecFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	cluster := kafkatest.Apache.StartOnDisk(b, "events", spec.Partitions)
	ctx := context.Background()
	if _, err := bench.ProduceKafka(ctx, []string{cluster.Addr()}, "events", spec); err != nil {
		b.Fatal(err)
	}
	bin, err := fixture.BuildFloe(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	floe := bench.FloeProcess{Bin: bin}
	input := fmt.Sprintf("kafka: %d JSON messages, %d partitions", spec.Messages, spec.Partitions)
	for i := range b.N {
		work := b.TempDir()
		order := []string{"floe", "spark", "connect"}
		if (kafkaEngineRounds+i)%2 == 1 {
			order = []string{"connect", "spark", "floe"}
		}
		if only := os.Getenv("FLOE_BENCH_ENGINES"); only != "" {
			order = slices.DeleteFunc(order, func(n string) bool { return !slices.Contains(strings.Split(only, ","), n) })
		}
		for _, n := range order {
			dir := filepath.Join(work, n)
			var c bench.ProcCost
			var err error
			switch n {
			case "floe":
				c, err = floe.Kafka(ctx, cluster.Addr(), "events", dir)
			case "spark":
				c, err = spark.Kafka(ctx, cluster.Addr(), "events", dir)
			case "connect":
				var commits int
				c, commits, err = connectRun(b, cluster, bin, dir, spec.Messages, false)
				b.Logf("connect: %d commits", commits)
			}
			if err != nil {
				b.Fatalf("%s: %v", n, err)
			}
			report.AddEngine(bench.EngineRun{Contender: n, Input: input, Rows: spec.Messages, ProcCost: c})
			got, err := spark.Verify(ctx, filepath.Join(dir, "warehouse"), "db.events")
			if err != nil {
				b.Fatal(err)
			}
			if s := got["db.events"]; s.Rows != spec.Messages || s.IDs != spec.Messages {
				if n == "connect" {
					b.Log(connectLog(dir))
				}
				b.Fatalf("%s's table holds %d rows of %d ids as Spark reads it, want %d of each", n, s.Rows, s.IDs, spec.Messages)
			}
		}
	}
	kafkaEngineRounds++
	if kafkaEngineRounds > 1 || (os.Getenv("FLOE_BENCH_ENGINES") != "" && !strings.Contains(os.Getenv("FLOE_BENCH_ENGINES"), "connect")) {
		return // the crash runs once, with the first round
	}
	// The sink's worker killed after its first commit, then started again.
	dir := filepath.Join(b.TempDir(), "connect-kill")
	if _, _, err := connectRun(b, cluster, bin, dir, spec.Messages, true); err != nil {
		b.Fatal(err)
	}
	got, err := spark.Verify(ctx, filepath.Join(dir, "warehouse"), "db.events")
	if err != nil {
		b.Fatal(err)
	}
	s := got["db.events"]
	b.Logf("Kafka Connect's sink, its worker killed after its first commit and started again: %d rows of %d distinct ids for %d messages, as Spark reads them", s.Rows, s.IDs, spec.Messages)
	if s.IDs != spec.Messages || s.Rows != spec.Messages {
		b.Errorf("Kafka Connect's sink after a kill: %d rows, %d ids, want %d of each", s.Rows, s.IDs, spec.Messages)
	}
}

var kafkaEngineRounds, connectRuns int

// connectLog is what the sink's worker logged of note, for a failure.
func connectLog(dir string) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "connect-*.log"))
	var out []string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, " ERROR ") || strings.Contains(line, " WARN ") || strings.Contains(line, "Commit") || strings.HasPrefix(line, "Caused by") {
				out = append(out, line)
			}
		}
	}
	if len(out) > 60 {
		out = out[len(out)-60:]
	}
	return strings.Join(out, "\n")
}

// connectRun runs Kafka Connect's sink until the table holds want rows (or
// stops growing for three minutes), killing its worker once after the first
// commit when kill is set; it returns the cost of the (last) worker and its
// commits.
func connectRun(b *testing.B, cluster *kafkatest.Cluster, bin, dir string, want int64, kill bool) (bench.ProcCost, int, error) {
	b.Helper()
	wh := filepath.Join(dir, "warehouse")
	srv, err := bench.StartServe(bin, wh)
	if err != nil {
		return bench.ProcCost{}, 0, err
	}
	defer srv.Stop()
	connectRuns++
	name := fmt.Sprintf("iceberg-sink-%d", connectRuns)
	control := "control-" + name
	cluster.CreateTopic(b, control, 1)
	sink, err := bench.NewConnectSink(dir, name, cluster.Addr(), "events", control, srv.URI, 2, 10*time.Second)
	if err != nil {
		return bench.ProcCost{}, 0, err
	}
	ctx := context.Background()
	run := 0
	if err := sink.Start(run); err != nil {
		return bench.ProcCost{}, 0, err
	}
	if kill {
		for t0 := time.Now(); bench.TableCount(ctx, bin, wh, "db.events") <= 0; time.Sleep(500 * time.Millisecond) {
			if time.Since(t0) > 5*time.Minute {
				sink.Stop(syscall.SIGKILL)
				return bench.ProcCost{}, 0, fmt.Errorf("Kafka Connect's sink committed nothing in 5 minutes:\n%s", connectLog(dir))
			}
		}
		sink.Stop(syscall.SIGKILL)
		b.Logf("connect: worker killed with %d rows committed", bench.TableCount(ctx, bin, wh, "db.events"))
		run++
		if err := sink.Start(run); err != nil {
			return bench.ProcCost{}, 0, err
		}
	}
	// Done when every message is in; given up on when the count has not
	// grown for three minutes (the sink's first commits can take two).
	last, since := int64(-1), time.Now()
	for {
		n := bench.TableCount(ctx, bin, wh, "db.events")
		if n >= want || time.Since(since) > 3*time.Minute {
			break
		}
		if n != last {
			last, since = n, time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	c := sink.Stop(syscall.SIGTERM)
	return c, sink.Commits(run), nil
}
