package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// checkpointNotice matches the notice of a checkpoint resumed from its
// table's record.
var checkpointNotice = regexp.MustCompile(`checkpoint \S+ was missing; query (\S*) resumes from table \S+'s record of batch (-?\d+)`)

// firstRunQuiet fails unless a pipeline's first run said nothing about its
// checkpoint and set nothing aside beside it.
func firstRunQuiet(t *testing.T, e *env, r fixture.Result) {
	t.Helper()
	if strings.Contains(r.Stderr, "checkpoint") {
		t.Fatalf("the first run of a new pipeline speaks of its checkpoint:\n%s", r.Stderr)
	}
	aside, err := filepath.Glob(filepath.Join(filepath.Dir(e.Ckpt), "*.damaged-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(aside) > 0 {
		t.Fatalf("the first run of a new pipeline set aside %v", aside)
	}
}

// The first run of a new pipeline, whatever its source, is new, not lost:
// no notice about its checkpoint and nothing set aside; a Kafka pipeline
// that really lost its checkpoint gets its one-line notice.
func TestFirstRunNoCheckpointNotice(t *testing.T) {
	t.Parallel()
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.WriteIDs("a.parquet", 0, 100)
		firstRunQuiet(t, e, e.OK(e.StreamArgs("db.t", "--trigger", "available-now")...))
		if msg := fixture.Exact(e.TableIDs("db.t"), 0, 100); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("iceberg", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.WriteIDs("a.parquet", 0, 100)
		e.OK(e.StreamArgs("db.src", "--trigger", "available-now", "--checkpoint", e.Ckpt+"-src")...)
		firstRunQuiet(t, e, e.OK("stream", "--source-table", "db.src", "--table", "db.dst", "--checkpoint", e.Ckpt, "--trigger", "available-now"))
		if msg := fixture.Exact(e.TableIDs("db.dst"), 0, 100); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("kafka", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c := kafkatest.Start(t, "events", 2)
		produceIDs(t, c, c.Name("events"), 2, 0, 100)
		firstRunQuiet(t, e, e.OK(kafkaStream(e, c)...))
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, 100); msg != "" {
			t.Fatal(msg)
		}
		// A checkpoint lost after the table holds the query's record is
		// lost, not new: one line says so, naming the query and batch.
		if err := os.RemoveAll(e.Ckpt); err != nil {
			t.Fatal(err)
		}
		produceIDs(t, c, c.Name("events"), 2, 100, 100)
		r := e.OK(kafkaStream(e, c)...)
		m := checkpointNotice.FindAllStringSubmatch(r.Stderr, -1)
		if len(m) != 1 || m[0][1] == "" || m[0][2] != "0" {
			t.Fatalf("want one notice naming the query and batch 0, got %q in:\n%s", m, r.Stderr)
		}
		if msg := fixture.Exact(e.TableIDs("db.events"), 0, 200); msg != "" {
			t.Fatal(msg)
		}
	})
}
