package maintenance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/maintenance"
)

func TestRemoveOrphanFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.land("a", 3)
	e.mustRun("a")
	// Data files written and never committed, as a kill between writing
	// and committing leaves them.
	var written []string
	rec := fixture.IDRecord(1_000_000, 50)
	files := table.WriteRecords(context.Background(), e.table(), rec.Schema(), func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
	for df, err := range files {
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, localPath(df.FilePath()))
	}
	for _, p := range written {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("uncommitted data file: %v", err)
		}
	}
	tbl := e.table()
	ids := e.ids()
	loc := localPath(tbl.Location())
	// A metadata file no commit made current.
	stale := filepath.Join(loc, "metadata", "00099-5e0d6a9c-0000-4000-8000-000000000000.metadata.json")
	b, err := os.ReadFile(localPath(tbl.MetadataLocation()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Everything is two hours old, but one orphan just written.
	old := time.Now().Add(-2 * time.Hour)
	for p := range e.files() {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	young := filepath.Join(loc, "data", "00000-young-orphan.parquet")
	if err := os.WriteFile(young, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(written), stale)
	slices.Sort(want)

	opts := maintenance.NewOrphanOptions()
	opts.OlderThan, opts.DryRun = time.Hour, true
	before := e.files()
	dry, err := maintenance.RemoveOrphanFiles(context.Background(), tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := localPaths(dry.Paths); !slices.Equal(got, want) {
		t.Fatalf("dry run found %v, want %v", got, want)
	}
	if len(e.files()) != len(before) || dry.Deleted != 0 {
		t.Fatal("dry run deleted files")
	}

	opts.DryRun = false
	res, err := maintenance.RemoveOrphanFiles(context.Background(), tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := localPaths(res.Paths); !slices.Equal(got, want) || res.Deleted != len(want) || res.Bytes == 0 {
		t.Fatalf("removed %v (%d deleted, %d bytes), want %v", got, res.Deleted, res.Bytes, want)
	}
	after := e.files()
	for p := range before {
		_, kept := after[p]
		if orphan := slices.Contains(want, p); orphan == kept {
			t.Errorf("%s: orphan %v, still there %v", p, orphan, kept)
		}
	}
	if _, ok := after[young]; !ok {
		t.Error("the young orphan was removed")
	}
	for m := range tbl.Metadata().PreviousFiles() {
		if _, ok := after[localPath(m.MetadataFile)]; !ok {
			t.Errorf("metadata log file %s was removed", m.MetadataFile)
		}
	}
	if got := e.ids(); !slices.Equal(got, ids) {
		t.Fatalf("table holds %d rows, %d before", len(got), len(ids))
	}
	// The query still runs on.
	e.land("a", 1)
	e.mustRun("a")
	if got := e.ids(); len(got) != len(ids)+100 {
		t.Fatalf("%d rows after the re-run, want %d", len(got), len(ids)+100)
	}
}

func localPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = localPath(p)
	}
	slices.Sort(out)
	return out
}

func TestOrphanOptionsValidate(t *testing.T) {
	t.Parallel()
	err := maintenance.OrphanOptions{OlderThan: -time.Second}.Validate()
	if !errors.Is(err, maintenance.ErrOrphanOptions) || !strings.Contains(err.Error(), "older-than") {
		t.Fatalf("Validate: %v", err)
	}
	err = maintenance.OrphanOptions{OlderThan: time.Minute}.Validate()
	if !errors.Is(err, maintenance.ErrOrphanOptions) || !strings.Contains(err.Error(), "--writers-stopped") {
		t.Fatalf("Validate of a minute: %v", err)
	}
	for _, o := range []maintenance.OrphanOptions{{OlderThan: time.Hour}, {WritersStopped: true}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", o, err)
		}
	}
}
