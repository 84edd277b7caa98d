package floe

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// Offset is a source position, opaque to the engine and stored verbatim in
// the checkpoint's offsets log. Sources choose its JSON shape.
type Offset = json.RawMessage

// ReadLimit bounds how much one micro-batch takes from a source, with
// Spark's meaning: MaxFiles is a hard cap, MaxBytes and MaxRows are soft
// (the unit that crosses the limit is still included, so a batch always
// makes progress). Zero means no limit.
type ReadLimit struct {
	MaxFiles int
	MaxBytes int64
	MaxRows  int64
}

// Source follows Spark's micro-batch source contract.
type Source interface {
	// Description names the source in progress records and snapshot
	// summaries; two queries with the same description read the same data.
	Description() string
	// InitialOffset is the position before any data.
	InitialOffset() Offset
	// LatestOffset returns the end of the next batch starting at start,
	// bounded by limit; it returns start itself when nothing new is there.
	LatestOffset(ctx context.Context, start Offset, limit ReadLimit) (Offset, error)
	// Read plans the batch (start, end] as independently readable parts.
	Read(ctx context.Context, start, end Offset) ([]Part, error)
	// Commit tells the source that everything up to end is durable in the
	// sink, so it may clean up (archive landed files, compact its log).
	Commit(ctx context.Context, end Offset) error
	// Close releases the source.
	Close() error
}

// Part is one independently readable piece of a batch, such as one file.
// Parts are read in parallel, each by one writer goroutine: Name
// identifies it in errors and progress, SizeBytes is its stored size (-1
// when unknown) by which the writer sizes its parallelism, and Open starts
// reading it.
type Part = ingest.Part

// SchemaPart is implemented by parts that can tell their schema without
// reading their rows (a Parquet footer, a CSV header and its inference),
// remembering it for the Open that follows: with schema evolution on, the
// pipeline reads every part's schema before it writes.
type SchemaPart = ingest.SchemaPart

// DataFile is what the writer hands the committer for one file: the
// table, the location, the size, the rows and the Iceberg data-file
// descriptor with its statistics. Options.ForEachBatch receives them.
type DataFile = ingest.DataFile

// AvailableNowSource is implemented by sources that can fix the end of the
// backlog when an available-now run starts, so that data arriving during the
// run waits for the next run.
type AvailableNowSource interface {
	PrepareForAvailableNow(ctx context.Context) error
}

// ExcludingSource is implemented by sources that can drop parts from an
// uncommitted batch: files still being written (retried later) and
// quarantined files (never read again).
type ExcludingSource interface {
	Exclude(ctx context.Context, end Offset, names []string) error
}

// DiscardingSource is implemented by sources that record their plan of a
// batch in their own state when LatestOffset returns it. When a batch fails
// before committing anything and the engine drops its offsets entry,
// Discard makes the source forget its plan of (start, end] as well, so that
// the checkpoint is exactly as it was before the batch.
type DiscardingSource interface {
	Discard(ctx context.Context, start, end Offset) error
}

// WarningSource is implemented by sources that find things the user should
// know about while planning (files in subdirectories that a non-recursive
// source ignores, files that changed after they were ingested).
type WarningSource interface {
	Warnings() []string
}

// MetricsSource is implemented by sources that can tell how far a batch's
// end is behind the newest input they saw, for its progress record (Spark's
// latestOffset and source metrics): the Kafka source's offsets behind each
// partition's end.
type MetricsSource interface {
	Metrics(end Offset) (latest Offset, metrics map[string]string)
}

// RecordingSource is implemented by sources whose offsets alone do not say
// what a batch read (the file source's offset is an entry of its own log,
// kept in the checkpoint). Each batch's snapshot then records the source's
// account of the query's input so far, so that the table can tell a
// checkpoint that lost or restored its source state (see
// docs/format/checkpoint.md).
type RecordingSource interface {
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

// QueryAwareSource is implemented by sources that need the id of the
// query reading them, such as the iceberg source, which records the
// query's position on the table it reads so that the table's expiry keeps
// what the query has yet to read. The pipeline calls SetQueryID once the
// checkpoint is open, before the first batch.
type QueryAwareSource interface {
	SetQueryID(id string)
}

// AliasedSource is implemented by sources whose input can go by more than
// one description (a directory reached through a symbolic link): the
// new-query guard asks SameSource about another query's description, from
// a snapshot summary, so that a second name for the same input does not
// let a new checkpoint ingest it again.
type AliasedSource interface {
	SameSource(description string) bool
}

// TableSchemaSource is implemented by sources that infer their columns'
// types from the values (CSV, JSON lines). Before each batch is read the
// pipeline hands them the schema of the table the batch goes to (nil while
// the table does not exist, and with a table template, whose rows go to
// several), and a column the table has is read as the table's type
// wherever its values allow: zip codes that look like numbers still fill a
// string column, with their leading zeros.
type TableSchemaSource interface {
	SetTableSchema(schema *iceberg.Schema)
}

// SourceEnv is what a source gets besides its configuration.
type SourceEnv struct {
	// StateDir is the source's private directory inside the checkpoint.
	StateDir string
	// OwnDirs are the local directories floe writes for the pipeline (the
	// checkpoint, the warehouse of a local catalog): a source reading a
	// directory tree never reads them, or it would ingest floe's own
	// output.
	OwnDirs []string
	// Catalog is the pipeline's catalog, for sources that read tables.
	Catalog catalog.Catalog
	// Logger receives what a source does in the background (a
	// planner's failed poll); warnings about the data go through
	// WarningSource.
	Logger *slog.Logger
}

// SourceFactory builds a source from its configuration.
type SourceFactory func(cfg config.Source, env SourceEnv) (Source, error)

var (
	sourcesMu sync.RWMutex
	sources   = map[string]SourceFactory{}
)

// RegisterSource makes a source type available to pipelines by name. Source
// packages call it from init, like database/sql drivers.
func RegisterSource(name string, f SourceFactory) {
	sourcesMu.Lock()
	defer sourcesMu.Unlock()
	sources[name] = f
}

func newSource(cfg config.Source, env SourceEnv) (Source, error) {
	sourcesMu.RLock()
	f, ok := sources[cfg.Type]
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sourcesMu.RUnlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("%w: source type %q is not registered (known: %v); import its package", ErrConfig, cfg.Type, names)
	}
	return f(cfg, env)
}

// EncodeOffset is a source's offset as JSON, the form the checkpoint keeps.
// Offsets are plain structs of numbers and strings, which always encode.
func EncodeOffset(v any) Offset {
	b, _ := json.Marshal(v)
	return b
}

// DecodeOffset reads an offset EncodeOffset wrote; source names the source
// in the error.
func DecodeOffset[T any](o Offset, source string) (T, error) {
	var v T
	if err := json.Unmarshal(o, &v); err != nil {
		return v, fmt.Errorf("%s offset %s is not valid: %w", source, string(o), err)
	}
	return v, nil
}
