package maintenance_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/maintenance"
)

// delEnv is an upsert-like table db.t (id, v) of a format version, written
// and deleted from through iceberg-go.
type delEnv struct {
	t   *testing.T
	ctx context.Context
	cat catalog.Catalog
}

func newDelEnv(t *testing.T, version int) *delEnv {
	cat := fixture.Catalog(t)
	fixture.CreateTable(t, cat, table.Identifier{"db", "t"}, fixture.IDSchema,
		catalog.WithProperties(iceberg.Properties{"format-version": strconv.Itoa(version)}))
	return &delEnv{t: t, ctx: context.Background(), cat: cat}
}

// files appends n data files of size rows each, ids from 0.
func (e *delEnv) files(n int, size int64) {
	e.t.Helper()
	for i := range int64(n) {
		if err := fixture.AppendIDs(e.ctx, e.cat, "db.t", i*size, size); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *delEnv) dv(cat catalog.Catalog, ids ...int64) {
	e.t.Helper()
	if n, err := fixture.DeleteByDV(e.ctx, cat, "db.t", ids...); err != nil || n != len(ids) {
		e.t.Fatalf("delete %v by deletion vector: %d rows, %v", ids, n, err)
	}
}

func (e *delEnv) eq(cat catalog.Catalog, ids ...int64) {
	e.t.Helper()
	if err := fixture.DeleteByEquality(e.ctx, cat, "db.t", ids...); err != nil {
		e.t.Fatalf("delete %v by equality: %v", ids, err)
	}
}

// check compares the table, read by iceberg-go, with [0, n) less gone.
func (e *delEnv) check(n int64, gone ...int64) {
	e.t.Helper()
	ids, err := fixture.ReadIDs(e.ctx, e.cat, "db.t", "id")
	if err != nil {
		e.t.Fatal(err)
	}
	for _, id := range gone {
		if ids[id] != 0 {
			e.t.Errorf("deleted id %d is back %d times", id, ids[id])
		}
		ids[id] = 1
	}
	if d := fixture.Exact(ids, 0, n); d != "" {
		e.t.Errorf("table ids: %s", d)
	}
}

func (e *delEnv) health() maintenance.Report {
	e.t.Helper()
	r, err := maintenance.Health(e.ctx, loadTable(e.t, e.cat), maintenance.HealthOptions{PlanRuns: -1})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *delEnv) rewrite(cat catalog.Catalog, o maintenance.RewriteOptions) maintenance.RewriteResult {
	e.t.Helper()
	res, err := maintenance.RewriteDataFiles(e.ctx, cat, table.Identifier{"db", "t"}, o)
	if err != nil {
		e.t.Fatalf("rewrite: %v", err)
	}
	return res
}

// A file with a third of its rows deleted is rewritten alone in its
// partition (min-input-files does not apply to it); a file under the
// ratio is not.
func TestRewriteDeleteRatio(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 3)
	e.files(2, 10)
	e.dv(e.cat, 0, 1, 2, 3) // 40% of the first file
	e.dv(e.cat, 10)         // 10% of the second
	// Files of the target size are rewritten for their deletes only.
	target := e.health().MeanDataFileBytes
	res := e.rewrite(e.cat, maintenance.RewriteOptions{TargetFileSize: target})
	if res.RewrittenDataFiles != 1 || res.RemovedDeleteFiles != 1 {
		t.Fatalf("rewrote %d files, removed %d delete files; want the first file and its deletion vector", res.RewrittenDataFiles, res.RemovedDeleteFiles)
	}
	e.check(20, 0, 1, 2, 3, 10)
	if r := e.health(); r.DeletionVectors != 1 || r.DeletedRows != 1 {
		t.Fatalf("left %d deletion vectors, %d deleted rows; want the second file's", r.DeletionVectors, r.DeletedRows)
	}
	e.rewrite(e.cat, maintenance.RewriteOptions{TargetFileSize: target, DeleteRatioThreshold: 0.1})
	e.check(20, 0, 1, 2, 3, 10)
	if r := e.health(); r.DeleteFiles != 0 {
		t.Fatalf("%d delete files left after a rewrite at ratio 0.1", r.DeleteFiles)
	}
}

