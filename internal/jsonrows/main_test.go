package jsonrows_test

import (
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// TestMain fails the run when a goroutine outlives the package's tests.
func TestMain(m *testing.M) { fixture.RunWithoutLeaks(m) }
