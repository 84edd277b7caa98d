package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// scrape reads one sample of /metrics by its name and labels as printed
// (`floe_output_rows_total{table="db.t"}`); ok is false when it is absent.
func scrape(t *testing.T, base, sample string) (v float64, ok bool) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	for _, l := range strings.Split(string(body), "\n") {
		if rest, found := strings.CutPrefix(l, sample+" "); found {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("sample %q: %v", l, err)
			}
			return v, true
		}
	}
	return 0, false
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// metricsStream starts floe with args and --metrics-listen on a free port,
// and returns it with the base URL it serves at.
func (e *env) metricsStream(args ...string) (*exec.Cmd, string) {
	e.T.Helper()
	return e.startServing(metricsAddr, nil, append(args, "--metrics-listen", "127.0.0.1:0")...)
}

var metricsAddr = regexp.MustCompile(`metrics at (http://[0-9.:]+)/metrics`)

// startServing starts floe with args and the environment variables vars,
// and returns it with the URL it serves at, which the first group of addr
// finds on its stderr (shown when the test fails).
func (e *env) startServing(addr *regexp.Regexp, vars []string, args ...string) (*exec.Cmd, string) {
	e.T.Helper()
	var stderr syncBuffer
	cmd := e.Command(floeBin, vars, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		_ = cmd.Process.Kill()
		if e.T.Failed() {
			e.T.Logf("floe %s's stderr:\n%s", args[0], stderr.String())
		}
	})
	var base string
	fixture.WaitFor(e.T, 20*time.Second, "the address on stderr", func() bool {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return cmd, base
}

// A processing-time stream with --metrics-listen: the counters move with
// the rows the table holds (counted by a scan, not by floe's counters),
// the time of the last commit is the wall clock's at the commit and moves
// with the next, the build is reported, and the health endpoints answer.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stream, base := e.metricsStream(e.StreamArgs("db.t", "--trigger", "100ms", "--progress", "json")...)
	defer stream.Process.Kill()
	if c := status(t, base+"/healthz"); c != http.StatusOK {
		t.Fatalf("/healthz: %d", c)
	}
	if c := status(t, base+"/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz: %d", c)
	}
	if _, body := get(t, base+"/metrics"); !regexp.MustCompile(`(?m)^floe_build_info\{goversion="go[0-9.]+",revision="[^"]+",version="[^"]+"\} 1$`).MatchString(body) {
		t.Errorf("/metrics lacks floe_build_info:\n%s", body)
	}
	rowsOut := `floe_output_rows_total{table="db.t"}`
	last := `floe_last_commit_timestamp_seconds{table="db.t"}`
	if _, ok := scrape(t, base, last); ok {
		t.Fatal("the time of the last commit reported before any commit")
	}
	if _, ok := scrape(t, base, `floe_seconds_since_last_commit{table="db.t"}`); ok {
		t.Fatal("floe_seconds_since_last_commit is still served; floe_last_commit_timestamp_seconds replaces it")
	}

	written := unixNow()
	e.WriteIDs("a.parquet", 0, 100)
	fixture.WaitFor(t, 20*time.Second, "100 rows counted", func() bool { v, _ := scrape(t, base, rowsOut); return v == 100 })
	first, ok := scrape(t, base, last)
	if now := unixNow(); !ok || first < written || first > now {
		t.Fatalf("the last commit at %.3f (present %v), want between the file's writing at %.3f and now, %.3f", first, ok, written, now)
	}
	if n := len(e.IDs("db.t")); n != 100 {
		t.Fatalf("the table holds %d ids, the metrics counted 100", n)
	}

	e.WriteIDs("b.parquet", 100, 50)
	fixture.WaitFor(t, 20*time.Second, "150 rows counted", func() bool { v, _ := scrape(t, base, rowsOut); return v == 150 })
	if second, _ := scrape(t, base, last); second <= first {
		t.Fatalf("the time of the last commit went from %.3f to %.3f across a commit", first, second)
	}
	if n := len(e.IDs("db.t")); n != 150 {
		t.Fatalf("the table holds %d ids, the metrics counted 150", n)
	}
	var snaps []fixture.Snapshot
	if err := json.Unmarshal([]byte(e.OK("table", "snapshots", "db.t", "--json").Stdout), &snaps); err != nil {
		t.Fatal(err)
	}
	if v, _ := scrape(t, base, `floe_snapshots_committed_total{table="db.t"}`); int(v) != len(snaps) {
		t.Fatalf("floe_snapshots_committed_total %v, the table has %d snapshots", v, len(snaps))
	}
	if v, _ := scrape(t, base, "floe_input_rows_total"); v != 150 {
		t.Fatalf("floe_input_rows_total %v, want 150", v)
	}
	if v, _ := scrape(t, base, "floe_batch_duration_seconds_count"); v < 2 {
		t.Fatalf("floe_batch_duration_seconds_count %v, want a sample per batch (at least 2)", v)
	}
	if err := stream.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := stream.Wait(); err != nil {
		t.Fatalf("stream: %v", err)
	}
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// --metrics-listen on an address that cannot be bound is refused before
// any batch runs, naming the key and the flag.
func TestMetricsListenBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Run(e.StreamArgs("db.t", "--trigger", "once", "--metrics-listen", "256.0.0.1:1")...)
	if r.Code == 0 || !strings.Contains(r.Stderr, "(--metrics-listen) 256.0.0.1:1") {
		t.Fatalf("want a refusal naming --metrics-listen, got %s", r)
	}
	// The pipeline file's metrics.listen is the same key.
	path := filepath.Join(e.Dir, "p.yaml")
	cfg := "source: {path: " + e.Landing + ", format: parquet}\nsink: {table: db.t}\ncheckpoint: " + e.Ckpt + "\nmetrics: {listen: \"256.0.0.1:2\"}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("run", path); r.Code == 0 || !strings.Contains(r.Stderr, "metrics.listen (--metrics-listen) 256.0.0.1:2") {
		t.Fatalf("metrics.listen in the file: want a refusal naming it, got %s", r)
	}
}

