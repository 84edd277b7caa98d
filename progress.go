package floe

import (
	"encoding/json"
	"time"

	"github.com/floe-io/floe/source"
)

// Progress describes one micro-batch with the fields of Spark's
// StreamingQueryProgress, so that existing dashboards and habits carry over.
type Progress struct {
	ID                     string           `json:"id"`
	RunID                  string           `json:"runId"`
	Timestamp              string           `json:"timestamp"`
	BatchID                int64            `json:"batchId"`
	NumInputRows           int64            `json:"numInputRows"`
	InputRowsPerSecond     float64          `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64          `json:"processedRowsPerSecond"`
	DurationMs             Durations        `json:"durationMs"`
	Sources                []SourceProgress `json:"sources"`
	Sink                   SinkProgress     `json:"sink"`
	// Quarantined lists input files moved aside by --on-bad-file quarantine.
	Quarantined []QuarantinedFile `json:"quarantined,omitempty"`
	// Deferred lists files left for a later batch because they were still
	// being written.
	Deferred []string `json:"deferred,omitempty"`
	// Backlog counts the input known but not yet ingested, when the source
	// can tell (an available-now run).
	Backlog *Backlog `json:"backlog,omitempty"`
	// Cluster is set on a worker of a cluster (kafka.group.id with a
	// processing-time trigger).
	Cluster *ClusterProgress `json:"cluster,omitempty"`
}

// Durations are the phases of a batch, in Spark's names.
type Durations struct {
	LatestOffset     int64 `json:"latestOffset"`
	AddBatch         int64 `json:"addBatch"`
	Commit           int64 `json:"commit"`
	WalCommit        int64 `json:"walCommit"`
	TriggerExecution int64 `json:"triggerExecution"`
}

// SourceProgress is the source's part of a progress record.
type SourceProgress struct {
	Description            string          `json:"description"`
	StartOffset            json.RawMessage `json:"startOffset"`
	EndOffset              json.RawMessage `json:"endOffset"`
	NumInputFiles          int             `json:"numInputFiles"` // input files (parts) the batch read
	NumInputRows           int64           `json:"numInputRows"`
	InputRowsPerSecond     float64         `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64         `json:"processedRowsPerSecond"`
	// LatestOffset and Metrics come from a source.MetricsReporter.
	LatestOffset json.RawMessage   `json:"latestOffset,omitempty"`
	Metrics      map[string]string `json:"metrics,omitempty"`
}

// SinkProgress is the sink's part of a progress record.
type SinkProgress struct {
	Description   string `json:"description"`
	NumOutputRows int64  `json:"numOutputRows"`
	// SnapshotID is the snapshot that holds the batch; 0 when the batch had
	// no rows and committed nothing.
	SnapshotID int64 `json:"snapshotId,omitempty"`
	DataFiles  int   `json:"numDataFiles"`
	// CommitRetries counts the commit attempts after the first, over the
	// batch's tables: conflicts with other writers and transient catalog
	// failures.
	CommitRetries int `json:"commitRetries,omitempty"`
	// PeakOpenFiles is the most data files the batch had open at once,
	// which bounds its memory (write.max-open-files caps it).
	PeakOpenFiles int `json:"peakOpenFiles,omitempty"`
	// Tables lists each table's commit when a table template routes rows
	// to several.
	Tables []TableProgress `json:"tables,omitempty"`
	// Upsert tells what a batch in mode upsert did.
	Upsert *UpsertProgress `json:"upsert,omitempty"`
}

// UpsertProgress is a batch's merge: its changes, the keys they touch, the
// keys they delete and the table rows they replaced or deleted.
type UpsertProgress struct {
	NumChanges     int64 `json:"numChanges"`
	NumKeys        int64 `json:"numKeys"`
	NumDeletedKeys int64 `json:"numDeletedKeys"`
	// NumRemovedRows counts the table rows the batch's deletion vectors
	// remove (format-version 3); equality deletes (v2) remove rows as
	// they are read, uncounted, so it is absent there.
	NumRemovedRows *int64 `json:"numRemovedRows,omitempty"`
}

// TableProgress is one table's part of a batch.
type TableProgress struct {
	Table         string `json:"table"`
	SnapshotID    int64  `json:"snapshotId"`
	NumOutputRows int64  `json:"numOutputRows"`
	DataFiles     int    `json:"numDataFiles"`
	CommitRetries int    `json:"commitRetries,omitempty"`
}

// QuarantinedFile names an input file set aside and why.
type QuarantinedFile struct {
	Path    string `json:"path"`
	MovedTo string `json:"movedTo"`
	Reason  string `json:"reason"`
}

// Backlog is how far an available-now run is through the input it fixed at
// start.
type Backlog = source.Backlog

// progressTime is a progress record's timestamp as Spark writes it:
// UTC, milliseconds, whether a single process or a cluster worker made it.
func progressTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
