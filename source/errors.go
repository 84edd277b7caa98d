package source

import "github.com/floe-io/floe/internal/ingest"

// The errors a source returns, for errors.Is; the engine and package floe
// name the same values.
var (
	// ErrConfig marks an invalid source configuration.
	ErrConfig = ingest.ErrConfig
	// ErrBadInput marks input that cannot be ingested as it is.
	ErrBadInput = ingest.ErrBadInput
	// ErrCannotContinue marks a source that cannot go on from the
	// checkpoint's offset, such as a table history it cannot read: a
	// retry fails the same way, so a stream stops.
	ErrCannotContinue = ingest.ErrSourceCannotContinue
)

// BadFileError reports an input file that cannot be ingested: corrupt,
// empty, unreadable, or not matching the table. Path names the file;
// errors.Is(err, ErrBadInput) holds for every BadFileError.
type BadFileError = ingest.BadFileError

// UnstableFileError reports a file that is still being written; the
// engine leaves it for a later batch.
type UnstableFileError = ingest.UnstableFileError