// /readyz follows the catalog: with the stream's catalog on a PostgreSQL
// server that is stopped, the next batch fails and /readyz answers 503;
// once the server is back the batch commits and /readyz answers 200. Every
// row lands once.
func TestReadinessFollowsCatalog(t *testing.T) {
	t.Parallel()
	pg := fixture.PostgresServer(t)
	e := newEnv(t)
	cat := []string{"--catalog-uri", pg.URL}
	stream, base := e.metricsStream(append(e.StreamArgs("db.t", "--trigger", "100ms", "--maintenance=false"), cat...)...)
	defer stream.Process.Kill()
	rowsOut := `floe_output_rows_total{table="db.t"}`
	e.WriteIDs("a.parquet", 0, 100)
	fixture.WaitFor(t, 30*time.Second, "100 rows committed", func() bool { v, _ := scrape(t, base, rowsOut); return v == 100 })

	pg.Stop()
	e.WriteIDs("b.parquet", 100, 50)
	fixture.WaitFor(t, 60*time.Second, "/readyz 503 with the catalog down", func() bool { return status(t, base+"/readyz") == http.StatusServiceUnavailable })
	if c := status(t, base+"/healthz"); c != http.StatusOK {
		t.Fatalf("/healthz with the catalog down: %d", c)
	}
	pg.Start()
	fixture.WaitFor(t, 90*time.Second, "/readyz 200 and 150 rows once the catalog is back", func() bool {
		v, _ := scrape(t, base, rowsOut)
		return v == 150 && status(t, base+"/readyz") == http.StatusOK
	})
	if v, _ := scrape(t, base, "floe_batch_failures_total"); v < 1 {
		t.Fatalf("floe_batch_failures_total %v after an outage", v)
	}
	if err := stream.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := stream.Wait(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	r := e.OK(append([]string{"scan", "db.t", "--output-format", "csv"}, cat...)...)
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		ids[strings.SplitN(l, ",", 2)[0]] = true
	}
	if len(ids) != 150 || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 150 {
		t.Fatalf("%d distinct ids in %d rows, want 150 once each", len(ids), strings.Count(strings.TrimSpace(r.Stdout), "\n"))
	}
}

// With metrics.stale-after, /readyz answers 503 while a batch hangs in its
// commit (paused by the test build's hook) and 200 once it finishes; the
// maintenance between batches and the commits' retries are counted.
func TestReadinessStaleBatchAndMaintenanceRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pause := filepath.Join(e.Dir, "pause")
	if err := os.MkdirAll(pause, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.Dir, "p.yaml")
	cfg := "source: {path: " + e.Landing + ", format: parquet}\nsink: {table: db.t}\ncheckpoint: " + e.Ckpt +
		"\ntrigger: 100ms\nmetrics: {listen: \"127.0.0.1:0\", stale-after: 1s}\nmaintenance: {expire-snapshots: {every-commits: 1}}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	stream, base := e.startServing(metricsAddr, []string{"FLOE_TEST_PAUSE_IN_CATALOG_COMMIT=" + pause}, "run", path)
	defer stream.Process.Kill()
	time.Sleep(1500 * time.Millisecond) // idle polls keep it ready
	if c := status(t, base+"/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz while polling an empty landing directory: %d", c)
	}
	e.WriteIDs("a.parquet", 0, 100)
	fixture.WaitFor(t, 20*time.Second, "the first commit paused", func() bool {
		_, err := os.Stat(filepath.Join(pause, "paused"))
		return err == nil
	})
	fixture.WaitFor(t, 10*time.Second, "/readyz 503 while the commit hangs", func() bool { return status(t, base+"/readyz") == http.StatusServiceUnavailable })
	if err := os.WriteFile(filepath.Join(pause, "resume"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fixture.WaitFor(t, 20*time.Second, "100 rows counted", func() bool { v, _ := scrape(t, base, `floe_output_rows_total{table="db.t"}`); return v == 100 })
	if c := status(t, base+"/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz after the batch finished: %d", c)
	}
	e.WriteIDs("b.parquet", 100, 100)
	fixture.WaitFor(t, 20*time.Second, "200 rows counted", func() bool { v, _ := scrape(t, base, `floe_output_rows_total{table="db.t"}`); return v == 200 })
	expired := `floe_maintenance_runs_total{result="ok",table="db.t",task="expire-snapshots"}`
	fixture.WaitFor(t, 20*time.Second, "expire-snapshots runs counted", func() bool { v, _ := scrape(t, base, expired); return v >= 1 })
	if v, ok := scrape(t, base, `floe_commit_retries_total{table="db.t"}`); !ok || v != 0 {
		t.Fatalf("floe_commit_retries_total %v (present %v); a lone writer commits at its first attempt", v, ok)
	}
	if d := fixture.Exact(e.TableIDs("db.t"), 0, 200); d != "" {
		t.Fatal(d)
	}
}
