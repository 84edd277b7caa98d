package kafkatest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// kfakeBroker is franz-go's in-process cluster of one broker.
type kfakeBroker struct {
	dataDir string // where an on-disk cluster keeps its state; "" in memory
	host    string // the address it listens on; "" for kfake's 127.0.0.1

	mu      sync.Mutex
	c       *kfake.Cluster
	stopped bool
	ports   []int
}

// boot starts kfake on the broker's ports (any free one the first time)
// and seeds its topics where they are not there already.
func (k *kfakeBroker) boot(t testing.TB, topics map[string]int) []string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	for topic, n := range topics {
		opts = append(opts, kfake.SeedTopics(int32(n), topic))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ports != nil {
		opts = append(opts, kfake.Ports(k.ports...))
	}
	if k.dataDir != "" {
		opts = append(opts, kfake.DataDir(k.dataDir))
	}
	if k.host != "" {
		opts = append(opts, kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(k.host, port))
		}))
	}
	kc, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	k.c, k.stopped = kc, false
	addrs := kc.ListenAddrs()
	if k.ports == nil {
		for _, a := range addrs {
			_, p, err := net.SplitHostPort(a)
			n, perr := strconv.Atoi(p)
			if err != nil || perr != nil {
				t.Fatalf("kfake listens on %q", a)
			}
			k.ports = append(k.ports, n)
		}
	}
	return addrs
}

func (k *kfakeBroker) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.c.Close()
		k.stopped = true
	}
}

func (k *kfakeBroker) onDisk() bool { return k.dataDir != "" }

func (k *kfakeBroker) loseLogs(t testing.TB) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(k.dataDir, "partitions")); err != nil {
		t.Fatal(err)
	}
}

func (k *kfakeBroker) wipe(t testing.TB) {
	t.Helper()
	if k.dataDir != "" {
		if err := os.RemoveAll(k.dataDir); err != nil {
			t.Fatal(err)
		}
	}
}
