package source

import (
	"context"
	"io"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
)

// The capabilities below are what a source may add to Source. A source
// asserts each one it implements at compile time (var _ source.Excluder =
// (*S)(nil)), and sourcetest's contract suite fails a source that claims
// one it lacks.

// Excluder drops parts from an uncommitted batch: files still being
// written (retried later) and quarantined files (never read again).
type Excluder interface {
	Exclude(ctx context.Context, end Offset, names []string) error
}

// RemoteFiles is a source whose files may lie on an object store, where
// the checkpoint cannot move them by a rename: the engine quarantines such
// a bad file by copying its bytes in and having the source delete it.
type RemoteFiles interface {
	OpenFile(ctx context.Context, path string) (io.ReadCloser, error)
	RemoveFile(ctx context.Context, path string) error
}

// Discarder is a source that records its plan of a batch in its own state
// when LatestOffset returns it. When a batch fails before committing
// anything and the engine drops its offsets entry, Discard makes the
// source forget its plan of (start, end] as well, so that the checkpoint
// is exactly as it was before the batch.
type Discarder interface {
	Discard(ctx context.Context, start, end Offset) error
}

// MetricsReporter tells how far a batch's end is behind the newest input
// the source saw, for its progress record (Spark's latestOffset and source
// metrics): the Kafka source's offsets behind each partition's end.
type MetricsReporter interface {
	Metrics(end Offset) (latest Offset, metrics map[string]string)
}

// Recorder is a source whose offsets alone do not say what a batch read
// (the file source's offset is an entry of its own log, kept in the
// checkpoint). Each batch's snapshot then records the source's account of
// the query's input so far, so that the table can tell a checkpoint that
// lost or restored its source state (see docs/format/checkpoint.md).
type Recorder interface {
	// BatchInput is the account after batch (start, end]: prev is the
	// account after the query's previous batch, nil before the first.
	BatchInput(prev map[string]string, start, end Offset) (map[string]string, error)
	// CheckInput verifies the source's state against the account the
	// table holds for the batch (start, end], the newest committed (start
	// nil when unknown): an error names what is missing or different.
	CheckInput(input map[string]string, start, end Offset) error
	// RebuildInput remakes the source's state from the table's account of
	// the batch that ended at end, or says why the account is not enough.
	RebuildInput(ctx context.Context, input map[string]string, end Offset) error
}

// Resumable is a source whose offsets alone fix what a query has read:
// Kafka's offsets per partition, the Iceberg source's snapshot and position
// in it. The end the table records of the query's newest batch is then the
// query's whole position, so that a run whose checkpoint directory is gone
// resumes from that record, with a notice, instead of refusing
// (docs/format/checkpoint.md, "A lost checkpoint"). The file source is not
// one: its offset is an entry of its own log, which only floe checkpoint
// rebuild remakes, by listing the landing directory against the record.
type Resumable interface {
	// OwnPosition tells whether a query run under trigger keeps a position
	// of its own in its checkpoint: false for one worker of a group (Kafka's
	// kafka.group.id under a processing-time trigger), whose checkpoint
	// holds no progress, the group's being in the table's record.
	OwnPosition(trigger config.Trigger) bool
}

// QueryAware is a source that needs the id of the query reading it, such
// as the iceberg source, which records the query's position on the table
// it reads so that the table's expiry keeps what the query has yet to
// read. The engine calls SetQueryID once the checkpoint is open, before
// the first batch.
type QueryAware interface {
	SetQueryID(id string)
}

// Aliased is a source whose input can go by more than one description (a
// directory reached through a symbolic link): the new-query guard asks
// SameSource about another query's description, from a snapshot summary,
// so that a second name for the same input does not let a new checkpoint
// ingest it again.
type Aliased interface {
	SameSource(description string) bool
}

// SameSourceOf is src's test for another name of its input, or nil when
// src has only its description.
func SameSourceOf(src Source) func(string) bool {
	if a, ok := src.(Aliased); ok {
		return a.SameSource
	}
	return nil
}

// SchemaAware is a source that infers its columns' types from the values
// (CSV, JSON lines). Before each batch is read the engine hands it the
// schema of the table the batch goes to (nil while the table does not
// exist, and with a table template, whose rows go to several), and a
// column the table has is read as the table's type wherever its values
// allow: zip codes that look like numbers still fill a string column, with
// their leading zeros.
type SchemaAware interface {
	SetTableSchema(schema *iceberg.Schema)
}

// Backlog is how far an available-now run is through the input it fixed at
// start.
type Backlog struct {
	TotalFiles     int   `json:"totalFiles"`
	RemainingFiles int   `json:"remainingFiles"`
	RemainingBytes int64 `json:"remainingBytes"`
}

// BacklogReporter knows how much input is waiting, for progress bars; ok
// is false when it cannot tell.
type BacklogReporter interface {
	Backlog() (b Backlog, ok bool)
}

// DeadLetterWriter is a source that sends the records its parts set aside
// (on-bad-record: dead-letter) somewhere of its own, such as the Kafka
// source's deadLetterTopic, instead of the dead-letter table. The engine
// sends a batch's records before its table commit; SendDeadLetters must
// skip the records of batchID that a run which stopped before that commit
// already sent (planned at plannedMs), so that each is sent once.
type DeadLetterWriter interface {
	// SendsDeadLetters tells whether the source is set to send them.
	SendsDeadLetters() bool
	SendDeadLetters(ctx context.Context, query string, batchID, plannedMs int64, records []BadRecord) error
}
