package main_test

import (
	"fmt"
	"io"
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

// floe serve keeps clients inside its warehouse and the prefixes
// --allow-location-prefix names, and refuses bodies over
// --max-request-bytes unread: the server's resident set, read from /proc,
// stays where it was through two 200 MB bodies.
func TestServeOwnsOnlyItsWarehouse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	lake := filepath.Join(e.Dir, "lake")
	if r := e.Run("serve", "--allow-location-prefix", "relative/lake"); r.Code != 2 || !strings.Contains(r.Stderr, "relative/lake") {
		t.Fatalf("serve with a relative prefix: exit %d, want 2 naming it:\n%s", r.Code, r)
	}
	cmd, base := e.startServing(regexp.MustCompile(`uri=(http://[0-9.:]+)`), nil,
		"serve", "--listen", "127.0.0.1:0", "--allow-location-prefix", lake, "--max-request-bytes", strconv.Itoa(16<<20))
	post := func(path string, body io.Reader, length int64) (int, string) {
		req, err := http.NewRequest("POST", base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	postJSON := func(path, body string) (int, string) {
		return post(path, strings.NewReader(body), int64(len(body)))
	}
	if code, body := postJSON("/v1/namespaces", `{"namespace": ["db"]}`); code != 200 {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	schema := `"schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": true}]}`
	for i, c := range []struct {
		loc  string
		want int
	}{
		{filepath.Join(e.Dir, "elsewhere", "t"), 400},
		{lake + "-2/t", 400},
		{e.Warehouse, 400},
		{lake + "/t", 200},
		{lake + "/t/inner", 400},
		{"file://" + lake + "//t/", 400},
	} {
		loc, want := c.loc, c.want
		code, body := postJSON("/v1/namespaces/db/tables", fmt.Sprintf(`{"name": "t%d", "location": %q, %s}`, i, loc, schema))
		if code != want {
			t.Fatalf("create at %s: %d %s, want %d", loc, code, body, want)
		}
		if code == 400 && !strings.Contains(body, e.Warehouse) && !strings.Contains(body, "db.t3") {
			t.Fatalf("the refusal of %s names neither the warehouse nor the table in the way: %s", loc, body)
		}
	}

	before, ok := fixture.RSS(cmd.Process.Pid)
	for range 2 {
		flood := fixture.NewFlood(200 << 20)
		if code, body := post("/v1/namespaces", flood, 200<<20); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("a 200 MB body: %d %s, want 413", code, body)
		}
	}
	after, _ := fixture.RSS(cmd.Process.Pid)
	t.Logf("floe serve's resident set before two refused 200 MB bodies: %.1f MiB, after: %.1f MiB", float64(before)/(1<<20), float64(after)/(1<<20))
	if ok && after-before > 16<<20 {
		t.Fatalf("two refused 200 MB bodies grew floe serve from %d to %d MiB", before>>20, after>>20)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(cmd.Wait()); code != 0 {
		t.Fatalf("floe serve exited %d on SIGTERM", code)
	}
}
