package maintenance_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/maintenance"
	"github.com/floe-io/floe/scan"
	_ "github.com/floe-io/floe/source/files"
)

// rwEnv is a warehouse with a landing directory that floe ingests into
// db.t, one snapshot per file.
type rwEnv struct {
	t       *testing.T
	dir     string
	cat     catalog.Catalog
	landing string
	files   int
}

func newRWEnv(t *testing.T) *rwEnv {
	dir := t.TempDir()
	cat, _ := fixture.CatalogAt(t, filepath.Join(dir, "warehouse"))
	return &rwEnv{t: t, dir: dir, cat: cat, landing: filepath.Join(dir, "landing")}
}

// land drops a file of these ids; ingest commits the landed files.
func (e *rwEnv) land(ids []int64) {
	e.t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, fixture.IDSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(filepath.Join(e.landing, fmt.Sprintf("f-%04d.parquet", e.files)), rec); err != nil {
		e.t.Fatal(err)
	}
	e.files++
}

func (e *rwEnv) pipeline(trigger config.Trigger, partitionFields ...string) *config.Pipeline {
	cfg := &config.Pipeline{
		Source:     config.Source{Path: e.landing, Format: "parquet", MaxFilesPerTrigger: 1},
		Sink:       config.Sink{Table: "db.t", PartitionFields: partitionFields},
		Checkpoint: filepath.Join(e.dir, "ck"),
		Trigger:    trigger,
	}
	off := false
	cfg.Maintenance.Enabled = &off // tests run maintenance themselves
	cfg.SetDefaults()
	return cfg
}

func (e *rwEnv) ingest(partitionFields ...string) {
	e.t.Helper()
	e.run(e.pipeline(config.Trigger{}, partitionFields...))
}

