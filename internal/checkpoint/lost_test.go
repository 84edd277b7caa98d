package checkpoint_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/source"
	_ "github.com/floe-io/floe/source/files"
	_ "github.com/floe-io/floe/source/iceberg"
	_ "github.com/floe-io/floe/source/kafka"
)

// outIdent is the table every pipeline of the tests below writes.
var outIdent = table.Identifier{"db", "out"}

// A source kind, and the input each of its pipelines reads: ten rows.
type sourceKind struct {
	name  string
	input func(t *testing.T, cat catalog.Catalog) config.Source
	// lost is what a lost checkpoint of a query that committed comes to.
	lost string
}

var sourceKinds = []sourceKind{
	{"kafka", func(t *testing.T, _ catalog.Catalog) config.Source {
		c := kafkatest.Start(t, "events", 2)
		recs := make([]*kgo.Record, 10)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: c.Name("events"), Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id":%d}`, i)}
		}
		c.Produce(t, recs...)
		return config.Source{Type: "kafka", Format: "json", Options: map[string]string{"kafka.bootstrap.servers": c.Addr(), "subscribe": c.Name("events")}}
	}, "resume"},
	{"iceberg", func(t *testing.T, cat catalog.Catalog) config.Source {
		fixture.CreateTable(t, cat, table.Identifier{"db", "src"}, fixture.IDSchema)
		if err := fixture.AppendIDs(t.Context(), cat, "db.src", 0, 10); err != nil {
			t.Fatal(err)
		}
		return config.Source{Type: "iceberg", Table: "db.src"}
	}, "resume"},
	{"files", func(t *testing.T, _ catalog.Catalog) config.Source {
		dir := t.TempDir()
		if err := fixture.WriteIDFile(filepath.Join(dir, "a.parquet"), 0, 10); err != nil {
			t.Fatal(err)
		}
		return config.Source{Type: "files", Path: dir, Format: "parquet"}
	}, "refuse"},
}

// pipeline is one pipeline writing db.out of a catalog of its own, its
// checkpoint not there yet.
func pipeline(t *testing.T, k sourceKind) (*config.Pipeline, catalog.Catalog) {
	t.Helper()
	cat, catCfg := fixture.CatalogAt(t, filepath.Join(t.TempDir(), "warehouse"))
	return &config.Pipeline{Catalog: catCfg, Source: k.input(t, cat), Sink: config.Sink{Table: "db.out", Mode: "append"},
		Checkpoint: filepath.Join(t.TempDir(), "ckpt"), Trigger: config.Trigger{Kind: config.TriggerAvailableNow}}, cat
}

