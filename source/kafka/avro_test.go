package kafka_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/kafka"
)

// The registry is asked once per schema id, with basic auth; an id it does
// not know is bad input.
func TestRegistry(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "ann" || p != "s:cret" {
			http.Error(w, `{"error_code":401}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/schemas/ids/7" {
			http.Error(w, `{"error_code":40403,"message":"Schema not found"}`, http.StatusNotFound)
			return
		}
		js, _ := json.Marshal(map[string]string{"schema": `{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}`})
		_, _ = w.Write(js)
	}))
	defer srv.Close()
	reg, err := kafka.NewRegistry(map[string]string{"schema.registry.url": srv.URL + "/", "schema.registry.basic.auth.user.info": "ann:s:cret"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s, err := reg.Schema(t.Context(), 7)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Arrow().String(); !strings.Contains(got, "id: type=int64") {
			t.Fatalf("schema %s", got)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d requests for one schema id, want 1", n)
	}
	if _, err := reg.Schema(t.Context(), 8); err == nil || !strings.Contains(err.Error(), "schema id 8") || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("unknown id: got %v", err)
	}
	bad, _ := kafka.NewRegistry(map[string]string{"schema.registry.url": srv.URL, "schema.registry.basic.auth.user.info": "ann:wrong"})
	if _, err := bad.Schema(t.Context(), 7); err == nil || !strings.Contains(err.Error(), "basic.auth.user.info") {
		t.Fatalf("wrong password: got %v", err)
	}
	for _, opts := range []map[string]string{{}, {"schema.registry.url": "registry:8081"},
		{"schema.registry.url": "http://r", "schema.registry.basic.auth.user.info": "nocolon"}} {
		if _, err := kafka.NewRegistry(opts); !errors.Is(err, source.ErrConfig) {
			t.Errorf("%v: got %v, want a configuration error", opts, err)
		}
	}
}
