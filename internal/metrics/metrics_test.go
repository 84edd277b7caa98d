package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// /readyz turns 503, with the failure, when a batch fails and 200 again
// once one succeeds; /healthz answers throughout.
func TestReadiness(t *testing.T) {
	q := New(0)
	srv := httptest.NewServer(q.Handler())
	defer srv.Close()
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before any batch: %d", code)
	}
	q.Failed(errors.New("open catalog: connection refused"))
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Fatalf("/readyz after a failure: %d %q", code, body)
	}
	if code, _ := get(t, srv.URL+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz after a failure: %d", code)
	}
	q.Committed(Batch{InputRows: 3, Duration: time.Second, Tables: []Table{{Name: "db.t", Rows: 3, DataFiles: 1, SnapshotID: 7}}, BacklogFiles: -1})
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after a batch succeeded: %d", code)
	}
	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{"floe_batch_failures_total 1", `floe_output_rows_total{table="db.t"} 3`, "floe_batches_total 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// /readyz turns 503 when no batch or poll has finished for the stale
// limit, and 200 again after a poll; retries, Kafka lag and maintenance
// runs are reported.
func TestStalenessAndCounters(t *testing.T) {
	q := New(200 * time.Millisecond)
	srv := httptest.NewServer(q.Handler())
	defer srv.Close()
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz at start: %d", code)
	}
	time.Sleep(300 * time.Millisecond)
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no batch or poll") {
		t.Fatalf("/readyz after 300ms without a batch or poll: %d %q", code, body)
	}
	q.Polled()
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after a poll: %d", code)
	}
	q.Committed(Batch{Tables: []Table{{Name: "db.t", Rows: 1, DataFiles: 1, SnapshotID: 7, Retries: 2}}, BacklogFiles: -1,
		KafkaLag: map[string]map[string]int64{"events": {"0": 5, "1": 0}}})
	q.Maintained(Maintenance{Table: "db.t", Task: "expire-snapshots", Duration: time.Millisecond})
	q.Maintained(Maintenance{Table: "db.t", Task: "rewrite-data-files", Duration: time.Millisecond, Failed: true})
	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`floe_commit_retries_total{table="db.t"} 2`,
		`floe_kafka_lag_offsets{partition="0",topic="events"} 5`,
		`floe_kafka_lag_offsets{partition="1",topic="events"} 0`,
		`floe_maintenance_runs_total{result="ok",table="db.t",task="expire-snapshots"} 1`,
		`floe_maintenance_runs_total{result="failed",table="db.t",task="rewrite-data-files"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
