package commit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

func writeBatch(t *testing.T, tbl *table.Table, prefix string, first, n int64) []ingest.DataFile {
	t.Helper()
	rec := fixture.IDRecord(first, n)
	defer rec.Release()
	w := &write.Writer{Table: tbl, FilePrefix: prefix}
	res, err := w.Write(context.Background(), []ingest.Part{fixture.Part{PartName: prefix, Records: []arrow.RecordBatch{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != n {
		t.Fatalf("wrote %d rows, want %d", res.Rows, n)
	}
	return res.Files
}

// Several committers racing on one table (the SQL catalog, where a lost race
// is not an iceberg-go "commit failed") all land every batch exactly once.
func TestConcurrentCommitsRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	ident := table.Identifier{"db", "race"}
	base := &commit.Committer{Catalog: cat, Ident: ident, QueryID: "setup"}
	// Four writers may each lose more races in a row than the default
	// retries allow, the more so under the race detector: what is tested
	// is that every batch lands once, not how many attempts it takes.
	tbl, err := base.Create(ctx, fixture.IDSchema, commit.CreateOptions{Properties: map[string]string{table.CommitNumRetriesKey: "50"}})
	if err != nil {
		t.Fatal(err)
	}
	const writers, batches, rows = 4, 5, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	var mu sync.Mutex
	attempts := 0
	for w := range writers {
		c := &commit.Committer{Catalog: cat, Ident: ident, QueryID: fmt.Sprintf("q%d", w), Source: fmt.Sprintf("s%d", w)}
		files := make([][]ingest.DataFile, batches)
		for b := range batches {
			files[b] = writeBatch(t, tbl, fmt.Sprintf("q%d-%d", w, b), int64((w*batches+b)*rows), rows)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				res, err := c.Commit(ctx, commit.Request{BatchID: int64(b), Files: files[b]})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				attempts += res.Attempts
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("commit failed: %v", err)
	}
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var total int64
	for _, s := range tbl.Metadata().Snapshots() {
		key := s.Summary.Properties[commit.SummaryQueryID] + "/" + s.Summary.Properties[commit.SummaryBatchID]
		if seen[key] {
			t.Fatalf("batch %s committed twice", key)
		}
		seen[key] = true
		n, _ := strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
		total += n
	}
	if len(seen) != writers*batches || total != writers*batches*rows {
		t.Fatalf("%d batches with %d rows, want %d and %d", len(seen), total, writers*batches, writers*batches*rows)
	}
	t.Logf("%d commits took %d attempts", writers*batches, attempts)
}

// A batch found in the table's ancestry is not committed again.
func TestCommitIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "idem"}, QueryID: "q", Source: "s"}
	tbl, err := c.Create(ctx, fixture.IDSchema, commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := writeBatch(t, tbl, "b0", 0, 10)
	first, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Existing || again.SnapshotID != first.SnapshotID {
		t.Fatalf("second commit of batch 0: %+v, want the existing snapshot %d", again, first.SnapshotID)
	}
	tbl, _ = cat.LoadTable(ctx, c.Ident)
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
}

// failingCatalog fails every commit with err, to drive the committer's
// last resort.
type failingCatalog struct {
	catalog.Catalog
	err error
}

func (f failingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	tbl, err := f.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, f), nil
}

func (f failingCatalog) CommitTable(context.Context, table.Identifier, []table.Requirement, []table.Update) (table.Metadata, string, error) {
	return nil, "", f.err
}

// A commit the catalog keeps refusing deletes the files it would have added;
// a commit whose outcome is unknown keeps them, since it may have landed.
func TestFinalCommitFailure(t *testing.T) {
	t.Parallel()
	refused := fmt.Errorf("%w: injected lost race", table.ErrCommitFailed)
	unknown := errors.New("injected connection reset")
	for _, c := range []struct {
		name      string
		err       error
		wantFiles bool
	}{{"refused", refused, false}, {"unknown outcome", unknown, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cat := fixture.Catalog(t)
			ident := table.Identifier{"db", "fail"}
			setup := &commit.Committer{Catalog: cat, Ident: ident, QueryID: "q"}
			tbl, err := setup.Create(ctx, fixture.IDSchema, commit.CreateOptions{Properties: map[string]string{table.CommitNumRetriesKey: "2", table.CommitMinRetryWaitMsKey: "1"}})
			if err != nil {
				t.Fatal(err)
			}
			cm := &commit.Committer{Catalog: failingCatalog{cat, c.err}, Ident: ident, QueryID: "q", Source: "s"}
			files := writeBatch(t, tbl, "doomed", 0, 10)
			res, err := cm.Commit(ctx, commit.Request{BatchID: 0, Files: files})
			if !errors.Is(err, ingest.ErrCommit) || !errors.Is(err, c.err) {
				t.Fatalf("commit = %+v, %v; want ErrCommit wrapping the injected failure", res, err)
			}
			for _, f := range files {
				_, serr := os.Stat(localPath(f.Path))
				if exists := serr == nil; exists != c.wantFiles {
					t.Fatalf("data file %s exists = %v, want %v", f.Path, exists, c.wantFiles)
				}
			}
		})
	}
}

func localPath(p string) string {
	if len(p) > 7 && p[:7] == "file://" {
		return p[7:]
	}
	return p
}
