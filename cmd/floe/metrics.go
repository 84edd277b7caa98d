package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/metrics"
)

// serveMetrics serves the query's metrics and health endpoints on addr
// (metrics.listen) and hooks them into opts; the returned stop ends the
// server. The address is named on stderr, so that a port 0 can be found.
func serveMetrics(addr string, cfg *config.Pipeline, opts *floe.Options, announce func(string)) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: metrics.listen (--metrics-listen) %s: %v; give a free host:port, e.g. 127.0.0.1:9249 or :0 for any port", floe.ErrConfig, addr, err)
	}
	q := metrics.New(cfg.Metrics.ReadyWithin(cfg.Trigger))
	srv := &http.Server{Handler: q.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			announce(fmt.Sprintf("metrics server on %s stopped: %v", ln.Addr(), err))
		}
	}()
	announce(fmt.Sprintf("metrics at http://%s/metrics, health at /healthz and /readyz", ln.Addr()))
	onProgress, onFailed, onPoll, onMaint := opts.OnProgress, opts.OnBatchFailed, opts.OnPoll, opts.OnMaintenance
	opts.OnProgress = func(p floe.Progress) {
		q.Committed(metricsBatch(p, cfg))
		if onProgress != nil {
			onProgress(p)
		}
	}
	opts.OnBatchFailed = func(id int64, err error) {
		q.Failed(err)
		if onFailed != nil {
			onFailed(id, err)
		}
	}
	opts.OnPoll = func() {
		q.Polled()
		if onPoll != nil {
			onPoll()
		}
	}
	opts.OnMaintenance = func(r floe.MaintenanceRun) {
		q.Maintained(metrics.Maintenance{Table: r.Table, Task: r.Task, Duration: r.Duration, Failed: r.Err != nil})
		if onMaint != nil {
			onMaint(r)
		}
	}
	return func() { _ = srv.Close() }, nil
}

// metricsBatch is what a progress record tells the metrics.
func metricsBatch(p floe.Progress, cfg *config.Pipeline) metrics.Batch {
	b := metrics.Batch{
		InputRows:    p.NumInputRows,
		DeadLetters:  p.NumDeadLetters,
		Duration:     time.Duration(p.DurationMs.TriggerExecution) * time.Millisecond,
		Commit:       time.Duration(p.DurationMs.Commit) * time.Millisecond,
		BacklogFiles: -1,
	}
	if p.Backlog != nil {
		b.BacklogFiles = p.Backlog.RemainingFiles
	}
	for _, s := range p.Sources {
		// The Kafka source's lag, in Spark's offsets shape:
		// {"topic": {"partition": offsets behind}}.
		if lag := s.Metrics["offsetsBehindLatest"]; lag != "" {
			_ = json.Unmarshal([]byte(lag), &b.KafkaLag)
		}
	}
	switch {
	case cfg.Sink.Console():
	case len(p.Sink.Tables) > 0 || cfg.Sink.IsTemplate():
		// A template's tables are those the batch's rows named.
		for _, t := range p.Sink.Tables {
			b.Tables = append(b.Tables, metrics.Table{Name: t.Table, Rows: t.NumOutputRows, DataFiles: t.DataFiles, SnapshotID: t.SnapshotID, Retries: t.CommitRetries})
		}
	default:
		b.Tables = []metrics.Table{{Name: cfg.Sink.Table, Rows: p.Sink.NumOutputRows, DataFiles: p.Sink.DataFiles, SnapshotID: p.Sink.SnapshotID, Retries: p.Sink.CommitRetries}}
	}
	return b
}
