// Package serve is an Iceberg REST catalog server (the REST catalog OpenAPI
// specification) over any catalog floe opens, so that DuckDB, Spark, Trino,
// PyIceberg or iceberg-js reach floe's tables without a catalog of their
// own.
//
// The server keeps no table state: every request goes to the backing
// catalog, whose own commit is the atomic step (the SQL catalog checks a
// commit's requirements against the metadata it replaces and swaps the
// metadata location in one conditional update). What the server adds is
// HTTP: the error model, ETags, Idempotency-Key replay, bearer tokens and an
// access log; and the boundary of what clients may touch: table locations
// inside the warehouse, purges of the files a table's metadata names,
// registrations from metadata files there, names that are names, bodies of
// a bounded size.
package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Config is what a Server serves and how.
type Config struct {
	// Catalog answers every request.
	Catalog catalog.Catalog
	// Warehouse is the root under which tables without a location of their
	// own are placed (a staged create must name the location before the
	// catalog does). Clients may place tables only inside it, or under an
	// AllowedLocationPrefixes entry; "" leaves placing to the catalog.
	Warehouse string
	// AllowedLocationPrefixes are places outside the warehouse where
	// clients may put tables and from which they may register metadata
	// files.
	AllowedLocationPrefixes []string
	// Properties configure the file IO that register reads metadata files
	// with (s3.*, gcs.*, adls.*: the catalog's own).
	Properties map[string]string
	// Register adds a table by its metadata file, as floe table register
	// does (catalogs.RegisterIn, which also registers in catalogs that have
	// no register operation of their own); nil refuses registrations.
	Register func(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error)
	// Auth, when not nil, requires a bearer token on every request but the
	// token endpoint.
	Auth *Auth
	// IdempotencyLifetime is how long a mutation's Idempotency-Key is
	// remembered; 0 means 30 minutes.
	IdempotencyLifetime time.Duration
	// MaxRequestBytes caps a request body; a larger one is refused with
	// 413 before it is read. 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Log receives one line per request; nil logs nothing. Failures whose
	// cause is not sent to the client are logged here, else to slog's
	// default logger.
	Log *slog.Logger
}

// DefaultMaxRequestBytes is the default cap of a request body: a commit
// carries a few snapshots and schemas, far below it.
const DefaultMaxRequestBytes = 16 << 20

// Server is the REST catalog's HTTP side.
type Server struct {
	cfg     Config
	keys    *idempotency
	mux     *http.ServeMux
	metrics *requestMetrics

	warehouse *place  // nil when the catalog places tables itself
	prefixes  []place // AllowedLocationPrefixes
	// placing is held from checking a table's places until it is created,
	// moved or registered there.
	placing sync.Mutex
}

// New makes a server of cfg; its error tells what in cfg is not valid.
func New(cfg Config) (*Server, error) {
	if cfg.IdempotencyLifetime <= 0 {
		cfg.IdempotencyLifetime = 30 * time.Minute
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	s := &Server{cfg: cfg, keys: newIdempotency(cfg.IdempotencyLifetime), mux: http.NewServeMux(), metrics: newRequestMetrics()}
	if cfg.Warehouse != "" {
		p, err := parsePlace(cfg.Warehouse)
		if err != nil {
			return nil, fmt.Errorf("warehouse %q: %v", cfg.Warehouse, err)
		}
		s.warehouse = &p
	}
	for _, prefix := range cfg.AllowedLocationPrefixes {
		p, err := parsePlace(prefix)
		if err != nil {
			return nil, fmt.Errorf("allowed location prefix %q: %v; give an absolute path or a URI such as s3://bucket/tables", prefix, err)
		}
		if p.path == "/" {
			return nil, fmt.Errorf("allowed location prefix %q is a whole file system or bucket; name the folder tables may go in", prefix)
		}
		s.prefixes = append(s.prefixes, p)
	}
	s.routes()
	return s, nil
}

// Handler serves the REST API, with authentication, the cap on request
// bodies and the access log; and beside it, outside the API's /v1 and
// without a token, the operator's /healthz, /readyz and /metrics (which
// name routes, never tables). Every request is counted.
func (s *Server) Handler() http.Handler {
	var api http.Handler = s.limitBodies(s.mux)
	if s.cfg.Auth != nil {
		api = s.cfg.Auth.require(api)
	}
	if s.cfg.Log != nil {
		api = accessLog(s.cfg.Log, api)
	}
	ops := http.NewServeMux()
	ops.HandleFunc("GET /healthz", healthz)
	ops.HandleFunc("GET /readyz", s.readyz)
	ops.Handle("GET /metrics", s.metrics.handler())
	ops.Handle("/", api)
	route := func(r *http.Request) string {
		if _, p := ops.Handler(r); p != "" && p != "/" {
			return p
		}
		if _, p := s.mux.Handler(r); p != "" && p != "/" {
			return p
		}
		return unmatched
	}
	return s.metrics.count(route, ops)
}

// endpoint is one route: its method and path as the specification writes
// them (announced by GET /v1/config) and its handler.
type endpoint struct {
	method, path string
	handle       func(*http.Request) response
	mutation     bool
}

func (s *Server) endpoints() []endpoint {
	eps := []endpoint{
		{"GET", "/v1/{prefix}/namespaces", s.listNamespaces, false},
		{"POST", "/v1/{prefix}/namespaces", s.createNamespace, true},
		{"GET", "/v1/{prefix}/namespaces/{namespace}", s.loadNamespace, false},
		{"HEAD", "/v1/{prefix}/namespaces/{namespace}", s.namespaceExists, false},
		{"DELETE", "/v1/{prefix}/namespaces/{namespace}", s.dropNamespace, true},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/properties", s.updateNamespaceProperties, true},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/tables", s.listTables, false},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables", s.createTable, true},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", s.loadTable, false},
		{"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", s.tableExists, false},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", s.commitTable, true},
		{"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", s.dropTable, true},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/register", s.registerTable, true},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", s.reportMetrics, false},
		{"POST", "/v1/{prefix}/tables/rename", s.renameTable, true},
	}
	if _, ok := s.cfg.Catalog.(catalog.TransactionalCatalog); ok {
		eps = append(eps, endpoint{"POST", "/v1/{prefix}/transactions/commit", s.commitTransaction, true})
	}
	return eps
}

