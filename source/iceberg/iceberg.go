// Package iceberg is the Iceberg table source: the data files appended to a
// table of the pipeline's catalog are read once each, in micro-batches,
// with the offsets, options and meaning of Spark's Iceberg streaming source
// (SparkMicroBatchStream), and Flink's options for where a new query starts
// (start.go).
//
// The unit of work is one data file added by an append snapshot. Replace
// snapshots (compactions) add no new rows and are skipped; overwrite and
// delete snapshots stop the query unless the matching
// streaming-skip-*-snapshots option is "true", and so do snapshots expired
// before the query read them. A query keeps a tag on the table at its
// position (registerPosition), which floe's expiry honours by keeping
// every snapshot after it.
package iceberg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/scan"
	"github.com/floe-io/floe/source"
)

func init() {
	source.Register("iceberg", func(cfg config.Source, env source.Env) (source.Source, error) {
		return New(cfg, env)
	})
}

// Spark's read option names. The per-batch limits
// (streaming-max-files-per-micro-batch, streaming-max-rows-per-micro-batch)
// reach the source as the engine's source.ReadLimit, so that a once trigger
// can ignore them.
const (
	OptStreamFromTimestamp = "stream-from-timestamp"
	OptSkipOverwriteSnaps  = "streaming-skip-overwrite-snapshots"
	OptSkipDeleteSnapshots = "streaming-skip-delete-snapshots"
	OptSkipExpiredSnaps    = "streaming-skip-expired-snapshots"
	OptAsyncPlanning       = "async-micro-batch-planning-enabled"
	OptPollingIntervalMs   = "streaming-snapshot-polling-interval-ms"
	OptPreloadFileLimit    = "async-queue-preload-file-limit"
	OptPreloadRowLimit     = "async-queue-preload-row-limit"
	noSnapshot             = -1
)

// Spark's defaults for the asynchronous planner.
const (
	defaultPollingInterval  = 30 * time.Second
	defaultPreloadFileLimit = 100
	defaultPreloadRowLimit  = 100_000
)

// Source reads the appends of one table.
type Source struct {
	name  string
	ident table.Identifier
	cat   catalog.Catalog
	log   *slog.Logger
	// read holds the filter and the columns to read (Filter, Columns,
	// Drop).
	read scan.Options

	// changelog reads each snapshot's row-level changes (source.changelog)
	// instead of its appended files: one unit a snapshot.
	changelog bool

	// start is where a query with no position begins; latest is the
	// snapshot fromLatestSnapshot resolved to, once it has.
	start  start
	latest *int64
	// stateDir, through stateFS, keeps latest for a re-run of the
	// query's first batch; empty outside a pipeline.
	stateDir string
	stateFS  source.FS

	skipOverwrite bool
	skipDelete    bool
	skipExpired   bool

	// queryID names the reader's tag on the table (registerPosition);
	// empty outside a pipeline, which then registers nothing.
	queryID string
	// registered is the snapshot the tag was last set to by this run.
	registered int64

	// capSnapshot is the table's current snapshot when an available-now
	// run started: later snapshots wait for the next run. noSnapshot when
	// the table had none; nil outside available-now.
	capSnapshot *int64

	async *planner // nil unless async planning is on

	mu sync.Mutex
	// tbl is the table as last loaded (or polled, with async planning).
	tbl *table.Table
	// added caches the data files each snapshot added: a snapshot never
	// changes, so its manifests are read once per query, not once per
	// batch.
	added    map[int64]addedFiles
	reader   *scan.FileReader
	changes  *scan.ChangeReader
	readerAt string // the schema and specs reader (or changes) was built for
	warnings []string
	warned   map[int64]bool // expired start snapshots already reported
}

var (
	_ source.Source     = (*Source)(nil)
	_ source.QueryAware = (*Source)(nil)
	_ source.Resumable  = (*Source)(nil)
)

// offset is the position: every unit up to and including the first
// Position added data files (in manifest order) of snapshot SnapshotID has
// been read. SnapshotID -1 is before the query's start snapshot (the
// first, or the one the start options name; see start). TimestampMs is the
// snapshot's commit time, which tells where to go on if the snapshot is
// expired before the query resumes.
type offset struct {
	SnapshotID  int64 `json:"snapshot_id"`
	Position    int   `json:"position"`
	TimestampMs int64 `json:"timestamp_ms,omitempty"`
}