// Equality deletes count toward delete-file-threshold, not the ratio;
// rewrite-all leaves no delete file live.
func TestRewriteEqualityDeletes(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 2)
	e.files(3, 10)
	e.eq(e.cat, 1)
	e.eq(e.cat, 12)
	if res := e.rewrite(e.cat, maintenance.RewriteOptions{}); res.Groups != 0 {
		t.Fatalf("rewrote %d groups by default; equality deletes alone pick no file", res.Groups)
	}
	// Planning matches each key to the files whose id range holds it; the
	// third, small, file is packed with them.
	res := e.rewrite(e.cat, maintenance.RewriteOptions{DeleteFileThreshold: 1, MinInputFiles: 10})
	if res.RewrittenDataFiles != 3 {
		t.Fatalf("rewrote %d files at delete-file-threshold 1; want the 2 the deletes apply to and the small one beside them", res.RewrittenDataFiles)
	}
	e.check(30, 1, 12)
	e.eq(e.cat, 25)
	e.rewrite(e.cat, maintenance.RewriteOptions{RewriteAll: true})
	e.check(30, 1, 12, 25)
	if r := e.health(); r.DeleteFiles != 0 {
		t.Fatalf("%d delete files left after rewrite-all", r.DeleteFiles)
	}
}

// interleaving is a catalog whose first commit is preceded by another
// writer's commit, made through the catalog it wraps: a rewrite's files
// are written, and its commit meets deletes it did not read.
type interleaving struct {
	catalog.Catalog
	once    sync.Once
	between func()
}

func (c *interleaving) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c *interleaving) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	c.once.Do(c.between)
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

// Rows deleted by deletion vectors while a rewrite runs stay deleted: the
// vectors are carried over to the new files, both for a file that had one
// (merged and replaced meanwhile) and for a file that had none.
func TestRewriteCarriesConcurrentDeletionVectors(t *testing.T) {
	t.Parallel()
	for _, partial := range []bool{false, true} {
		t.Run("partial="+strconv.FormatBool(partial), func(t *testing.T) {
			t.Parallel()
			e := newDelEnv(t, 3)
			e.files(3, 10)
			e.dv(e.cat, 4)
			cat := &interleaving{Catalog: e.cat, between: func() { e.dv(e.cat, 5, 14, 29) }}
			res := e.rewrite(cat, maintenance.RewriteOptions{RewriteAll: true, PartialProgress: partial})
			if res.CarriedDeletes != 3 {
				t.Errorf("carried %d deletes over, want 3", res.CarriedDeletes)
			}
			e.check(30, 4, 5, 14, 29)
			if r := e.health(); r.DataFiles != 1 || r.DeletionVectors != 1 || r.DeletedRows != 3 {
				t.Errorf("after the rewrite: %d data files, %d deletion vectors, %d deleted rows; want 1, 1, 3", r.DataFiles, r.DeletionVectors, r.DeletedRows)
			}
			// The carried deletes are the table's own: a second rewrite
			// applies them.
			e.rewrite(e.cat, maintenance.RewriteOptions{RewriteAll: true})
			e.check(30, 4, 5, 14, 29)
			if r := e.health(); r.DeleteFiles != 0 {
				t.Errorf("%d delete files left", r.DeleteFiles)
			}
		})
	}
}

// Rows deleted by equality deletes while a rewrite runs stay deleted: the
// new files keep the starting snapshot's sequence number, so the deletes
// still apply to them.
func TestRewriteKeepsConcurrentEqualityDeletes(t *testing.T) {
	t.Parallel()
	for _, version := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(version), func(t *testing.T) {
			t.Parallel()
			e := newDelEnv(t, version)
			e.files(3, 10)
			e.eq(e.cat, 3)
			cat := &interleaving{Catalog: e.cat, between: func() { e.eq(e.cat, 5, 14, 29) }}
			e.rewrite(cat, maintenance.RewriteOptions{RewriteAll: true})
			e.check(30, 3, 5, 14, 29)
			if r := e.health(); r.EqualityDeleteFiles != 1 {
				t.Errorf("%d equality delete files live; want the one committed during the rewrite", r.EqualityDeleteFiles)
			}
			e.rewrite(e.cat, maintenance.RewriteOptions{RewriteAll: true})
			e.check(30, 3, 5, 14, 29)
			if r := e.health(); r.DeleteFiles != 0 {
				t.Errorf("%d delete files left", r.DeleteFiles)
			}
		})
	}
}

