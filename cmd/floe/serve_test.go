package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// floeServe starts `floe serve` on the env's warehouse on a free port and
// returns it with its URL.
func (e *env) floeServe(args ...string) (stop func() int, base string) {
	e.T.Helper()
	cmd, base := e.startServing(regexp.MustCompile(`uri=(http://[0-9.:]+)`), nil, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	return func() int {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return exitCode(cmd.Wait())
	}, base
}

// floe's own REST client through `floe serve`: the article scenario and two
// concurrent writers, with the embedded catalog behind the server; then a
// stream writing to the embedded catalog directly while the server serves
// the same warehouse, its rows visible through the server as they commit.
func TestServeCatalog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stop, base := e.floeServe()
	rest := []string{"--catalog-type", "rest", "--catalog-uri", base}
	e.catalogScenario(rest)

	// What went through the server is in the embedded catalog itself.
	if n := strings.TrimSpace(e.OK("scan", "db.stream", "--count").Stdout); n != "4000" {
		t.Fatalf("db.stream in the embedded catalog holds %s rows, want 4000", n)
	}

	local := filepath.Join(e.Dir, "landing-local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	var streamErr syncBuffer
	stream := e.startFloe(&streamErr, "stream", "--source", local, "--format", "parquet", "--table", "db.local",
		"--checkpoint", filepath.Join(e.Dir, "ckpt-local"), "--trigger", "100ms", "--maintenance=false")
	defer func() {
		_ = stream.Process.Kill()
		if t.Failed() {
			t.Logf("the stream's stderr:\n%s", streamErr.String())
		}
	}()
	for i := int64(0); i < 3; i++ {
		if err := fixture.WriteIDFile(filepath.Join(local, fmt.Sprintf("f-%d.parquet", i)), i*100, 100); err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatInt((i+1)*100, 10)
		fixture.WaitFor(t, 30*time.Second, want+" rows of db.local through the server", func() bool {
			r := e.Run(append([]string{"scan", "db.local", "--count"}, rest...)...)
			return r.Code == 0 && strings.TrimSpace(r.Stdout) == want
		})
	}
	_ = stream.Process.Signal(syscall.SIGTERM)
	if code := exitCode(stream.Wait()); code != 0 {
		t.Fatalf("the stream beside the server exited %d", code)
	}
	if code := stop(); code != 0 {
		t.Fatalf("floe serve exited %d on SIGTERM", code)
	}
}

// With --tokens, a request without a token is refused with 401 and floe's
// REST client passes with the token (the catalog property `token`).
func TestServeTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "tokens.txt"), []byte("# readers\nt0ken-for-tests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, base := e.floeServe("--tokens", "tokens.txt")
	res, err := http.Get(base + "/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without a token: %d, want 401", res.StatusCode)
	}
	e.WriteIDs("a.parquet", 0, 10)
	if r := e.Run(e.StreamArgs("db.t", "--trigger", "once", "--catalog-type", "rest", "--catalog-uri", base)...); r.Code == 0 {
		t.Fatalf("a client without the token succeeded:\n%s", r)
	}
	e.OK(e.StreamArgs("db.t", "--trigger", "once", "--catalog-type", "rest", "--catalog-uri", base, "-p", "token=t0ken-for-tests")...)
	if n := strings.TrimSpace(e.OK("scan", "db.t", "--count").Stdout); n != "10" {
		t.Fatalf("db.t holds %s rows, want 10", n)
	}
}
