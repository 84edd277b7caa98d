package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/floe-io/floe/internal/fixture"
)

// apache is one Apache Kafka broker, combined broker and controller in
// KRaft mode, run from the engines' jars/kafka: its clients' listener on
// host, its controller's on 127.0.0.1.
// Its state lives in dir: the metadata log in metadata/, the partitions'
// logs in logs/, so that a restart can lose the one and keep the other.
type apache struct {
	classpath string
	dir       string
	host      string
	port      int // the clients' listener
	cport     int // the controller's

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// startTimeout bounds a broker's start: a JVM on a loaded machine of two
// cores takes several seconds.
const startTimeout = 120 * time.Second

// newApache is a broker keeping its state in dir, listening for clients
// on host, on two free ports it keeps across restarts; the test is
// skipped (failed in CI) without the engines.
func newApache(t testing.TB, dir, host string) *apache {
	t.Helper()
	a := &apache{classpath: fixture.NeedEngines(t).Classpath("kafka"), dir: dir, host: host, port: fixture.FreePort(t), cport: fixture.FreePort(t)}
	if err := a.configure(); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a *apache) path(name string) string { return filepath.Join(a.dir, name) }

func (a *apache) addr() string { return net.JoinHostPort(a.host, strconv.Itoa(a.port)) }

// configure writes server.properties and the logging set-up. Group
// offsets and transaction state have one replica and one partition, as a
// single broker holds them, share-group state one replica; a group's first
// rebalance is not delayed; threads and the log cleaner's buffer are sized
// for a test's traffic; topics exist only when created (as on kfake and
// most production clusters).
func (a *apache) configure() error {
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://%[5]s:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://%[5]s:%[1]d
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
metadata.log.dir=%[3]s
log.dirs=%[4]s
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.dedupe.buffer.size=2097152
`, a.port, a.cport, a.path("metadata"), a.path("logs"), a.host)
	logging := `log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.common.config=WARN
`
	if err := os.WriteFile(a.path("server.properties"), []byte(props), 0o644); err != nil {
		return err
	}
	return os.WriteFile(a.path("log4j.properties"), []byte(logging), 0o644)
}

// java runs the JVM on the broker's jars, its output appended to
// broker.log.
func (a *apache) java(args ...string) (*exec.Cmd, *os.File, error) {
	logf, err := os.OpenFile(a.path("broker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, err
	}
	// A small heap and the client compiler: the tests move little data,
	// and a JVM's start is the broker's largest cost.
	cmd := exec.Command("java", append([]string{"-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-Dlog4j.configuration=file:" + a.path("log4j.properties"), "-cp", a.classpath}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	return cmd, logf, nil
}

// format writes a new cluster's metadata into an empty state directory,
// as kafka-storage.sh format does.
func (a *apache) format() error {
	// One id in 64 would start with '-', which the tool's argument
	// parser takes for an option; Kafka's own random ids never do.
	var id string
	for id == "" || id[0] == '-' {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		id = base64.RawURLEncoding.EncodeToString(b)
	}
	cmd, logf, err := a.java("kafka.tools.StorageTool", "format", "-t", id, "-c", a.path("server.properties"))
	if err != nil {
		return err
	}
	defer logf.Close()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kafka-storage format: %v\n%s", err, a.logTail())
	}
	return nil
}

// logTail is the end of broker.log, for a failure's message.
func (a *apache) logTail() string {
	b, _ := os.ReadFile(a.path("broker.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// start formats the state directory if it is empty, starts the JVM and
// waits until the broker answers, then creates topics where they are not
// there already and waits until every partition of them has a leader.
func (a *apache) start(topics map[string]int) error {
	if _, err := os.Stat(filepath.Join(a.path("metadata"), "meta.properties")); errors.Is(err, os.ErrNotExist) {
		if err := a.format(); err != nil {
			return err
		}
	}
	cmd, logf, err := a.java("kafka.Kafka", a.path("server.properties"))
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start the Kafka broker: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	a.mu.Lock()
	a.cmd, a.exited = cmd, exited
	a.mu.Unlock()
	if err := a.waitReady(exited); err != nil {
		a.stop()
		return err
	}
	return a.seed(topics)
}

// waitReady waits until the broker lists itself in a metadata response:
// it then takes requests, and its controller creates topics.
func (a *apache) waitReady(exited <-chan struct{}) error {
	cl, err := clientOf([]string{a.addr()})
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := adm.BrokerMetadata(ctx)
		cancel()
		if err == nil && len(m.Brokers) > 0 && m.Controller >= 0 {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("the Kafka broker exited at start:\n%s", a.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Kafka broker did not answer on %s within %v: %v\n%s", a.addr(), startTimeout, err, a.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seed creates the topics not there, and waits until every partition of
// each has a leader, as after a restart the broker takes them back.
func (a *apache) seed(topics map[string]int) error {
	cl, err := clientOf([]string{a.addr()})
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for topic, n := range topics {
		if err := createTopic(adm, topic, n, false); err != nil {
			return err
		}
	}
	return nil
}

func (a *apache) boot(t testing.TB, topics map[string]int) []string {
	t.Helper()
	if err := a.start(topics); err != nil {
		t.Fatal(err)
	}
	return []string{a.addr()}
}

// stop shuts the broker down and waits for it. The shutdown is orderly,
// as kfake's: a broker killed keeps no checkpoint of the log start offsets
// DeleteRecords moved, and would serve trimmed messages again once back.
func (a *apache) stop() {
	a.mu.Lock()
	cmd, exited := a.cmd, a.exited
	a.cmd = nil
	a.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (a *apache) onDisk() bool { return true }

// loseLogs deletes the partitions' logs and the checkpoints of their
// offsets, keeping the log directory's identity and the metadata log.
func (a *apache) loseLogs(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(a.path("logs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "meta.properties" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(a.path("logs"), e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// wipe deletes the broker's state: the next start formats a new cluster.
func (a *apache) wipe(t testing.TB) {
	t.Helper()
	for _, d := range []string{"metadata", "logs"} {
		if err := os.RemoveAll(a.path(d)); err != nil {
			t.Fatal(err)
		}
	}
}