// A rewrite that cannot carry a concurrent delete over fails rather than
// bring the rows back: here the rewrite applied equality deletes, so the
// rows' new positions are unknown.
func TestRewriteConflictsOnDeletesItCannotCarry(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 3)
	e.files(2, 10)
	e.eq(e.cat, 3)
	cat := &interleaving{Catalog: e.cat, between: func() { e.dv(e.cat, 5) }}
	_, err := maintenance.RewriteDataFiles(e.ctx, cat, table.Identifier{"db", "t"}, maintenance.RewriteOptions{RewriteAll: true})
	if !errors.Is(err, maintenance.ErrConcurrentDeletes) {
		t.Fatalf("rewrite: %v, want ErrConcurrentDeletes", err)
	}
	e.check(20, 3, 5)
	e.rewrite(e.cat, maintenance.RewriteOptions{RewriteAll: true})
	e.check(20, 3, 5)
}

// Equality deletes of a v3 table become deletion vectors, merged with the
// vectors the files had, and the equality delete files go, in one commit.
func TestConvertEqualityDeletes(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 3)
	e.files(3, 10)
	e.dv(e.cat, 2)
	e.eq(e.cat, 3, 14)
	e.eq(e.cat, 2, 25, 99) // 2 is deleted already, 99 is no row
	if err := fixture.AppendIDs(e.ctx, e.cat, "db.t", 30, 10); err != nil {
		t.Fatal(err)
	}
	e.eq(e.cat, 31)
	before := len(loadTable(t, e.cat).Metadata().Snapshots())
	res, err := maintenance.ConvertEqualityDeletes(e.ctx, e.cat, table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RemovedEqualityDeleteFiles != 3 || res.KeptEqualityDeleteFiles != 0 || res.DataFiles != 4 {
		t.Errorf("result %+v; want 3 equality delete files removed, 4 data files given vectors", res)
	}
	e.check(40, 2, 3, 14, 25, 31)
	r := e.health()
	if r.EqualityDeleteFiles != 0 || r.DeletionVectors != 4 || r.DeletedRows != 5 {
		t.Errorf("after: %d equality delete files, %d deletion vectors, %d deleted rows; want 0, 4, 5", r.EqualityDeleteFiles, r.DeletionVectors, r.DeletedRows)
	}
	if n := len(loadTable(t, e.cat).Metadata().Snapshots()); n != before+2 {
		t.Errorf("%d snapshots after the conversion, %d before", n, before)
	}
	res, err = maintenance.ConvertEqualityDeletes(e.ctx, e.cat, table.Identifier{"db", "t"})
	if err != nil || res.RemovedEqualityDeleteFiles != 0 {
		t.Fatalf("second conversion: %+v, %v", res, err)
	}
}

func TestConvertEqualityDeletesRefusesV2(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 2)
	e.files(1, 10)
	e.eq(e.cat, 3)
	_, err := maintenance.ConvertEqualityDeletes(e.ctx, e.cat, table.Identifier{"db", "t"})
	fixture.WantError(t, err, ingest.ErrConfig, "format v2", "format v3", "rewrite-data-files db.t --delete-file-threshold 1")
	e.check(10, 3)
}

// The scheduler compacts a table once a third of its rows are deleted by
// deletion vectors, with no commit count due: reads stay bounded beside an
// upsert stream.
func TestSchedulerCompactsDeletedRows(t *testing.T) {
	t.Parallel()
	e := newDelEnv(t, 3)
	e.files(2, 10)
	var runs []maintenance.Run
	// Files of the target size: only their deletes make them worth it.
	target := e.health().MeanDataFileBytes
	s := maintenance.NewScheduler(config.Maintenance{
		Budget:           config.Duration(time.Minute),
		RewriteDataFiles: config.RewriteMaintenance{EveryCommits: 1000, DeleteRatioThreshold: 0.3, TargetFileSizeBytes: target},
	}, e.cat, nil)
	s.OnRun = func(r maintenance.Run) {
		if r.Task == maintenance.TaskRewriteDataFiles {
			runs = append(runs, r)
		}
	}
	batch := maintenance.BatchCommitted{Tables: map[string]*table.Table{"db.t": nil}}
	e.dv(e.cat, 0, 1, 2, 3, 4)
	s.AfterBatch(e.ctx, batch)
	if len(runs) != 0 {
		t.Fatalf("compacted at a quarter of the rows deleted: %v", runs)
	}
	e.dv(e.cat, 5, 6, 10)
	s.AfterBatch(e.ctx, batch)
	if len(runs) != 1 || runs[0].Err != nil {
		t.Fatalf("runs at 40%% deleted: %v", runs)
	}
	e.check(20, 0, 1, 2, 3, 4, 5, 6, 10)
	if r := e.health(); r.DeletedRows != 1 || r.DeletionVectors != 1 {
		t.Fatalf("after the compaction: %d deleted rows in %d deletion vectors; want the second file's 1", r.DeletedRows, r.DeletionVectors)
	}
}
