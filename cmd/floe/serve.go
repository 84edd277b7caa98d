package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/serve"
)

func init() {
	helps["serve"] = commandHelp{
		usage: "serve [--listen HOST:PORT] [catalog flags] [flags]",
		about: "Serve floe's catalog (the embedded one by default, or any catalog the catalog flags open) as an Iceberg REST " +
			"catalog, so that DuckDB, Spark, Trino, PyIceberg or iceberg-js query floe's tables without a catalog of their own. " +
			"Commits go through the catalog's own atomic commit: a commit whose requirements fail gets 409 and changes nothing. " +
			"Mutations honour Idempotency-Key; table loads carry an ETag. A stream may write to the same warehouse meanwhile. " +
			"Without --tokens or --oauth-clients anyone who reaches the port may change tables: keep it on 127.0.0.1, or give tokens. " +
			"Clients place tables only inside the warehouse (or under --allow-location-prefix), never where another table is; " +
			"a purge deletes only the files the table's metadata names, inside its own location. " +
			"One access-log line per request to the catalog goes to stderr. " +
			"The same port answers /healthz, /readyz (503 while the catalog does not answer) and /metrics (Prometheus), without a token.",
		examples: []example{
			{"Serve ./warehouse on the default port.", "floe serve --warehouse ./warehouse --listen 127.0.0.1:8181"},
			{"Require bearer tokens, static or issued to OAuth2 clients.", "floe serve --listen :8181 --tokens tokens.txt --oauth-clients clients.txt"},
			{"Also let clients place and register tables under a bucket's folder.", "floe serve --warehouse ./warehouse --allow-location-prefix s3://lake/tables"},
		},
	}
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var cf catalogFlags
	cf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8181", "Serve on `HOST:PORT` (:0 for any free port; the address is printed on stderr).")
	tokens := fs.String("tokens", "", "Require a bearer token: accept those of `FILE`, one a line (# starts a comment).")
	clients := fs.String("oauth-clients", "", "Issue bearer tokens from POST /v1/oauth/tokens to the OAuth2 clients of `FILE`, CLIENT_ID:SECRET a line (what a client's credential property holds).")
	lifetime := fs.Duration("idempotency-key-lifetime", 30*time.Minute, "Replay a mutation's response to a request with the same Idempotency-Key for `DURATION`.")
	logFormat := fs.String("log-format", "text", "How the access log shows on stderr, as `FORMAT`: text, or json.")
	fs.values("log-format", "text", "json")
	var prefixes stringsFlag
	fs.Var(&prefixes, "allow-location-prefix", "Let clients place tables, and register metadata files, under `PREFIX` too (repeatable), e.g. s3://lake/tables; by default only inside the warehouse.")
	maxBody := fs.Int64("max-request-bytes", serve.DefaultMaxRequestBytes, "Refuse request bodies over `BYTES` with 413, unread.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments, got %q", pos)
	}
	if *maxBody <= 0 {
		return usagef("--max-request-bytes=%d: give a positive number of bytes", *maxBody)
	}
	var logger *slog.Logger
	switch *logFormat {
	case "text":
		logger = setLogger(slog.New(slog.NewTextHandler(stderr, nil)))
	case "json":
		logger = setLogger(slog.New(slog.NewJSONHandler(stderr, nil)))
	default:
		return usagef("--log-format=%s is not known; use text or json", *logFormat)
	}
	var auth *serve.Auth
	if *tokens != "" || *clients != "" {
		if auth, err = serve.LoadAuth(*tokens, *clients); err != nil {
			return fmt.Errorf("%w: --tokens/--oauth-clients: %v", floe.ErrConfig, err)
		}
	}
	cfg, err := cf.config()
	if err != nil {
		return err
	}
	cat, err := floe.OpenCatalog(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if cl, ok := cat.(catalog.Closer); ok {
			_ = cl.Close()
		}
	}()
	server, err := serve.New(serve.Config{
		Catalog:                 cat,
		Warehouse:               catalogs.Warehouse(cfg),
		AllowedLocationPrefixes: prefixes,
		Properties:              cfg.Properties,
		Register: func(ctx context.Context, ident table.Identifier, loc string) (*table.Table, error) {
			return catalogs.RegisterIn(ctx, cat, cfg, ident, loc)
		},
		Auth:                auth,
		IdempotencyLifetime: *lifetime,
		MaxRequestBytes:     *maxBody,
		Log:                 logger,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", floe.ErrConfig, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("%w: --listen %s: %v; give a free host:port, e.g. 127.0.0.1:8181 or :0 for any port", floe.ErrConfig, *listen, err)
	}
	srv := &http.Server{
		Handler:           server.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if auth == nil {
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
			logger.Warn("serving without authentication on a non-loopback address: anyone who reaches it may change tables; give --tokens or --oauth-clients", "listen", ln.Addr().String())
		}
	}
	logger.Info("serving an Iceberg REST catalog", "uri", "http://"+ln.Addr().String(), "catalog", cat.CatalogType(), "warehouse", catalogs.Warehouse(cfg))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-sigs:
	}
	// Requests under way finish; new ones are refused.
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