// commitBatch commits batch 0 of query q to db.out as the engine does:
// the source plans its whole input, and the commit records the batch's end
// offset and the source's account of its input. It returns the end.
func commitBatch(t *testing.T, cfg *config.Pipeline, cat catalog.Catalog, q string) source.Offset {
	t.Helper()
	ctx := t.Context()
	src, err := source.New(cfg.Source, source.Env{StateDir: filepath.Join(t.TempDir(), "sources", "0"), Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := src.InitialOffset()
	end, err := src.LatestOffset(ctx, start, source.ReadLimit{})
	if err != nil || bytes.Equal(end, start) {
		t.Fatalf("planning the input: end %s, %v", end, err)
	}
	rec := &commit.Record{Batch: 0, Source: src.Description(), Offset: end}
	if r, ok := src.(source.Recorder); ok {
		if rec.Input, err = r.BatchInput(nil, start, end); err != nil {
			t.Fatal(err)
		}
	}
	c := &commit.Committer{Catalog: cat, Ident: outIdent, QueryID: q, Source: src.Description()}
	tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := fixture.IDRecord(0, 10)
	defer rows.Release()
	res, err := (&write.Writer{Table: tbl, FilePrefix: "b0"}).Write(ctx, []ingest.Part{fixture.Part{PartName: "b0", Records: []arrow.RecordBatch{rows}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files, Record: rec}); err != nil {
		t.Fatal(err)
	}
	return end
}

// decide runs the rule and tells what it came to: "resume", "refuse" or
// "new" (nothing done), failing the test when it left anything behind that
// it should not have.
func decide(t *testing.T, cfg *config.Pipeline, cat catalog.Catalog) (string, checkpoint.Rebuilt, error) {
	t.Helper()
	opened := false
	r, resumed, err := checkpoint.ResumeLost(t.Context(), checkpoint.OS, cfg, func() (catalog.Catalog, error) {
		opened = true
		return cat, nil
	}, nil)
	_, statErr := os.Stat(cfg.Checkpoint)
	aside, _ := filepath.Glob(cfg.Checkpoint + ".*")
	switch {
	case resumed && err == nil:
		if statErr != nil {
			t.Fatalf("resumed, and the checkpoint is not there: %v", statErr)
		}
		return "resume", r, nil
	case !errors.Is(statErr, os.ErrNotExist):
		t.Fatalf("nothing resumed (%v), and the checkpoint is there: %v", err, statErr)
	case len(aside) > 0:
		t.Fatalf("something was set aside beside the checkpoint: %v", aside)
	case err != nil:
		return "refuse", r, err
	case opened && (cfg.Sink.Console() || cfg.Sink.IsTemplate() || cfg.AllowNewQuery):
		t.Fatal("the catalog was opened where no table's record could matter")
	}
	return "new", r, nil
}

// The rule for a checkpoint directory that is not there, source by
// source: a query that committed resumes from the table's record where its
// source's offsets alone fix its position (Kafka, the Iceberg source) and
// is refused, naming floe checkpoint rebuild, where they do not (landing
// files); a pipeline whose table does not exist yet, a table the catalog
// lost (refused later, when the run would create it again), and a run
// that asks for a new query are new queries, with nothing done.
func TestLostCheckpointRule(t *testing.T) {
	t.Parallel()
	for _, k := range sourceKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			t.Run("lost", func(t *testing.T) {
				t.Parallel()
				cfg, cat := pipeline(t, k)
				end := commitBatch(t, cfg, cat, "q1")
				got, r, err := decide(t, cfg, cat)
				if got != k.lost {
					t.Fatalf("a lost checkpoint came to %s (%v), want %s", got, err, k.lost)
				}
				switch got {
				case "resume":
					st, err := checkpoint.Read(checkpoint.OS, cfg.Checkpoint)
					if err != nil {
						t.Fatal(err)
					}
					if r.QueryID != "q1" || r.BatchID != 0 || st.Metadata.ID != "q1" || st.LatestCommit == nil || st.LatestCommit.BatchID != 0 ||
						st.LatestOffsets == nil || !bytes.Equal(st.LatestOffsets.End, end) || st.PendingBatch != nil {
						t.Fatalf("resumed %+v into checkpoint %+v; want query q1 at batch 0, committed, ending at %s", r, st, end)
					}
				case "refuse":
					if !errors.Is(err, ingest.ErrQueryConflict) || !strings.Contains(err.Error(), "query q1") || !strings.Contains(err.Error(), "floe checkpoint rebuild") {
						t.Fatalf("the refusal does not name the query and floe checkpoint rebuild as a conflict: %v", err)
					}
				}
			})
			t.Run("allow-new-query", func(t *testing.T) {
				t.Parallel()
				cfg, cat := pipeline(t, k)
				commitBatch(t, cfg, cat, "q1")
				cfg.AllowNewQuery = true
				if got, _, err := decide(t, cfg, cat); got != "new" {
					t.Fatalf("with allow-new-query: %s (%v), want a new query", got, err)
				}
			})
			t.Run("new pipeline", func(t *testing.T) {
				t.Parallel()
				cfg, cat := pipeline(t, k)
				if got, _, err := decide(t, cfg, cat); got != "new" {
					t.Fatalf("before the table exists: %s (%v), want a new query", got, err)
				}
				if _, err := cat.LoadTable(t.Context(), outIdent); !errors.Is(err, catalog.ErrNoSuchTable) {
					t.Fatalf("the table is there after the rule: %v", err)
				}
			})
			t.Run("table lost by the catalog", func(t *testing.T) {
				t.Parallel()
				cfg, cat := pipeline(t, k)
				commitBatch(t, cfg, cat, "q1")
				if err := cat.DropTable(t.Context(), outIdent); err != nil {
					t.Fatal(err)
				}
				if m := checkpoint.DefaultMetadataFile(cfg, outIdent); m == "METADATA_FILE" {
					t.Fatal("the dropped table's metadata files are gone: the catalog did not lose the table, it deleted it")
				}
				if got, _, err := decide(t, cfg, cat); got != "new" {
					t.Fatalf("with the table lost by its catalog: %s (%v), want the run to go on to the refusal of its creation", got, err)
				}
			})
			t.Run("checkpoint there", func(t *testing.T) {
				t.Parallel()
				cfg, cat := pipeline(t, k)
				commitBatch(t, cfg, cat, "q1")
				if err := os.MkdirAll(cfg.Checkpoint, 0o755); err != nil {
					t.Fatal(err)
				}
				before := fixture.Tree(t, cfg.Checkpoint)
				if _, resumed, err := checkpoint.ResumeLost(t.Context(), checkpoint.OS, cfg, func() (catalog.Catalog, error) {
					t.Error("the catalog was opened for a checkpoint that is there")
					return cat, nil
				}, nil); resumed || err != nil {
					t.Fatalf("a checkpoint that is there: resumed %v, %v", resumed, err)
				}
				if after := fixture.Tree(t, cfg.Checkpoint); len(after) != len(before) {
					t.Fatalf("the checkpoint changed: %v, was %v", after, before)
				}
			})
			for _, sink := range []config.Sink{{Type: "console"}, {Table: "db.{kind}", Mode: "append"}} {
				t.Run("no one table "+sink.Type+sink.Table, func(t *testing.T) {
					t.Parallel()
					cfg, cat := pipeline(t, k)
					commitBatch(t, cfg, cat, "q1")
					cfg.Sink = sink
					if got, _, err := decide(t, cfg, cat); got != "new" {
						t.Fatalf("%s: %s (%v), want nothing done", sink.Table, got, err)
					}
				})
			}
		})
	}
}

// A Kafka pipeline with kafka.group.id resumes like any other under an
// available-now trigger; under a processing-time trigger each process is a
// worker of a cluster, whose checkpoint holds no progress: nothing is
// done, whatever the table records.
func TestLostCheckpointOfClusterWorker(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		trigger, want string
	}{{config.TriggerAvailableNow, "resume"}, {config.TriggerProcessingTime, "new"}} {
		t.Run(c.trigger, func(t *testing.T) {
			t.Parallel()
			cfg, cat := pipeline(t, sourceKinds[0])
			commitBatch(t, cfg, cat, "q1")
			cfg.Source.Options["kafka.group.id"] = "g"
			cfg.Trigger = config.Trigger{Kind: c.trigger}
			if got, _, err := decide(t, cfg, cat); got != c.want {
				t.Fatalf("%s: %s (%v), want %s", c.trigger, got, err, c.want)
			}
		})
	}
}
