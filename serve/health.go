package serve

import (
	"context"
	"net/http"
	"time"
)

// readyTimeout bounds the catalog's answer to a readiness check: longer
// than a probe waits, so that the probe, not the server, decides.
const readyTimeout = 5 * time.Second

// healthz answers while the process serves.
func healthz(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 when the backing catalog answers a listing of its
// namespaces, the cheapest request every catalog has, and 503 with the
// reason when it does not. The reason hides what names a file or URI, as
// the API's errors do, behind a reference to the server's log: the
// endpoint needs no token.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	_, err := s.cfg.Catalog.ListNamespaces(ctx, nil)
	if err == nil {
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	msg := err.Error()
	if namesFile(msg) {
		ref := errorRef()
		s.logger().Error("not ready: the catalog does not answer", "ref", ref, "error", msg)
		msg = "the server's log has the cause under ref=" + ref
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("not ready: the " + string(s.cfg.Catalog.CatalogType()) + " catalog does not answer: " + msg + "\n"))
}
