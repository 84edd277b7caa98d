package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// chromiumTimeout bounds one headless Chromium run: one that waits on the
// network or a lost renderer fails the test instead of hanging it.
const chromiumTimeout = 60 * time.Second

// needChromium returns Debian's chromium, or skips the test (fails under
// FLOE_REQUIRE_ENGINES=1, as .ci/run, which installs it, sets).
func needChromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		msg := "chromium is not installed (Debian package chromium; .ci/run installs it)"
		if os.Getenv(fixture.RequireEnginesEnv) == "1" {
			t.Fatal(msg + "; " + fixture.RequireEnginesEnv + "=1 requires it")
		}
		t.Skip(msg)
	}
	return bin
}

// headlessChromium runs chromium headless on args and returns its
// standard output.
func headlessChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	// Without these it reaches for the network and a session bus, neither
	// of which a test machine need have.
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	// Its renderers may hold the pipes open after it is killed.
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("chromium %v did not finish in %s\n%s", args, chromiumTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}