// New builds the source; the table is loaded when batches are planned, so
// it need not exist yet.
func New(cfg config.Source, env source.Env) (*Source, error) {
	if env.Catalog == nil {
		return nil, fmt.Errorf("%w: the iceberg source needs the pipeline's catalog", source.ErrConfig)
	}
	ident, err := ingest.ParseIdent(cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: source.table: %v", source.ErrConfig, err)
	}
	log := env.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Source{
		name: cfg.Table, ident: ident, cat: env.Catalog, log: log,
		read:  scan.Options{Filter: cfg.Filter, Columns: cfg.Keep, Drop: cfg.Drop},
		added: map[int64]addedFiles{}, warned: map[int64]bool{}, registered: noSnapshot, changelog: cfg.Changelog,
		stateDir: env.StateDir, stateFS: env.StateFS(),
	}
	num := func(k string, def int64) (int64, error) {
		v, ok := cfg.Options[k]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: source.options.%s: %q is not a non-negative whole number", source.ErrConfig, k, v)
		}
		return n, nil
	}
	flag := func(k string) bool { return strings.EqualFold(strings.TrimSpace(cfg.Options[k]), "true") }
	if s.start, err = parseStart(cfg.Options); err != nil {
		return nil, err
	}
	s.skipOverwrite, s.skipDelete, s.skipExpired = flag(OptSkipOverwriteSnaps), flag(OptSkipDeleteSnapshots), flag(OptSkipExpiredSnaps)
	if flag(OptAsyncPlanning) {
		ms, err := num(OptPollingIntervalMs, defaultPollingInterval.Milliseconds())
		if err != nil {
			return nil, err
		}
		files, err := num(OptPreloadFileLimit, defaultPreloadFileLimit)
		if err != nil {
			return nil, err
		}
		rows, err := num(OptPreloadRowLimit, defaultPreloadRowLimit)
		if err != nil {
			return nil, err
		}
		s.async = newPlanner(s, time.Duration(max(ms, 1))*time.Millisecond, int(files), rows)
	}
	return s, nil
}

// Description names the table: two queries reading one table read the
// same data.
func (s *Source) Description() string {
	if s.changelog {
		// Another reading of the table: a checkpoint of its appends is not
		// one of its changes.
		return "iceberg-changelog:" + s.name
	}
	return "iceberg:" + s.name
}

// InitialOffset is before the first snapshot to read.
func (s *Source) InitialOffset() source.Offset { return encode(offset{SnapshotID: noSnapshot}) }

// PrepareForAvailableNow fixes the end of the backlog at the table's
// current snapshot.
func (s *Source) PrepareForAvailableNow(ctx context.Context) error {
	tbl, err := s.load(ctx)
	if err != nil {
		return err
	}
	id := int64(noSnapshot)
	if cur := tbl.CurrentSnapshot(); cur != nil {
		id = cur.SnapshotID
	}
	s.capSnapshot = &id
	return nil
}

