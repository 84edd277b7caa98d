package source

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
)

// Env is what a source gets besides its configuration.
type Env struct {
	// StateDir is the source's private directory inside the checkpoint.
	StateDir string
	// FS is the checkpoint's file system, through which a source reads and
	// writes StateDir; nil is the operating system's (StateFS).
	FS FS
	// OwnDirs are the directories and object-store prefixes floe writes
	// for the pipeline (the checkpoint, the warehouse): a source reading a
	// directory tree or a prefix never reads them, or it would ingest
	// floe's own output.
	OwnDirs []string
	// Properties are the catalog's properties: the credentials and
	// endpoints (s3.*, gcs.*, adls.*) a source reading an object store
	// uses, as the warehouse does.
	Properties map[string]string
	// Catalog is the pipeline's catalog, for sources that read tables.
	Catalog catalog.Catalog
	// DeadLetters makes the source's parts set a record they cannot read
	// as a row aside (ingest.BadRecorder) instead of failing the batch:
	// on-bad-record: dead-letter.
	DeadLetters bool
	// Logger receives what a source does in the background (a planner's
	// failed poll); warnings about the data go through Warnings.
	Logger *slog.Logger
	// Upsert is set when the pipeline merges its rows by key (sink.mode
	// upsert), nil otherwise.
	Upsert *Upsert
}

// Upsert tells a source whose input deletes a key without a row (a Kafka
// tombstone: a null value under the key) how to hand such a delete over:
// as a row of the key's columns whose OpColumn holds Delete.
type Upsert struct {
	// Keys are the key columns the sink names (sink.identifier-fields);
	// nil when the table's identifier fields are the key.
	Keys []string
	// OpColumn is the column whose code says each row's operation; Delete
	// and Upsert are codes that delete and upsert.
	OpColumn, Delete, Upsert string
	// AddOp says the rows have no OpColumn of their own: the source adds
	// it to every row, Upsert to those of values.
	AddOp bool
}

// StateFS is the file system a source keeps StateDir through: FS, or the
// operating system's when FS is nil.
func (e Env) StateFS() FS {
	if e.FS == nil {
		return OSFS
	}
	return e.FS
}

// Factory builds a source from its configuration.
type Factory func(cfg config.Source, env Env) (Source, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a source type available to pipelines by name. Source
// packages call it from init, like database/sql drivers.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	factories[name] = f
}

// New builds the source cfg.Type names.
func New(cfg config.Source, env Env) (Source, error) {
	mu.RLock()
	f, ok := factories[cfg.Type]
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	mu.RUnlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("%w: source type %q is not registered (known: %v); import its package", ErrConfig, cfg.Type, names)
	}
	return f(cfg, env)
}
