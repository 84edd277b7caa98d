package main_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A REST catalog whose OAuth2 token endpoint fails without an OAuth2 error
// in its answer (an empty 500, a proxy's HTML page): the error still says
// what happened, with the endpoint and its status, and what to check.
func TestRESTTokenFailureHasCause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"empty", http.StatusInternalServerError, "", []string{"/v1/oauth/tokens", "500 Internal Server Error", "empty body", "credential"}},
		{"html", http.StatusForbidden, "<html>Forbidden by proxy</html>", []string{"/v1/oauth/tokens", "403 Forbidden", "Forbidden by proxy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tokens atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/oauth/tokens") {
					tokens.Add(1)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			e := newEnv(t)
			e.WriteIDs("a.parquet", 0, 10)
			r := e.Run(e.StreamArgs("db.t", "--trigger", "once", "--catalog-type", "rest", "--catalog-uri", srv.URL, "-p", "credential=id:secret")...)
			if r.Code == 0 {
				t.Fatalf("the run succeeded against a failing token endpoint: %s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Contains(r.Stderr, "secret") {
				t.Errorf("stderr shows the secret:\n%s", r.Stderr)
			}
			if tokens.Load() == 0 {
				t.Error("the token endpoint was never asked")
			}
		})
	}
}