func (s *Server) routes() {
	eps := s.endpoints()
	announced := make([]string, 0, len(eps))
	for _, ep := range eps {
		announced = append(announced, ep.method+" "+ep.path)
		// The server announces no prefix, so clients leave it out.
		s.mux.Handle(ep.method+" "+strings.Replace(ep.path, "/{prefix}", "", 1), s.serve(ep))
	}
	s.mux.Handle("GET /v1/config", s.serve(endpoint{handle: func(*http.Request) response {
		return ok(map[string]any{
			"defaults":                 map[string]string{},
			"overrides":                map[string]string{},
			"endpoints":                announced,
			"idempotency-key-lifetime": isoDuration(s.cfg.IdempotencyLifetime),
		})
	}}))
	if s.cfg.Auth != nil {
		s.mux.HandleFunc("POST /v1/oauth/tokens", s.cfg.Auth.token)
	}
	s.mux.Handle("/", s.serve(endpoint{handle: func(r *http.Request) response {
		return fail(http.StatusNotFound, "NoSuchEndpointException", "no endpoint %s %s; GET /v1/config lists the endpoints this server has", r.Method, r.URL.Path)
	}}))
}

// response is what a handler decided: written by serve, and kept for an
// Idempotency-Key's replay.
type response struct {
	status int
	header http.Header
	body   any
}

func ok(body any) response { return response{status: http.StatusOK, body: body} }

func noContent() response { return response{status: http.StatusNoContent} }

// serve runs a handler and writes its response; a mutation with an
// Idempotency-Key runs once and its final response is replayed.
func (s *Server) serve(ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res response
		key := r.Header.Get("Idempotency-Key")
		if ep.mutation && key != "" {
			res = s.keys.do(key, r.Method+" "+r.URL.Path, func() response { return ep.handle(r) })
		} else {
			res = ep.handle(r)
		}
		write(w, res)
	})
}

func write(w http.ResponseWriter, res response) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	if res.body == nil {
		w.WriteHeader(res.status)
		return
	}
	b, err := json.Marshal(res.body)
	if err != nil {
		res = fail(http.StatusInternalServerError, "InternalServerError", "encode the response: %v", err)
		b, _ = json.Marshal(res.body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(res.status)
	_, _ = w.Write(b)
}

// limitBodies refuses a body over the cap with 413: one that announces its
// length unread, one that does not when it reaches the cap.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxRequestBytes {
			// The connection cannot be reused with the body unread.
			w.Header().Set("Connection", "close")
			write(w, s.tooLarge())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tooLarge() response {
	return fail(http.StatusRequestEntityTooLarge, "BadRequestException",
		"the request body is over this server's limit of %d bytes; send a smaller request (floe serve --max-request-bytes raises the limit)", s.cfg.MaxRequestBytes)
}

// logger is where failures the client is not told the cause of go.
func (s *Server) logger() *slog.Logger {
	if s.cfg.Log != nil {
		return s.cfg.Log
	}
	return slog.Default()
}

// isoDuration spells d as ISO-8601 (PT30M), as the configuration's
// idempotency-key-lifetime is written.
func isoDuration(d time.Duration) string {
	s := int64(d / time.Second)
	out := "PT"
	if h := s / 3600; h > 0 {
		out += strconv.FormatInt(h, 10) + "H"
	}
	if m := s % 3600 / 60; m > 0 {
		out += strconv.FormatInt(m, 10) + "M"
	}
	if sec := s % 60; sec > 0 || out == "PT" {
		out += strconv.FormatInt(sec, 10) + "S"
	}
	return out
}
