// Package metrics serves a running query's Prometheus metrics and its
// health endpoints: /metrics, /healthz (the process answers) and /readyz
// (the newest batch did not fail, and the query has finished a batch or a
// poll of its source lately).
package metrics

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/floe-io/floe/internal/buildinfo"
)

// Batch is what one committed batch tells the metrics.
type Batch struct {
	InputRows int64
	// DeadLetters counts the records set aside into the dead-letter table.
	DeadLetters int64
	// Duration is the whole batch, Commit its commit phase.
	Duration, Commit time.Duration
	Tables           []Table
	// BacklogFiles is the input files known but not yet ingested; -1 when
	// the source cannot tell.
	BacklogFiles int
	// KafkaLag is each Kafka partition's offsets behind its end, by topic
	// and partition; nil for other sources.
	KafkaLag map[string]map[string]int64
}

// Table is a batch's commit to one table.
type Table struct {
	Name       string
	Rows       int64
	DataFiles  int
	SnapshotID int64 // 0: nothing committed
	// Retries counts the commit's attempts after the first.
	Retries int
}

// Maintenance is one maintenance task run between batches.
type Maintenance struct {
	Table, Task string
	Duration    time.Duration
	Failed      bool
}

// Query holds one query's metrics.
type Query struct {
	reg      *prometheus.Registry
	batches  prometheus.Counter
	failures prometheus.Counter
	rowsIn   prometheus.Counter
	dead     prometheus.Counter
	rowsOut  *prometheus.CounterVec
	files    *prometheus.CounterVec
	snaps    *prometheus.CounterVec
	batchDur prometheus.Histogram
	commit   prometheus.Histogram
	backlog  prometheus.Gauge
	retries  *prometheus.CounterVec
	lag      *prometheus.GaugeVec
	maint    *prometheus.CounterVec
	maintDur *prometheus.HistogramVec

	mu         sync.Mutex
	lastCommit map[string]time.Time
	failing    error // the newest batch's failure, nil once a batch succeeds
	// alive is when the query last finished a batch or a poll of its
	// source; staleAfter (0: never) is how long /readyz waits for the next.
	alive      time.Time
	staleAfter time.Duration
}

