package main_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// floeBin is the binary under test, built once by TestMain with the
// floetest tag (its crash hooks).
var floeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "floe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if floeBin, err = fixture.BuildFloe(dir, "floetest"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	kafkatest.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's world (fixture.Env) with the checks these tests share.
type env struct{ *fixture.Env }

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{fixture.NewEnv(t, floeBin)}
}
