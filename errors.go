package floe

import (
	"errors"

	"github.com/floe-io/floe/internal/ingest"
)

// Sentinel errors. Callers test them with errors.Is; messages name the
// thing, the cause and the fix. Those the stages share are declared once,
// in package ingest, and named here by alias, so errors.Is holds whichever
// package wrapped them.
var (
	// ErrConfig marks an invalid pipeline configuration.
	ErrConfig = ingest.ErrConfig
	// ErrBadInput marks input that cannot be ingested as it is.
	ErrBadInput = ingest.ErrBadInput
	// ErrSchemaMismatch marks input whose schema does not fit the table.
	ErrSchemaMismatch = ingest.ErrSchemaMismatch
	// ErrCommit marks a table commit that failed after all retries.
	ErrCommit = ingest.ErrCommit
	// ErrQueryConflict marks a new query whose table already holds the
	// output of another query reading the same source.
	ErrQueryConflict = ingest.ErrQueryConflict
	// ErrTableUnreadable marks a table whose current metadata file is
	// gone (deleted by hand or by another tool): a stream stops on it
	// instead of retrying.
	ErrTableUnreadable = ingest.ErrTableUnreadable
	// ErrUnstableFile marks a file that changed while it was read: it is
	// still being written and is left for a later batch.
	ErrUnstableFile = ingest.ErrUnstableFile
	// ErrTableLost marks a table to be created where one its catalog lost
	// still lies (its metadata files); the message names the registration.
	ErrTableLost = ingest.ErrTableLost

	// ErrCheckpointMismatch marks a checkpoint that belongs to another sink
	// or source than the pipeline using it, or that does not match the
	// record its table holds of the query (damaged, restored from an older
	// backup, or its table lost by the catalog).
	ErrCheckpointMismatch = ingest.ErrCheckpointMismatch
	// ErrCheckpointInUse marks a checkpoint another run holds.
	ErrCheckpointInUse = ingest.ErrCheckpointInUse
	// ErrSourceCannotContinue marks a source that cannot go on from the
	// checkpoint's offset, such as a table history it cannot read: a
	// retry fails the same way, so a stream stops.
	ErrSourceCannotContinue = ingest.ErrSourceCannotContinue
	// ErrNoInput marks a run that found nothing to ingest when the caller
	// asked for that to be an error (--fail-on-empty).
	ErrNoInput = errors.New("no input found")
)

// BadFileError reports an input file that cannot be ingested: corrupt,
// empty, unreadable, or not matching the table. Path names the file;
// errors.Is(err, ErrBadInput) holds for every BadFileError.
type BadFileError = ingest.BadFileError

// UnstableFileError reports a file that is still being written;
// errors.Is(err, ErrUnstableFile) holds for it.
type UnstableFileError = ingest.UnstableFileError
