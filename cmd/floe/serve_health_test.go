package main_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// get answers a GET of url with its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return res.StatusCode, string(b)
}

// floe serve answers /healthz, /readyz and /metrics beside the REST
// catalog, without a token where the catalog needs one, and counts each
// request by route and status. /readyz follows the catalog it serves: a
// server in front of another floe serve answers 503, naming its catalog,
// while that one is stopped, and 200 once it is back; /healthz answers
// throughout.
func TestServeHealthAndMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "tokens.txt"), []byte("t0ken-for-tests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stopUpstream, upstream := e.floeServe("--tokens", "tokens.txt")
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, upstream+path); code != http.StatusOK || body != "ok\n" {
			t.Fatalf("%s without a token: %d %q, want 200 ok", path, code, body)
		}
	}
	if code, _ := get(t, upstream+"/v1/config"); code != http.StatusUnauthorized {
		t.Fatalf("/v1/config without a token: %d, want 401: the catalog still needs its token", code)
	}

	// Another server in front of the first, through floe's REST client.
	addr := strings.TrimPrefix(upstream, "http://")
	cmd, front := e.startServing(regexp.MustCompile(`uri=(http://[0-9.:]+)`), nil,
		"serve", "--listen", "127.0.0.1:0", "--catalog-type", "rest", "--catalog-uri", upstream, "-p", "token=t0ken-for-tests")
	defer cmd.Process.Kill()
	for range 3 {
		if code, body := get(t, front+"/v1/namespaces"); code != http.StatusOK {
			t.Fatalf("GET /v1/namespaces: %d %s", code, body)
		}
	}
	if code, _ := get(t, front+"/v1/namespaces/nope"); code != http.StatusNotFound {
		t.Fatalf("GET /v1/namespaces/nope: %d, want 404", code)
	}
	if code, _ := get(t, front+"/nothing/here"); code != http.StatusNotFound {
		t.Fatalf("GET /nothing/here: %d, want 404", code)
	}
	if code, body := get(t, front+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the catalog up: %d %q", code, body)
	}
	_, metrics := get(t, front+"/metrics")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^floe_serve_requests_total\{route="GET /v1/namespaces",status="200"\} 3$`),
		regexp.MustCompile(`(?m)^floe_serve_requests_total\{route="GET /v1/namespaces/\{namespace\}",status="404"\} 1$`),
		regexp.MustCompile(`(?m)^floe_serve_requests_total\{route="unmatched",status="404"\} 1$`),
		regexp.MustCompile(`(?m)^floe_serve_requests_total\{route="GET /readyz",status="200"\} 1$`),
		regexp.MustCompile(`(?m)^floe_serve_request_duration_seconds_count\{route="GET /v1/namespaces"\} 3$`),
		regexp.MustCompile(`(?m)^floe_build_info\{goversion="go[0-9.]+",revision="[^"]+",version="[^"]+"\} 1$`),
	} {
		if !want.MatchString(metrics) {
			t.Errorf("/metrics lacks %s:\n%s", want, metrics)
		}
	}

	if code := stopUpstream(); code != 0 {
		t.Fatalf("the first server exited %d on SIGTERM", code)
	}
	code, body := get(t, front+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready: the rest catalog does not answer: ") {
		t.Fatalf("/readyz with its catalog stopped: %d %q, want 503 naming the catalog", code, body)
	}
	if code, _ := get(t, front+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with its catalog stopped: %d, want 200", code)
	}
	if code, _ := get(t, front+"/metrics"); code != http.StatusOK {
		t.Fatalf("/metrics with its catalog stopped: %d, want 200", code)
	}

	_, again := e.startServing(regexp.MustCompile(`uri=(http://[0-9.:]+)`), nil, "serve", "--listen", addr, "--tokens", "tokens.txt")
	if again != upstream {
		t.Fatalf("the first server came back at %s, not %s", again, upstream)
	}
	fixture.WaitFor(t, 20*time.Second, "/readyz 200 once the catalog is back", func() bool {
		code, _ := get(t, front+"/readyz")
		return code == http.StatusOK
	})
}
