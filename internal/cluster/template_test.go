package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
)

// failingCatalog refuses every commit to one table while armed, as a
// coordinator that dies after committing some of a batch's tables leaves
// them.
type failingCatalog struct {
	catalog.Catalog
	table string
	armed atomic.Bool
	// lose names a table whose next commit is made and its answer lost.
	lose atomic.Pointer[string]
}

func (c *failingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), func(ctx context.Context) (iceio.IO, error) { return t.FS(ctx) }, c), nil
}

func (c *failingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	name := strings.Join(ident, ".")
	if c.armed.Load() && name == c.table {
		return nil, "", errors.New("injected: the catalog is out of reach")
	}
	if l := c.lose.Load(); l != nil && *l == name && c.lose.CompareAndSwap(l, nil) {
		if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, updates); err != nil {
			return nil, "", err
		}
		return nil, "", errors.New("injected: the commit's answer is lost")
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

// A template sink's coordinator that fails after committing some of a
// batch's tables leaves the batch in the state table; the next
// coordinator commits it to the tables that lack it, and only to those,
// before it commits anything else. A commit whose answer is lost, of the
// state table or of a table, is found made. A state table dropped and
// created again stops the coordinator.
func TestTemplateBatchFinishedAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSimulation(t, 1)
	inner, _ := fixture.CatalogAt(t, t.TempDir())
	cat := &failingCatalog{Catalog: inner, table: "db.b"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	tables := map[string]*table.Table{}
	for _, name := range []string{"a", "b", "c", "floe_cluster_sim"} {
		tables["db."+name] = fixture.CreateTable(t, inner, table.Identifier{"db", name}, schema, catalog.WithProperties(iceberg.Properties{table.CommitNumRetriesKey: "0"}))
	}
	query := cluster.QueryID("sim")
	coordinator := func() cluster.Coordinator {
		return cluster.Coordinator{
			Committer:    &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "floe_cluster_sim"}, QueryID: query, Source: "KafkaV2[Subscribe[events]]"},
			Destinations: &cluster.Destinations{Catalog: cat, QueryID: query, Source: "KafkaV2[Subscribe[events]]"},
		}
	}
	from := int64(0)
	publish := func() {
		var files []ingest.DataFile
		for _, name := range []string{"db.a", "db.b", "db.c"} {
			b, err := iceberg.NewDataFileBuilder(tables[name].Spec(), iceberg.EntryContentData, fmt.Sprintf("file:///sim/%s-%d.parquet", name, from), iceberg.ParquetFile, nil, nil, nil, 10, 1024)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, ingest.DataFile{Table: name, Path: b.Build().FilePath(), Rows: 10, File: b.Build()})
		}
		ev, err := cluster.NewTemplateEvent(tables, files, []cluster.Range{rng(0, from, from+10)})
		if err != nil {
			t.Fatal(err)
		}
		ev.Worker, ev.Generation = "w", 1
		v, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.cl.ProduceSync(ctx, &kgo.Record{Topic: s.control, Partition: 0, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		from += 10
	}
	files := func(name string) int {
		tbl, err := inner.LoadTable(ctx, strings.Split(name, "."))
		if err != nil {
			t.Fatal(err)
		}
		return len(fixture.LiveDataFiles(t, tbl))
	}

	publish()
	first := coordinator()
	cat.armed.Store(true)
	if _, err := first.Step(ctx, 1, s.read, time.Now()); err == nil {
		t.Fatal("the step committed table db.b, which refuses commits")
	}
	cat.armed.Store(false)
	if a, b, c := files("db.a"), files("db.b"), files("db.c"); a != 1 || b != 0 || c != 0 {
		t.Fatalf("after the failed step: %d, %d, %d files in a, b, c; want 1, 0, 0", a, b, c)
	}

	publish()
	next := coordinator()
	done, err := next.Step(ctx, 2, s.read, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if done.Events != 1 || done.Batch != 1 || len(done.Tables) != 3 {
		t.Fatalf("the next step committed %+v; want batch 1 of the second event to all three tables", done)
	}
	for _, name := range []string{"db.a", "db.b", "db.c"} {
		if n := files(name); n != 2 {
			t.Fatalf("%s has %d files; want one of each event", name, n)
		}
	}

	// A commit whose answer is lost, of the state table and then of one
	// of the tables: the steps after it find the commit made, and no
	// table gets its files twice or misses them.
	for i, lost := range []string{"db.floe_cluster_sim", "db.b"} {
		publish()
		cat.lose.Store(&lost)
		for step := range 3 {
			if _, err := next.Step(ctx, 2, s.read, time.Now()); err == nil {
				break
			} else if step == 2 {
				t.Fatalf("after the lost answer of %s: %v", lost, err)
			}
		}
		if cat.lose.Load() != nil {
			t.Fatalf("no commit of %s was made", lost)
		}
		for _, name := range []string{"db.a", "db.b", "db.c"} {
			if n := files(name); n != 3+i {
				t.Fatalf("after the lost answer of %s, %s has %d files; want %d, one of each event", lost, name, n, 3+i)
			}
		}
	}

	// The state table dropped and created again: its record is gone, and
	// the tables, ahead of it, are not written as if it were new.
	if err := inner.DropTable(ctx, table.Identifier{"db", "floe_cluster_sim"}); err != nil {
		t.Fatal(err)
	}
	fixture.CreateTable(t, inner, table.Identifier{"db", "floe_cluster_sim"}, schema)
	publish()
	third := coordinator()
	if _, err := third.Step(ctx, 3, s.read, time.Now()); !errors.Is(err, ingest.ErrTableLost) || !strings.Contains(err.Error(), "state table was dropped or replaced") {
		t.Fatalf("a step after the state table was replaced: %v; want it refused", err)
	}
	for _, name := range []string{"db.a", "db.b", "db.c"} {
		if n := files(name); n != 4 {
			t.Fatalf("%s has %d files after the refused step; want 4", name, n)
		}
	}
}