// load loads the table from the catalog and remembers it.
func (s *Source) load(ctx context.Context) (*table.Table, error) {
	tbl, err := s.cat.LoadTable(ctx, s.ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("iceberg source: table %s does not exist in the catalog; check source.table (--source-table) and the catalog settings (`floe table list` shows the tables): %w", s.name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("iceberg source: load table %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.tbl = tbl
	s.mu.Unlock()
	return tbl, nil
}

// table is the table a batch starting at start is planned on: loaded now,
// or, with async planning, the planner's latest poll.
func (s *Source) table(ctx context.Context, start offset) (*table.Table, error) {
	if s.async == nil {
		return s.load(ctx)
	}
	return s.async.table(ctx, start)
}

// tableWith is a table whose metadata knows snapshot id: the last one
// loaded if it does (so a batch is read from the metadata it was planned
// on), else a fresh load.
func (s *Source) tableWith(ctx context.Context, id int64) (*table.Table, error) {
	s.mu.Lock()
	tbl := s.tbl
	s.mu.Unlock()
	if tbl != nil && (id == noSnapshot || tbl.Metadata().SnapshotByID(id) != nil) {
		return tbl, nil
	}
	return s.load(ctx)
}

// LatestOffset walks the snapshots after start and takes their added data
// files up to the limits.
func (s *Source) LatestOffset(ctx context.Context, start source.Offset, limit source.ReadLimit) (source.Offset, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	tbl, err := s.table(ctx, st)
	if err != nil {
		return nil, err
	}
	var picked []unit
	var rows, bytes int64
	err = s.walk(ctx, tbl, st, func(u unit) bool {
		if limit.MaxFiles > 0 && len(picked) >= limit.MaxFiles {
			return false
		}
		if u.file == nil {
			// A changelog's snapshot: only the unit count limits it.
			picked = append(picked, u)
			return true
		}
		if len(picked) > 0 && ((limit.MaxRows > 0 && (rows >= limit.MaxRows || u.file.Count() > limit.MaxRows)) ||
			(limit.MaxBytes > 0 && bytes >= limit.MaxBytes)) {
			return false // a file larger than the row limit is a batch alone
		}
		picked = append(picked, u)
		rows += u.file.Count()
		bytes += u.file.FileSizeBytes()
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(picked) == 0 {
		return start, nil
	}
	last := picked[len(picked)-1]
	end := offset{SnapshotID: last.snapshot, Position: last.pos, TimestampMs: last.timestampMs}
	if s.async != nil {
		s.async.advance(end)
	}
	return encode(end), nil
}

// Read plans one part per data file of (start, end].
func (s *Source) Read(ctx context.Context, start, end source.Offset) ([]source.Part, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	en, err := decode(end)
	if err != nil {
		return nil, err
	}
	tbl, err := s.tableWith(ctx, en.SnapshotID)
	if err != nil {
		return nil, err
	}
	if tbl.Metadata().SnapshotByID(en.SnapshotID) == nil {
		return nil, fmt.Errorf("%w: iceberg source: table %s: snapshot %d, where batch %s ends, was expired before the batch was committed; "+
			"its files cannot be read again, so the query cannot go on exactly once (start a new checkpoint)", source.ErrCannotContinue, s.name, en.SnapshotID, end)
	}
	var units []unit
	reached := false
	err = s.walk(ctx, tbl, st, func(u unit) bool {
		if u.snapshot == en.SnapshotID && u.pos > en.Position {
			return false
		}
		units = append(units, u)
		if u.snapshot == en.SnapshotID && u.pos == en.Position {
			reached = true
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if !reached {
		// Read as empty, the batch would be recorded as having read files
		// that it did not.
		return nil, fmt.Errorf("%w: iceberg source: table %s: batch end %s is not after %s in the table's history (was the table rolled back?); "+
			"the batch cannot be re-run exactly once (start a new checkpoint)", source.ErrCannotContinue, s.name, end, start)
	}
	if s.changelog {
		cr, err := s.changeReader(ctx, tbl)
		if err != nil {
			return nil, err
		}
		parts := make([]source.Part, len(units))
		for i, u := range units {
			parts[i] = &changesPart{reader: cr, tbl: tbl, snap: tbl.SnapshotByID(u.snapshot)}
		}
		return parts, nil
	}
	rd, err := s.fileReader(ctx, tbl)
	if err != nil {
		return nil, err
	}
	parts := make([]source.Part, len(units))
	for i, u := range units {
		// An appended file has no deletes at its snapshot: the snapshot
		// added data files only, and older deletes never apply to newer
		// data (as in Spark's MicroBatches).
		task := table.FileScanTask{File: u.file, Start: 0, Length: u.file.FileSizeBytes()}
		parts[i] = &part{reader: rd, task: task}
	}
	return parts, nil
}

// fileReader is the reader for tbl's current schema and specs, kept while
// they do not change.
func (s *Source) fileReader(ctx context.Context, tbl *table.Table) (*scan.FileReader, error) {
	md := tbl.Metadata()
	key := fmt.Sprintf("%d/%d", md.CurrentSchema().ID, len(md.PartitionSpecs()))
	s.mu.Lock()
	rd := s.reader
	ok := rd != nil && s.readerAt == key
	s.mu.Unlock()
	if ok {
		return rd, nil
	}
	rd, err := scan.NewFileReader(ctx, tbl, s.read)
	if err != nil {
		return nil, fmt.Errorf("iceberg source: table %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.reader, s.readerAt = rd, key
	s.mu.Unlock()
	return rd, nil
}

// Commit forgets the cached files of snapshots before end, and moves the
// query's tag on the table to end's snapshot (registerPosition).
func (s *Source) Commit(ctx context.Context, end source.Offset) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if at, ok := s.added[en.SnapshotID]; ok {
		for id, a := range s.added {
			if a.before(at) {
				delete(s.added, id)
			}
		}
	}
	s.mu.Unlock()
	return s.registerPosition(ctx, en.SnapshotID)
}

// OwnPosition is always true: the offset (a snapshot and how many of its
// added files were read) is all the source keeps of a query once its first
// batch is committed; its state holds only the latest snapshot that a
// query starting there resolved before that.
func (s *Source) OwnPosition(config.Trigger) bool { return true }

// SetQueryID names the query, whose tag registerPosition keeps.
func (s *Source) SetQueryID(id string) { s.queryID = id }

// Close stops the background planner; the catalog belongs to the pipeline.
func (s *Source) Close() error {
	if s.async != nil {
		s.async.close()
	}
	return nil
}

// Warnings returns what planning found since the last call.
func (s *Source) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warnings
	s.warnings = nil
	return w
}

// part is one data file.
type part struct {
	reader *scan.FileReader
	task   table.FileScanTask
}

func (p *part) Name() string     { return p.task.File.FilePath() }
func (p *part) SizeBytes() int64 { return p.task.File.FileSizeBytes() }

// Schema is the schema Open's reader reports, known from the table's
// metadata without reading the file.
func (p *part) Schema(ctx context.Context) (*arrow.Schema, error) { return p.reader.Schema(), nil }

// Open streams the file's rows, with the source's filter and columns.
func (p *part) Open(ctx context.Context) (array.RecordReader, error) {
	return p.reader.Open(ctx, []table.FileScanTask{p.task}), nil
}

func encode(o offset) source.Offset { return source.EncodeOffset(o) }

func decode(o source.Offset) (offset, error) { return source.DecodeOffset[offset](o, "iceberg source") }
