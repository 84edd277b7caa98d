package kafkatest

import (
	"flag"
	"os"
	"testing"
)

// Backend is the Kafka a cluster runs on.
type Backend string

const (
	// KFake is franz-go's kfake, in the test process: it starts in
	// milliseconds, so most tests run on it.
	KFake Backend = "kfake"
	// Apache is the Apache Kafka broker (the engines' jars/kafka), a JVM
	// in KRaft mode: the real group coordinator, session timeouts, topic
	// ids and log start offsets.
	Apache Backend = "apache"
)

// EnvKafka gives -kafka's default, so that one setting reaches every
// package of a `go test ./...`.
const EnvKafka = "FLOE_KAFKA"

var kafkaFlag = flag.String("kafka", os.Getenv(EnvKafka),
	"the Kafka the tests run against: kfake or apache for every test; by default kfake, with the tests run through kafkatest.Each on both (env "+EnvKafka+")")

// Selected is the backend of Start and StartOnDisk: Apache with
// -kafka=apache, else KFake.
func Selected(t testing.TB) Backend {
	t.Helper()
	switch Backend(*kafkaFlag) {
	case "", KFake:
		return KFake
	case Apache:
		return Apache
	}
	t.Fatalf("kafkatest: -kafka=%s (%s) is not kfake or apache", *kafkaFlag, EnvKafka)
	return ""
}

// Backends is what the tests that must hold on the real broker run
// against (see Each): both by default, the one named by -kafka when it is
// set.
func Backends(t testing.TB) []Backend {
	t.Helper()
	if *kafkaFlag == "" {
		return []Backend{KFake, Apache}
	}
	return []Backend{Selected(t)}
}

// Each runs test as a parallel subtest, named after the backend, on each
// of Backends: the tests whose boundary with Kafka is most at risk
// (exactly once across kills, topics created again, logs truncated,
// consumer groups, lag) run on the real broker in the default suite.
func Each(t *testing.T, test func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// Start runs a cluster on b with topic, of partitions partitions, created:
// on KFake a broker of the test's own, on Apache a share of the package's
// broker (shared.go), where topic is c.Name(topic).
func (b Backend) Start(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	if b == Apache {
		return startShared(t, topic, partitions)
	}
	return own(t, &kfakeBroker{}, topic, partitions)
}

// StartOnDisk runs a broker of the test's own on b, with its state kept
// in a directory, which the test may stop (Stop), restart (Restart) and
// damage (RestartEmpty, RestartLosingLogs).
func (b Backend) StartOnDisk(t testing.TB, topic string, partitions int) *Cluster {
	t.Helper()
	if b == Apache {
		return own(t, newApache(t, t.TempDir(), "127.0.0.1"), topic, partitions)
	}
	return own(t, &kfakeBroker{dataDir: t.TempDir()}, topic, partitions)
}

// StartOn runs a broker of the test's own on b listening on host, an
// address of this machine other than 127.0.0.1 (a fixture.NetLab's), so
// that processes in other network namespaces reach it, and only through
// the network.
func (b Backend) StartOn(t testing.TB, host, topic string, partitions int) *Cluster {
	t.Helper()
	if b == Apache {
		return own(t, newApache(t, t.TempDir(), host), topic, partitions)
	}
	return own(t, &kfakeBroker{host: host}, topic, partitions)
}
