package cluster_test

import (
	"os"
	"testing"

	"github.com/floe-io/floe/internal/kafkatest"
)

// TestMain stops the Apache Kafka broker the package's tests share, if
// one started (kafkatest's -kafka=apache and Each).
func TestMain(m *testing.M) {
	code := m.Run()
	kafkatest.StopShared()
	os.Exit(code)
}
