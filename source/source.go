// Package source is the contract between floe's engine and the sources it
// reads: Spark's micro-batch source (offsets, a latest offset bounded by
// a read limit, a batch read as parts, a commit once the sink holds it)
// and the capabilities a source may add. Source packages implement it,
// register a factory from init, and import nothing of the engine.
package source

import (
	"context"
	"encoding/json"
	"fmt"

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
	// PrepareForAvailableNow fixes the end of the backlog when an
	// available-now run starts, so that data arriving during the run
	// waits for the next run.
	PrepareForAvailableNow(ctx context.Context) error
	// LatestOffset returns the end of the next batch starting at start,
	// bounded by limit; it returns start itself when nothing new is there.
	LatestOffset(ctx context.Context, start Offset, limit ReadLimit) (Offset, error)
	// Read plans the batch (start, end] as independently readable parts.
	Read(ctx context.Context, start, end Offset) ([]Part, error)
	// Warnings returns, and forgets, what the source found while planning
	// that the user should know (files in subdirectories a non-recursive
	// source ignores, files that changed after they were ingested).
	Warnings() []string
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
// engine reads every part's schema before it writes.
type SchemaPart = ingest.SchemaPart

// BadRecord is a record a part set aside (Env.DeadLetters).
type BadRecord = ingest.BadRecord

// BadRecorder is implemented by parts that set bad records aside.
type BadRecorder = ingest.BadRecorder

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
