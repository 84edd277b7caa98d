package interop_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// A table written in cluster mode, two floe workers sharing a topic's
// partitions through a consumer group and committing one snapshot per
// interval through one coordinator, reads the same in icebird, DuckDB and
// Spark as in floe: every message once.
func TestClusterModeTableReadsAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 4)
	const messages = 3000
	var recs []*kgo.Record
	for i := range messages {
		recs = append(recs, &kgo.Record{Topic: c.Name("events"), Partition: int32(i % 4),
			Value: fmt.Appendf(nil, `{"id":%d,"v":"m-%d","amount":%d.%02d}`, i, i, i%500, i%100)})
	}
	c.Produce(t, recs...)
	var workers []*fixture.SyncBuffer
	var stops []func() int
	for w := range 2 {
		var stderr fixture.SyncBuffer
		cmd := e.Command(floeBin, nil, "stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers="+c.Addr(),
			"-o", "subscribe="+c.Name("events"), "-o", "kafka.group.id="+c.Name("landers"),
			"--format", "json", "--table", "db.events", "--checkpoint", filepath.Join(e.Dir, fmt.Sprintf("ck-%d", w)),
			"--trigger", "processing-time=300ms")
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		workers = append(workers, &stderr)
		stops = append(stops, func() int {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			return cmd.ProcessState.ExitCode()
		})
	}
	fixture.WaitFor(t, 90*time.Second, "every message in the table", func() bool { return len(e.TableIDs("db.events")) >= messages })
	for i, stop := range stops {
		if code := stop(); code != 0 {
			t.Fatalf("worker %d exited %d:\n%s", i, code, workers[i].String())
		}
	}
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, messages); msg != "" {
		t.Fatalf("iceberg-go's scan: %s", msg)
	}
	if st := e.checkTable("db.events"); st.Rows != messages {
		t.Fatalf("%d rows, want %d", st.Rows, messages)
	}
}
