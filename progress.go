package floe

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/floe-io/floe/internal/cluster"
	"github.com/floe-io/floe/internal/engine"
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
	// NumDeadLetters counts the records on-bad-record: dead-letter set
	// aside into the dead-letter table.
	NumDeadLetters int64 `json:"numDeadLetters,omitempty"`
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

// ClusterProgress is a worker's part of a progress record in a cluster.
type ClusterProgress struct {
	Group       string `json:"group"`
	Generation  int32  `json:"generation"`
	Worker      string `json:"worker"`
	Coordinator bool   `json:"coordinator"`
	Partitions  int    `json:"partitions"`
	// Published is set when the interval published an event.
	Published bool `json:"published"`
	// Waiting counts this worker's published ranges the table has not
	// committed yet; CommitLagMs is the age of the oldest.
	Waiting     int   `json:"waiting"`
	CommitLagMs int64 `json:"commitLagMs"`
	// Committed is what this worker committed as the coordinator.
	Committed *ClusterCommit `json:"committed,omitempty"`
}

// ClusterCommit is one coordinator commit.
type ClusterCommit struct {
	SnapshotID int64 `json:"snapshotId"`
	Events     int   `json:"events"`
	DataFiles  int   `json:"dataFiles"`
	Rows       int64 `json:"rows"`
	// Stale counts events dropped because the table already holds their
	// ranges (a zombie's, or one read again after a stall).
	Stale int `json:"stale"`
	// Waiting counts events waiting for the ranges before them.
	Waiting int `json:"waiting"`
	// LagMs is how long the oldest committed event waited.
	LagMs int64 `json:"lagMs"`
	// NumKeys counts the keys the commit's upserts changed; NumRemovedRows
	// the table rows their deletion vectors removed (mode upsert).
	NumKeys        int   `json:"numKeys,omitempty"`
	NumRemovedRows int64 `json:"numRemovedRows,omitempty"`
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

// batchProgress is a batch's progress record.
func (p *Pipeline) batchProgress(b engine.Batch) Progress {
	md := p.engine.Checkpoint.Metadata
	prog := Progress{ID: md.ID, RunID: p.runID, BatchID: b.ID, Timestamp: progressTime(b.Began), NumInputRows: b.InputRows,
		DurationMs: Durations{LatestOffset: b.LatestOffset.Milliseconds(), AddBatch: b.AddBatch.Milliseconds(), Commit: b.Commit.Milliseconds(),
			WalCommit: b.WalCommit.Milliseconds(), TriggerExecution: b.Total.Milliseconds()},
		Deferred: b.Deferred, Quarantined: quarantined(b.Quarantined), Backlog: b.Backlog, NumDeadLetters: b.DeadLetters}
	if secs := b.Total.Seconds(); secs > 0 {
		prog.ProcessedRowsPerSecond = float64(b.Rows) / secs
		prog.InputRowsPerSecond = prog.ProcessedRowsPerSecond
	}
	prog.Sources = []SourceProgress{{Description: md.Source, StartOffset: b.Start, EndOffset: b.End, NumInputFiles: b.Parts, NumInputRows: b.InputRows,
		InputRowsPerSecond: prog.InputRowsPerSecond, ProcessedRowsPerSecond: prog.ProcessedRowsPerSecond,
		LatestOffset: b.SourceLatest, Metrics: b.SourceMetrics}}
	prog.Sink = SinkProgress{Description: fmt.Sprintf("IcebergSink[%s]", p.cfg.Sink.Table), NumOutputRows: b.Rows, SnapshotID: b.SnapshotID,
		DataFiles: b.DataFiles, CommitRetries: b.CommitRetries, PeakOpenFiles: b.PeakOpenFiles}
	if p.cfg.Sink.Console() {
		prog.Sink.Description = "ConsoleSink"
	}
	if b.Tables != nil {
		prog.Sink.Tables = make([]TableProgress, len(b.Tables))
		for i, tc := range b.Tables {
			prog.Sink.Tables[i] = TableProgress{Table: tc.Table, SnapshotID: tc.SnapshotID, NumOutputRows: tc.Rows, DataFiles: tc.DataFiles, CommitRetries: tc.Retries}
		}
	}
	if u := b.Upsert; u != nil {
		prog.Sink.Upsert = &UpsertProgress{NumChanges: u.Changes, NumKeys: u.Keys, NumDeletedKeys: u.DeletedKeys, NumRemovedRows: u.RemovedRows}
	}
	return prog
}

// intervalProgress is a cluster worker's progress record of an interval.
func (p *Pipeline) intervalProgress(iv cluster.Interval) Progress {
	prog := Progress{ID: iv.QueryID, RunID: p.runID, Timestamp: progressTime(iv.Began), BatchID: iv.BatchID,
		Cluster: &ClusterProgress{Group: iv.Group, Generation: iv.Generation, Worker: iv.Worker, Coordinator: iv.Coordinator, Partitions: iv.Partitions,
			Waiting: iv.Waiting, CommitLagMs: iv.CommitLag.Milliseconds()}}
	if b := iv.Published; b != nil {
		prog.NumInputRows = b.Rows
		prog.Cluster.Published = true
		prog.DurationMs.LatestOffset, prog.DurationMs.AddBatch = b.LatestOffset.Milliseconds(), b.AddBatch.Milliseconds()
		prog.Sources = []SourceProgress{{Description: p.engine.Source.Description(), StartOffset: b.Start, EndOffset: b.End, NumInputFiles: b.Parts,
			NumInputRows: b.InputRows, LatestOffset: b.SourceLatest, Metrics: b.SourceMetrics}}
		prog.Sink.NumOutputRows, prog.Sink.DataFiles = b.Rows, b.DataFiles
		prog.Deferred, prog.Quarantined = b.Deferred, quarantined(b.Quarantined)
		if u := b.Upsert; u != nil {
			prog.Sink.Upsert = &UpsertProgress{NumChanges: u.Changes, NumKeys: u.Keys, NumDeletedKeys: u.DeletedKeys}
		}
	}
	if c := iv.Committed; c != nil {
		prog.Cluster.Committed = &ClusterCommit{SnapshotID: c.SnapshotID, Events: c.Events, DataFiles: c.Files, Rows: c.Rows,
			Stale: c.Stale, Waiting: c.Waiting, LagMs: c.LagMs, NumKeys: c.Keys, NumRemovedRows: c.Deleted}
		prog.Sink.SnapshotID = c.SnapshotID
	}
	prog.Sink.Description = fmt.Sprintf("IcebergSink[%s]", p.cfg.Sink.Table)
	prog.DurationMs.TriggerExecution = iv.Total.Milliseconds()
	return prog
}

func quarantined(qs []engine.Quarantined) []QuarantinedFile {
	if qs == nil {
		return nil
	}
	out := make([]QuarantinedFile, len(qs))
	for i, q := range qs {
		out[i] = QuarantinedFile(q)
	}
	return out
}
