package floe

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
)

// DataFile is what the writer hands the committer for one file: the
// table, the location, the size, the rows and the Iceberg data-file
// descriptor with its statistics. Options.ForEachBatch receives them.
type DataFile struct {
	Table     string
	Path      string
	SizeBytes int64
	Rows      int64
	File      iceberg.DataFile
}

// publicFiles and internalFiles convert the descriptors between the
// library's API and the writer's.
func publicFiles(fs []ingest.DataFile) []DataFile {
	out := make([]DataFile, len(fs))
	for i, f := range fs {
		out[i] = DataFile(f)
	}
	return out
}

func internalFiles(fs []DataFile) []ingest.DataFile {
	out := make([]ingest.DataFile, len(fs))
	for i, f := range fs {
		out[i] = ingest.DataFile(f)
	}
	return out
}

// Snapshot summary keys: every snapshot a floe query commits names the
// query and the batch, which is how a re-run batch is found in the table
// instead of being committed twice.
const (
	SummaryQueryID = commit.SummaryQueryID
	SummaryBatchID = commit.SummaryBatchID
)

// Committer commits data files written outside a pipeline (by a
// ForEachBatch hook, or by another process that hands over DataFiles) to
// one table, exactly once per query and batch: each snapshot records both,
// a batch already in the table is found instead of committed again, and a
// lost race with another writer is retried on fresh metadata under the
// table's commit.retry.* properties.
type Committer struct {
	Catalog catalog.Catalog
	Table   table.Identifier
	// QueryID and Source name the writer in snapshot summaries; keep both
	// stable across restarts of one stream.
	QueryID string
	Source  string
}

// Commit adds files to the table as one snapshot for batchID and returns
// it; existing reports that an earlier attempt had committed the batch
// already, in which case files are not added again. Files of a commit
// that finally fails are deleted, unless the catalog could not say
// whether it happened.
func (c Committer) Commit(ctx context.Context, batchID int64, files []DataFile) (snapshotID int64, existing bool, err error) {
	cm := &commit.Committer{Catalog: c.Catalog, Ident: c.Table, QueryID: c.QueryID, Source: c.Source}
	res, err := cm.Commit(ctx, commit.Request{BatchID: batchID, Files: internalFiles(files)})
	return res.SnapshotID, res.Existing, err
}
