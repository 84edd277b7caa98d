package kafkatest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/floe-io/floe/internal/fixture"
)

// A JVM broker costs seconds to start, so the tests of a package that do
// not stop or damage their broker share one (Apache.Start), each on
// topics and groups of its own names (Cluster.Name). It lives until
// StopShared, which the package's TestMain calls, or until the test
// process ends (dieWithParent).
var shared struct {
	mu  sync.Mutex
	b   *apache
	dir string
	err error // why it could not start; the next tests fail with it
	n   int   // clusters handed out, for their names' suffixes
}

// startShared hands out a share of the package's broker, starting it
// first if need be, with topic created under its share's name.
func startShared(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	b, suffix := sharedBroker(t)
	c := &Cluster{suffix: suffix, addrs: []string{b.addr()}}
	cl := c.client(t)
	defer cl.Close()
	if err := createTopic(kadm.NewClient(cl), topic+suffix, partitions, true); err != nil {
		t.Fatal(err)
	}
	return c
}

// sharedBroker is the package's broker, started by the first test that
// needs it, and a suffix of names no other share has.
func sharedBroker(t testing.TB) (*apache, string) {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.b == nil && shared.err == nil {
		fixture.NeedEngines(t)
		dir, err := os.MkdirTemp("", "floe-kafka-")
		if err != nil {
			t.Fatal(err)
		}
		// The broker outlives the test, so its directory is not the
		// test's; it goes with StopShared, or now if the start fails.
		defer func() {
			if shared.b == nil {
				_ = os.RemoveAll(dir)
			}
		}()
		b := newApache(t, dir, "127.0.0.1")
		if shared.err = b.start(nil); shared.err == nil {
			shared.b, shared.dir = b, dir
		}
	}
	if shared.err != nil {
		t.Fatalf("kafkatest: the shared Apache Kafka broker: %v", shared.err)
	}
	shared.n++
	return shared.b, fmt.Sprintf("-%d", shared.n)
}

// StopShared stops the package's shared broker, if it was started, and
// deletes its state; a TestMain calls it after m.Run.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.b != nil {
		shared.b.stop()
		_ = os.RemoveAll(shared.dir)
		shared.b = nil
	}
}