// New registers a query's metrics, with floe_build_info and Go's and the
// process's own.
// /readyz fails when no batch or poll has finished for staleAfter (0:
// never for that reason).
func New(staleAfter time.Duration) *Query {
	q := &Query{reg: prometheus.NewRegistry(), lastCommit: map[string]time.Time{}, alive: time.Now(), staleAfter: staleAfter}
	f := promauto.With(q.reg)
	counter := func(name, help string) prometheus.Counter {
		return f.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	perTable := func(name, help string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"table"})
	}
	seconds := func(name, help string) prometheus.Histogram {
		return f.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)})
	}
	q.batches = counter("floe_batches_total", "Batches run to their end, with or without rows.")
	q.failures = counter("floe_batch_failures_total", "Batches that failed and were retried (a stream outlives transient failures).")
	q.rowsIn = counter("floe_input_rows_total", "Rows read from the source by committed batches.")
	q.dead = counter("floe_dead_letters_total", "Records the source could not read as rows, set aside into the dead-letter table (on-bad-record: dead-letter).")
	q.rowsOut = perTable("floe_output_rows_total", "Rows committed to each table.")
	q.files = perTable("floe_data_files_written_total", "Data files committed to each table.")
	q.snaps = perTable("floe_snapshots_committed_total", "Snapshots committed to each table, one per batch that wrote to it.")
	q.batchDur = seconds("floe_batch_duration_seconds", "Time of a batch from planning to its checkpoint entry (Spark's triggerExecution).")
	q.commit = seconds("floe_commit_duration_seconds", "Time of a batch's table commits, retries included.")
	q.backlog = f.NewGauge(prometheus.GaugeOpts{Name: "floe_source_backlog_files", Help: "Input files known and not yet ingested, where the source can tell."})
	q.retries = perTable("floe_commit_retries_total", "Commit attempts after the first: conflicts with other writers and transient catalog failures.")
	q.lag = f.NewGaugeVec(prometheus.GaugeOpts{Name: "floe_kafka_lag_offsets",
		Help: "Offsets of each Kafka partition not yet committed by the query, as of its newest batch (Spark's offsetsBehindLatest)."}, []string{"topic", "partition"})
	q.maint = f.NewCounterVec(prometheus.CounterOpts{Name: "floe_maintenance_runs_total",
		Help: "Maintenance task runs between batches, by table, task and result (ok or failed)."}, []string{"table", "task", "result"})
	q.maintDur = f.NewHistogramVec(prometheus.HistogramOpts{Name: "floe_maintenance_duration_seconds",
		Help: "Time of each maintenance task run.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}, []string{"task"})
	q.reg.MustRegister(commitCollector{q}, buildinfo.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return q
}

// Committed records a batch that ran to its end.
func (q *Query) Committed(b Batch) {
	q.batches.Inc()
	q.rowsIn.Add(float64(b.InputRows))
	q.dead.Add(float64(b.DeadLetters))
	q.batchDur.Observe(b.Duration.Seconds())
	if len(b.Tables) > 0 {
		q.commit.Observe(b.Commit.Seconds())
	}
	if b.BacklogFiles >= 0 {
		q.backlog.Set(float64(b.BacklogFiles))
	}
	for topic, parts := range b.KafkaLag {
		for part, n := range parts {
			q.lag.WithLabelValues(topic, part).Set(float64(n))
		}
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failing, q.alive = nil, now
	for _, t := range b.Tables {
		q.rowsOut.WithLabelValues(t.Name).Add(float64(t.Rows))
		q.files.WithLabelValues(t.Name).Add(float64(t.DataFiles))
		q.retries.WithLabelValues(t.Name).Add(float64(t.Retries))
		if t.SnapshotID != 0 {
			q.snaps.WithLabelValues(t.Name).Inc()
			q.lastCommit[t.Name] = now
		}
	}
}

// Polled records a poll of the source that found nothing new: the query
// is alive.
func (q *Query) Polled() {
	q.mu.Lock()
	q.alive = time.Now()
	q.mu.Unlock()
}

// Maintained records a maintenance task run.
func (q *Query) Maintained(m Maintenance) {
	result := "ok"
	if m.Failed {
		result = "failed"
	}
	q.maint.WithLabelValues(m.Table, m.Task, result).Inc()
	q.maintDur.WithLabelValues(m.Task).Observe(m.Duration.Seconds())
}

// Failed records a batch that failed and will be retried: the query is not
// ready until a batch succeeds.
func (q *Query) Failed(err error) {
	q.failures.Inc()
	q.mu.Lock()
	q.failing = err
	q.mu.Unlock()
}

// Handler serves /metrics, /healthz and /readyz.
func (q *Query) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(q.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		q.mu.Lock()
		err, idle := q.failing, time.Since(q.alive)
		q.mu.Unlock()
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: the newest batch failed and is being retried: " + err.Error() + "\n"))
			return
		}
		if q.staleAfter > 0 && idle > q.staleAfter {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "not ready: no batch or poll of the source has finished for %v (limit %v); a batch may be stuck\n", idle.Round(time.Second), q.staleAfter)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// commitCollector reports the time of each table's newest commit by this
// query, the alert on a stream that stopped committing (time() minus it,
// as Prometheus advises over a computed "seconds since" gauge).
type commitCollector struct{ q *Query }

var lastDesc = prometheus.NewDesc("floe_last_commit_timestamp_seconds",
	"Unix time of each table's newest successful commit by this query.", []string{"table"}, nil)

func (c commitCollector) Describe(ch chan<- *prometheus.Desc) { ch <- lastDesc }

func (c commitCollector) Collect(ch chan<- prometheus.Metric) {
	c.q.mu.Lock()
	defer c.q.mu.Unlock()
	for name, at := range c.q.lastCommit {
		ch <- prometheus.MustNewConstMetric(lastDesc, prometheus.GaugeValue, float64(at.UnixNano())/1e9, name)
	}
}
