package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/floe-io/floe/internal/buildinfo"
)

// requestMetrics counts the server's requests by route, the pattern that
// served them (GET /v1/namespaces/{namespace}), so that the series stay
// as few as the routes whatever paths clients send.
type requestMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// unmatched is the route of requests no endpoint serves (404, 405).
const unmatched = "unmatched"

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "floe_serve_requests_total",
			Help: "Requests answered, by route (the endpoint's method and path pattern, or unmatched) and HTTP status."}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "floe_serve_request_duration_seconds",
			Help: "Time to answer a request, by route.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"route"}),
	}
	m.reg.MustRegister(m.requests, m.duration, buildinfo.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *requestMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// count records each request under the route route finds for it.
func (m *requestMetrics) count(route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		name := route(r)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		m.requests.WithLabelValues(name, strconv.Itoa(rec.status)).Inc()
		m.duration.WithLabelValues(name).Observe(time.Since(start).Seconds())
	})
}
