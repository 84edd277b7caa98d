package serve_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/serve"
)

// post sends body to the server: with its length announced, or chunked.
func (w *world) post(path string, body io.Reader, length int64) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest("POST", w.url+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A body over the cap is refused with 413: unread when it announces its
// length (two 200 MB bodies leave the server's memory as it was), and
// read no further than the cap when it does not. Bodies under the cap go
// through.
func TestRequestBodyCapped(t *testing.T) {
	w := newWorld(t, nil)
	const big = 200 << 20
	before, measured := fixture.RSS(0)
	for range 2 {
		flood := fixture.NewFlood(big)
		code, body := w.post("/v1/namespaces", flood, big)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, strconv.Itoa(serve.DefaultMaxRequestBytes)) {
			t.Fatalf("a 200 MB body: %d %s, want 413 naming the limit", code, body)
		}
		if n := flood.Taken.Load(); n > 8<<20 {
			t.Fatalf("the client sent %d bytes of a body the server refused by its length", n)
		}
	}
	after, _ := fixture.RSS(0)
	t.Logf("resident set before two refused 200 MB bodies: %d MiB, after: %d MiB", before>>20, after>>20)
	if measured && after-before > 16<<20 {
		t.Fatalf("two refused 200 MB bodies grew the resident set from %d to %d MiB", before>>20, after>>20)
	}

	small := newWorldWith(t, func(c *serve.Config) { c.MaxRequestBytes = 4 << 10 })
	// Chunked, no length: refused on reaching the cap.
	flood := fixture.NewFlood(big)
	if code, body := small.post("/v1/namespaces", flood, -1); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a chunked 200 MB body: %d %s, want 413", code, body)
	}
	if n := flood.Taken.Load(); n > 8<<20 {
		t.Fatalf("the server took %d bytes of a chunked body capped at 4 KiB", n)
	}
	// Under the cap: served; just over it: 413.
	props := map[string]string{"k": strings.Repeat("v", 3<<10)}
	small.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}, "properties": props})
	props["k"] = strings.Repeat("v", 5<<10)
	small.must(413, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db2"}, "properties": props})
	if code, _ := small.post("/v1/namespaces", bytes.NewReader(bytes.Repeat([]byte(" "), 5<<10)), -1); code != 413 {
		t.Fatalf("a chunked body over the cap: %d, want 413", code)
	}
}
