package ingest

import (
	"errors"
	"fmt"
)

// Sentinel errors shared by the stages. Callers test them with errors.Is;
// messages name the thing, the cause and the fix.
var (
	// ErrConfig marks an invalid pipeline configuration.
	ErrConfig = errors.New("invalid configuration")
	// ErrBadInput marks input that cannot be ingested as it is.
	ErrBadInput = errors.New("bad input")
	// ErrSchemaMismatch marks input whose schema does not fit the table.
	ErrSchemaMismatch = fmt.Errorf("%w: schema mismatch", ErrBadInput)
	// ErrCommit marks a table commit that failed after all retries.
	ErrCommit = errors.New("commit failed")
	// ErrQueryConflict marks a new query whose table already holds the
	// output of another query reading the same source.
	ErrQueryConflict = errors.New("table already written by another query from this source")
	// ErrTableUnreadable marks a table whose current metadata file is
	// gone: no retry brings it back.
	ErrTableUnreadable = errors.New("table metadata unreadable")
	// ErrTableLost marks a table to be created where a table the catalog
	// lost still lies: only registering it again, or deleting it, repairs.
	ErrTableLost = errors.New("table lost by its catalog")
	// ErrUnstableFile marks a file that changed while it was read: it is
	// still being written and is left for a later batch.
	ErrUnstableFile = errors.New("file changed while being read")
	// ErrSourceCannotContinue marks a source that cannot go on from the
	// checkpoint's offset: a retry fails the same way, so a stream stops.
	ErrSourceCannotContinue = errors.New("source cannot continue")
	// ErrCheckpointMismatch marks a checkpoint that belongs to another
	// sink or source than the pipeline using it, or that does not match
	// the record its table holds of the query.
	ErrCheckpointMismatch = errors.New("checkpoint mismatch")
	// ErrCheckpointInUse marks a checkpoint another run holds.
	ErrCheckpointInUse = errors.New("checkpoint in use")
)

// BadFileError reports an input file that cannot be ingested: corrupt,
// empty, unreadable, or not matching the table. Path names the file.
type BadFileError struct {
	Path string
	Err  error
}

func (e *BadFileError) Error() string { return fmt.Sprintf("bad input file %s: %v", e.Path, e.Err) }

// Unwrap exposes the cause; errors.Is(err, ErrBadInput) holds for every
// BadFileError.
func (e *BadFileError) Unwrap() []error { return []error{ErrBadInput, e.Err} }

// BadMessageError reports a message of a Kafka topic that cannot be
// ingested: it names the message where BadFileError would name a file,
// since a message is no file and cannot be set aside as one.
type BadMessageError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *BadMessageError) Error() string {
	return fmt.Sprintf("bad message at kafka topic %s partition %d offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap exposes the cause; errors.Is(err, ErrBadInput) holds for every
// BadMessageError.
func (e *BadMessageError) Unwrap() []error { return []error{ErrBadInput, e.Err} }

// NamesInput tells whether err already names the file or message that
// caused it, so that a reader does not name the part around it again.
func NamesInput(err error) bool {
	var bf *BadFileError
	var bm *BadMessageError
	return errors.As(err, &bf) || errors.As(err, &bm)
}

// UnstableFileError reports a file that is still being written.
type UnstableFileError struct {
	Path   string
	Reason string
}

func (e *UnstableFileError) Error() string {
	return fmt.Sprintf("file %s is still being written (%s); left for a later batch", e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrUnstableFile) hold.
func (e *UnstableFileError) Unwrap() error { return ErrUnstableFile }
