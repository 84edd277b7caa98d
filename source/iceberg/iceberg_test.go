package iceberg_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
	_ "github.com/floe-io/floe/source/files"
	_ "github.com/floe-io/floe/source/iceberg"
)

type env struct {
	t       *testing.T
	dir     string
	cat     catalog.Catalog
	landing string
	nfiles  int
	nextID  int64
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	cat, _ := fixture.CatalogAt(t, filepath.Join(dir, "warehouse"))
	return &env{t: t, dir: dir, cat: cat, landing: filepath.Join(dir, "landing")}
}

// run runs an available-now pipeline and returns its batches' row counts.
func (e *env) run(src config.Source, sink, ckpt string) []int64 {
	e.t.Helper()
	batches, _, err := e.runWith(src, sink, ckpt, config.Trigger{})
	if err != nil {
		e.t.Fatal(err)
	}
	return batches
}

// runWith runs a pipeline with the trigger (available-now when zero) and
// returns its batches' row counts and its warnings.
func (e *env) runWith(src config.Source, sink, ckpt string, trig config.Trigger) (batches []int64, warnings []string, err error) {
	cfg := &config.Pipeline{
		Source:     src,
		Sink:       config.Sink{Table: sink},
		Checkpoint: filepath.Join(e.dir, ckpt),
		Trigger:    trig,
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{
		Catalog:    e.cat,
		OnProgress: func(pr floe.Progress) { batches = append(batches, pr.NumInputRows) },
		OnWarning:  func(w string) { warnings = append(warnings, w) },
	})
	if err != nil {
		return nil, nil, err
	}
	defer p.Close()
	_, err = p.Run(ctx)
	return batches, warnings, err
}

// appendA lands n files of 100 rows each in table db.a, one append per file.
func (e *env) appendA(n int) {
	e.t.Helper()
	for range n {
		e.appendRows(100)
	}
}

// appendRows appends one file of n rows to db.a, its ids following the
// previous file's.
func (e *env) appendRows(n int64) {
	e.t.Helper()
	if err := fixture.WriteIDFile(filepath.Join(e.landing, fmt.Sprintf("part-%03d.parquet", e.nfiles)), e.nextID, n); err != nil {
		e.t.Fatal(err)
	}
	e.nfiles++
	e.nextID += n
	e.run(config.Source{Path: e.landing, Format: "parquet", MaxFilesPerTrigger: 1}, "db.a", "ck-a")
}

func (e *env) table(name string) *table.Table {
	e.t.Helper()
	ident, _ := floe.ParseIdent(name)
	tbl, err := e.cat.LoadTable(context.Background(), ident)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

// ids returns the sorted ids of a table.
func (e *env) ids(name string) []int64 {
	e.t.Helper()
	ctx := context.Background()
	ident, _ := floe.ParseIdent(name)
	tbl, err := e.cat.LoadTable(ctx, ident)
	if err != nil {
		e.t.Fatal(err)
	}
	_, recs, err := scan.Table(ctx, tbl, scan.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			e.t.Fatal(err)
		}
		col := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
		ids = append(ids, col.Int64Values()...)
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

func (e *env) level(a, b string) {
	e.t.Helper()
	ia, ib := e.ids(a), e.ids(b)
	if !slices.Equal(ia, ib) {
		e.t.Fatalf("%s has %d rows, %s has %d; ids differ", a, len(ia), b, len(ib))
	}
}

func TestIcebergSourceExactlyOnce(t *testing.T) {
	e := newEnv(t)
	e.appendA(3)
	if n := len(e.ids("db.a")); n != 300 {
		t.Fatalf("table a has %d rows, want 300", n)
	}
	src := config.Source{Type: "iceberg", Table: "db.a"}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{300}) {
		t.Fatalf("first run batches %v, want [300]", got)
	}
	e.level("db.a", "db.b")
	if got := e.run(src, "db.b", "ck-b"); len(got) != 0 {
		t.Fatalf("re-run batches %v, want none", got)
	}
	e.level("db.a", "db.b")
	e.appendA(1)
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("run after a fourth append: batches %v, want [100]", got)
	}
	e.level("db.a", "db.b")
	if n := len(e.ids("db.b")); n != 400 {
		t.Fatalf("table b has %d rows, want 400", n)
	}
}

func TestIcebergSourceMaxRowsPerMicroBatch(t *testing.T) {
	e := newEnv(t)
	e.appendA(3)
	// Soft: the file crossing the limit is included.
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"streaming-max-rows-per-micro-batch": "150"}}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{200, 100}) {
		t.Fatalf("batches %v, want [200 100]", got)
	}
	e.level("db.a", "db.b")
}

func TestIcebergSourceOverwriteSnapshot(t *testing.T) {
	e := newEnv(t)
	e.appendA(1)
	// A complete-mode run replaces a's rows: not an append.
	if err := fixture.WriteIDFile(filepath.Join(e.dir, "full", "all.parquet"), 1000, 10); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Pipeline{
		Source:     config.Source{Path: filepath.Join(e.dir, "full"), Format: "parquet"},
		Sink:       config.Sink{Table: "db.a", Mode: "complete"},
		Checkpoint: filepath.Join(e.dir, "ck-full"),
	}
	cfg.SetDefaults()
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	p.Close()

	src := config.Source{Type: "iceberg", Table: "db.a"}
	cfg = &config.Pipeline{Source: src, Sink: config.Sink{Table: "db.b"}, Checkpoint: filepath.Join(e.dir, "ck-b")}
	cfg.SetDefaults()
	p, err = floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(ctx)
	p.Close()
	if err == nil || !strings.Contains(err.Error(), "streaming-skip-overwrite-snapshots") {
		t.Fatalf("overwrite snapshot without the skip option: got %v, want an error naming streaming-skip-overwrite-snapshots", err)
	}
	// With the option the overwrite is skipped whole: b gets a's first append.
	src.Options = map[string]string{"streaming-skip-overwrite-snapshots": "true"}
	if got := e.run(src, "db.b", "ck-b"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("batches %v, want [100]", got)
	}
	if ids := e.ids("db.b"); len(ids) != 100 || ids[0] != 0 || ids[99] != 99 {
		t.Fatalf("table b has %d rows, want ids 0..99", len(ids))
	}
}

func TestIcebergSourceStreamFromTimestamp(t *testing.T) {
	e := newEnv(t)
	e.appendA(3)
	ident, _ := floe.ParseIdent("db.a")
	tbl, err := e.cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 3 {
		t.Fatalf("table a has %d snapshots, want 3", len(snaps))
	}
	from := snaps[1].TimestampMs
	if snaps[0].TimestampMs == from {
		t.Skip("the first two snapshots share a millisecond")
	}
	src := config.Source{Type: "iceberg", Table: "db.a", Options: map[string]string{"stream-from-timestamp": fmt.Sprint(from)}}
	e.run(src, "db.b", "ck-b")
	ids := e.ids("db.b")
	if len(ids) != 200 || ids[0] != 100 {
		t.Fatalf("table b has %d rows from id %v, want the 200 rows of the last two appends", len(ids), ids[:min(1, len(ids))])
	}
}
