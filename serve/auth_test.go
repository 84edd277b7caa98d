package serve_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/floe-io/floe/serve"
)

// The Authorization scheme is matched without regard to case (RFC 7235):
// bearer, BEARER and Bearer carry the same token; another scheme, or the
// scheme run into the token, does not. The token endpoint's form is capped
// like every body.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	auth := loadAuth(t, "t0ken\n", "spark:s3cret\n")
	w := newWorldWith(t, func(c *serve.Config) { c.Auth, c.MaxRequestBytes = auth, 4<<10 })
	for header, want := range map[string]int{
		"Bearer t0ken":  200,
		"bearer t0ken":  200,
		"BEARER t0ken":  200,
		"bEaReR  t0ken": 200,
		"Basic t0ken":   401,
		"Bearert0ken":   401,
		"bearer wrong":  401,
		"t0ken":         401,
	} {
		if code, _, out := w.do("GET", "/v1/namespaces", nil, "Authorization", header); code != want {
			t.Errorf("Authorization: %s: %d %v, want %d", header, code, out, want)
		}
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"spark"}, "client_secret": {strings.Repeat("s", 8<<10)}}
	res, err := http.PostForm(w.url+"/v1/oauth/tokens", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a token request over the cap: %d, want 413", res.StatusCode)
	}
}