// run runs cfg to its end.
func (e *rwEnv) run(cfg *config.Pipeline) {
	e.t.Helper()
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
	if err != nil {
		e.t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *rwEnv) table() *table.Table { return loadTable(e.t, e.cat) }

// ids returns the table's ids, sorted, failing on a duplicate.
func (e *rwEnv) ids() []int64 { return tableIDs(e.t, e.table()) }

func (e *rwEnv) dataFiles() []table.FileScanTask {
	e.t.Helper()
	tasks, err := e.table().Scan().PlanFiles(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return tasks
}

func idRange(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestRewriteBinpack(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	for i := range int64(12) {
		e.land(idRange(i*100, i*100+100))
	}
	e.ingest()
	before := e.ids()
	ctx := context.Background()
	dry, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.RewrittenDataFiles != 12 || dry.AddedDataFiles != 0 || len(e.dataFiles()) != 12 {
		t.Fatalf("dry run: %+v, %d files; want 12 files planned and none changed", dry, len(e.dataFiles()))
	}
	res, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFiles != 12 || res.AddedDataFiles != 1 || len(res.Snapshots) != 1 {
		t.Fatalf("rewrite: %+v; want 12 files into 1 in one snapshot", res)
	}
	if n := len(e.dataFiles()); n != 1 {
		t.Fatalf("%d data files after the rewrite, want 1", n)
	}
	if op := e.table().CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("the rewrite made a %q snapshot, want replace", op)
	}
	if after := e.ids(); !slices.Equal(before, after) {
		t.Fatalf("%d ids before, %d after", len(before), len(after))
	}
	// Too few small files left to be worth it: nothing happens.
	res, err = maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{})
	if err != nil || res.Groups != 0 || len(res.Snapshots) != 0 {
		t.Fatalf("second rewrite: %+v, %v; want nothing to do", res, err)
	}
}

func TestRewriteSortDisjointRanges(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	// 8 files, each with ids spread over the whole range.
	rng := rand.New(rand.NewPCG(1, 2))
	all := rng.Perm(16000)
	for f := range 8 {
		var ids []int64
		for _, id := range all[f*2000 : (f+1)*2000] {
			ids = append(ids, int64(id))
		}
		e.land(ids)
	}
	e.ingest()
	ctx := context.Background()
	res, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{
		Strategy: maintenance.StrategySort, SortBy: []string{"id"}, TargetFileSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	tasks := e.dataFiles()
	if res.AddedDataFiles < 2 || len(tasks) != res.AddedDataFiles {
		t.Fatalf("sort rewrite: %+v, %d files; want several files at a 16 KiB target", res, len(tasks))
	}
	idField := e.table().Schema().Field(0).ID
	type span struct{ lo, hi int64 }
	var spans []span
	for _, task := range tasks {
		lo, hi := task.File.LowerBoundValues()[idField], task.File.UpperBoundValues()[idField]
		if len(lo) != 8 || len(hi) != 8 {
			t.Fatalf("file %s has no id bounds", task.File.FilePath())
		}
		spans = append(spans, span{int64(binary.LittleEndian.Uint64(lo)), int64(binary.LittleEndian.Uint64(hi))})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			t.Fatalf("id ranges overlap: %v", spans)
		}
	}
	if got := e.ids(); !slices.Equal(got, idRange(0, 16000)) {
		t.Fatalf("%d ids after the sort, want 16000", len(got))
	}
}

// TestRewriteRequiredPartitionSource compacts a table another writer made
// (iceberg-go's Append) with a required identity-partition source column,
// which floe's file reader yields as optional, with both strategies.
func TestRewriteRequiredPartitionSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := fixture.CatalogAt(t, filepath.Join(t.TempDir(), "warehouse"))
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "cat", Transform: iceberg.IdentityTransform{}})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "t"}, sc, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	appendIDs := func(from, to int64) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		defer b.Release()
		for id := from; id < to; id++ {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append([]string{"a", "b"}[id%2])
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		if tbl, err = tbl.Append(ctx, rdr, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range int64(6) {
		appendIDs(i*100, i*100+100)
	}
	for _, o := range []maintenance.RewriteOptions{
		{Strategy: maintenance.StrategySort, SortBy: []string{"id"}},
		{MinInputFiles: 2},
	} {
		res, err := maintenance.RewriteDataFiles(ctx, cat, table.Identifier{"db", "t"}, o)
		if err != nil {
			t.Fatalf("%s: %v", o.Strategy, err)
		}
		if res.Groups != 2 || res.AddedDataFiles != 2 {
			t.Fatalf("%s: %+v; want each partition's files into one", o.Strategy, res)
		}
		if ids := tableIDs(t, loadTable(t, cat)); !slices.Equal(ids, idRange(0, int64(len(ids)))) || len(ids) < 600 {
			t.Fatalf("%s: %d ids, want 0 to %d", o.Strategy, len(ids), len(ids))
		}
		tbl = loadTable(t, cat)
		appendIDs(600, 700) // a second small file in each partition
	}
}

func TestRewriteWhere(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	for i := range int64(10) {
		e.land(idRange(i*100, i*100+100))
	}
	// Two partitions of 5 files each: bucket(id) would mix them; a
	// truncate on id keeps files 0-4 and 5-9 apart.
	e.ingest("truncate(id, 500)")
	ctx := context.Background()
	res, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{Where: "id < 500"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFiles != 5 || res.AddedDataFiles != 1 {
		t.Fatalf("rewrite where id < 500: %+v; want the 5 files of that partition into 1", res)
	}
	if n := len(e.dataFiles()); n != 6 {
		t.Fatalf("%d data files, want 6", n)
	}
	if got := e.ids(); !slices.Equal(got, idRange(0, 1000)) {
		t.Fatalf("%d ids, want 1000", len(got))
	}
}

// TestRewriteBesideAStream: compactions run while a pipeline appends;
// every row ends up in the table exactly once.
func TestRewriteBesideAStream(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	e.land(idRange(0, 50))
	e.ingest()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := floe.Open(ctx, e.pipeline(config.Trigger{Kind: "processing-time", Interval: 20 * time.Millisecond}), floe.Options{Catalog: e.cat})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = p.Run(ctx)
	}()
	const files = 40
	rewrites, failed := 0, 0
	for i := int64(1); i < files; i++ {
		e.land(idRange(i*50, i*50+50))
		time.Sleep(15 * time.Millisecond)
		if i%8 == 0 {
			// A slow stream may not have committed two files since the last
			// rewrite: that rewrite commits nothing, and is not counted.
			res, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{MinInputFiles: 2})
			switch {
			case err != nil:
				failed++
				t.Logf("rewrite %d: %v", i, err)
			default:
				rewrites += len(res.Snapshots)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(e.ids()) < files*50 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	p.Close()
	if rewrites == 0 {
		t.Fatalf("no rewrite succeeded (%d failed)", failed)
	}
	ops := map[table.Operation]int{}
	for _, s := range e.table().Metadata().Snapshots() {
		ops[s.Summary.Operation]++
	}
	if ops[table.OpReplace] != rewrites {
		t.Fatalf("snapshots by operation %v, want %d replace", ops, rewrites)
	}
	if got := e.ids(); !slices.Equal(got, idRange(0, files*50)) {
		t.Fatalf("%d ids, want %d", len(got), files*50)
	}
}

func TestRewriteManifests(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	for i := range int64(15) {
		e.land(idRange(i*10, i*10+10))
	}
	e.ingest()
	ctx := context.Background()
	res, err := maintenance.RewriteManifests(ctx, e.cat, table.Identifier{"db", "t"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ManifestsBefore != 15 || res.ManifestsAfter != 1 || res.AlreadyOptimal {
		t.Fatalf("rewrite manifests: %+v; want 15 manifests into 1", res)
	}
	if got := e.ids(); !slices.Equal(got, idRange(0, 150)) {
		t.Fatalf("%d ids after the rewrite, want 150", len(got))
	}
	if op := e.table().CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("rewrite made a %q snapshot, want replace", op)
	}
	res, err = maintenance.RewriteManifests(ctx, e.cat, table.Identifier{"db", "t"}, 0)
	if err != nil || !res.AlreadyOptimal || res.ManifestsAfter != 1 {
		t.Fatalf("second rewrite: %+v, %v; want already optimal", res, err)
	}
}

// A binpack rewrite copies the chunks of files whose row groups are large
// enough (here, with write.parquet.row-group-size-bytes at 32 KiB, those
// of 1 KiB and more): the output keeps the inputs' snappy pages and every
// row once. The output, larger than read.split.target-size, is planned as
// a task per row group, and still counts each row once.
func TestRewriteCopiesLargeRowGroups(t *testing.T) {
	t.Parallel()
	e := newRWEnv(t)
	for i := range int64(6) {
		e.land(idRange(i*2000, i*2000+2000))
	}
	cfg := e.pipeline(config.Trigger{})
	cfg.Sink.TableProperties = map[string]string{"write.parquet.row-group-size-bytes": "32768", "read.split.target-size": "1024"}
	e.run(cfg)
	ctx := context.Background()
	before := e.ids()
	res, err := maintenance.RewriteDataFiles(ctx, e.cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFiles != 6 || res.AddedDataFiles != 1 {
		t.Fatalf("rewrite: %+v; want 6 files into 1", res)
	}
	tasks := e.dataFiles()
	if len(tasks) < 6 {
		t.Fatalf("the rewritten file is planned as %d tasks, want one a row group (6)", len(tasks))
	}
	fixture.EachParquetFile(t, e.table(), []string{tasks[0].File.FilePath()}, func(path string, rdr *file.Reader) {
		md := rdr.MetaData()
		if md.NumRowGroups() != 6 {
			t.Errorf("%s has %d row groups, want the 6 inputs' own", path, md.NumRowGroups())
		}
		cc, err := md.RowGroup(0).ColumnChunk(0)
		if err != nil || cc.Compression() != compress.Codecs.Snappy {
			t.Errorf("%s: codec %v (%v), want the inputs' snappy: the chunks were not copied", path, cc.Compression(), err)
		}
	})
	if after := e.ids(); !slices.Equal(before, after) || len(after) != 12000 {
		t.Fatalf("%d ids before, %d after, want 12000 alike", len(before), len(after))
	}
	n, err := scan.Count(ctx, e.table(), scan.Options{})
	if err != nil || n != 12000 {
		t.Fatalf("count %d (%v) over split tasks, want 12000", n, err)
	}
	plan, err := scan.Explain(ctx, e.table(), scan.Options{})
	if err != nil || plan.FilesTotal != 1 {
		t.Fatalf("explain: %d files (%v), want the 1 file however it is split", plan.FilesTotal, err)
	}
}
