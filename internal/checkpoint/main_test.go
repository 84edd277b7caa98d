package checkpoint_test

import (
	"testing"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// TestMain stops the Apache Kafka broker the package's tests share, if one
// started (kafkatest's -kafka=apache), and fails the run when a goroutine
// outlives the tests.
func TestMain(m *testing.M) { fixture.RunWithoutLeaks(m, kafkatest.StopShared) }
