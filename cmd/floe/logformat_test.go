package main_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// --log-format json: every line on stderr is a JSON object; each batch is a
// line "batch" with the progress record's fields, its snapshot id exact;
// warnings are level WARN.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.WriteIDs("sub/b.parquet", 100, 10) // not read without --recursive: a warning
	r := e.OK(e.StreamArgs("db.t", "--log-format", "json")...)
	var batch map[string]any
	warned := false
	for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		dec := json.NewDecoder(bytes.NewReader([]byte(l)))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("stderr line is not JSON: %q", l)
		}
		switch {
		case m["msg"] == "batch":
			batch = m
		case m["level"] == "WARN" && strings.Contains(m["msg"].(string), "--recursive"):
			warned = true
		}
	}
	if batch == nil || !warned {
		t.Fatalf("want a batch line and a WARN line naming --recursive:\n%s", r.Stderr)
	}
	snaps := e.Snapshots("db.t")
	sink, _ := batch["sink"].(map[string]any)
	if len(snaps) != 1 || sink == nil || sink["snapshotId"].(json.Number).String() != jsonNumber(snaps[0].SnapshotID) {
		t.Fatalf("batch line's snapshot %v, the table's %+v", sink, snaps)
	}
	if batch["numInputRows"].(json.Number).String() != "100" || batch["batchId"].(json.Number).String() != "0" {
		t.Fatalf("batch line %v, want batch 0 of 100 rows", batch)
	}
	if r := e.Run(e.StreamArgs("db.t", "--log-format", "json", "--progress", "bar")...); r.Code != 2 || !strings.Contains(r.Stderr, "--progress") {
		t.Fatalf("--log-format json with --progress bar: want a usage error, got %s", r)
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
