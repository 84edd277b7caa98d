// Package files is the landing-directory source: Parquet, CSV, JSON-lines
// and Debezium change-event files dropped into a directory are read once each, in micro-batches, with
// the options and meaning of Spark's file stream source.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

func init() {
	source.Register("files", func(cfg config.Source, env source.Env) (source.Source, error) {
		return open(cfg, env)
	})
}

// freshWindow is how recently a file must have changed for a missing
// Parquet footer to mean "still being copied" rather than "corrupt".
const freshWindow = time.Minute

// Files reads a landing directory. Files are identified by path: a file
// planned once is never read again by the same query.
type Files struct {
	cfg config.Source
	// deadLetters makes parts set bad lines aside (on-bad-record).
	deadLetters bool
	dir         string
	log         *sourceLog
	now         func() time.Time
	cap         map[string]int64 // the backlog fixed by an available-now run: path to size
	warns       []string
	told        map[string]bool // warnings already given this run, by kind and path
	// store holds the files: the local directory or the object-store
	// prefix dir names.
	store store
	// own are the real paths of the directories floe writes (checkpoint,
	// warehouse, archive), which are never read as input; ownURLs are
	// those on object stores.
	own, ownURLs []string
	// table is the destination table's columns, as the readers would
	// produce them: the types that columns the table has are read as.
	table *arrow.Schema
	// cleaned is the last log batch clean-source handled in this run.
	cleaned *int64
	// inc is auto listing's state (source.listing); listed says how the
	// last batch's listing went, for its progress record.
	inc    incremental
	listed string
	// logger hears how the source lists (see incremental); nil is quiet.
	logger *slog.Logger
}

var (
	_ source.Source          = (*Files)(nil)
	_ source.Excluder        = (*Files)(nil)
	_ source.Discarder       = (*Files)(nil)
	_ source.BacklogReporter = (*Files)(nil)
	_ source.Aliased         = (*Files)(nil)
	_ source.SchemaAware     = (*Files)(nil)
	_ source.RemoteFiles     = (*Files)(nil)
	_ source.MetricsReporter = (*Files)(nil)
)

// offset is the file source's position: the last log batch included.
type offset struct {
	LogOffset int64 `json:"logOffset"`
}

// New opens the source; stateDir holds its log of seen files.
func New(cfg config.Source, stateDir string) (*Files, error) {
	return open(cfg, source.Env{StateDir: stateDir})
}

// open opens the source; env.OwnDirs are the directories floe writes,
// which it never reads.
func open(cfg config.Source, env source.Env) (*Files, error) {
	var (
		dir string
		st  store
	)
	if isURL(cfg.Path) && !strings.HasPrefix(cfg.Path, "file://") {
		o, err := openObjects(cfg.Path, env.Properties)
		if err != nil {
			return nil, err
		}
		dir, st = o.root, o
	} else {
		var err error
		if dir, err = localDir(cfg.Path); err != nil {
			return nil, err
		}
		st = localStore{dir: dir}
	}
	s, err := openOn(cfg, env, dir, st)
	if err != nil {
		_ = st.close()
	}
	return s, err
}

// localDir is the landing directory of a local path, made absolute.
func localDir(p string) (string, error) {
	dir, err := filepath.Abs(localPath(p))
	if err != nil {
		return "", fmt.Errorf("source path %s: %w", p, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("%w: source path %s: %v; create the landing directory or fix source.path", source.ErrConfig, p, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%w: source path %s is not a directory; point source.path at the landing directory", source.ErrConfig, p)
	}
	return dir, nil
}

func openOn(cfg config.Source, env source.Env, dir string, st store) (*Files, error) {
	switch cfg.Format {
	case "parquet", "csv", "json", "debezium-json", "avro":
	default:
		return nil, fmt.Errorf("%w: source format %q is not supported; use parquet, csv, json, debezium-json or avro", source.ErrConfig, cfg.Format)
	}
	if _, err := path.Match(cfg.PathGlobFilter, ""); err != nil {
		// Unchecked, a malformed filter silently matches nothing.
		return nil, fmt.Errorf("%w: source path-glob-filter %q is not a valid pattern (%v); use *, ?, [abc], [a-z] and [^a] as path.Match does", source.ErrConfig, cfg.PathGlobFilter, err)
	}
	log, err := openLog(env.StateFS(), env.StateDir)
	if err != nil {
		return nil, err
	}
	s := &Files{cfg: cfg, dir: dir, store: st, log: log, now: time.Now, told: map[string]bool{}, logger: env.Logger, deadLetters: env.DeadLetters}
	own := env.OwnDirs
	if cfg.ArchiveDir != "" {
		own = append(own, cfg.ArchiveDir)
	}
	for _, o := range own {
		if isURL(o) {
			s.ownURLs = append(s.ownURLs, strings.TrimRight(o, "/"))
		} else if r, err := config.RealPath(o); err == nil {
			s.own = append(s.own, r)
		}
	}
	return s, nil
}

// Description names the directory and format; it identifies the source in
// snapshot summaries, so two queries over one directory are recognised.
// The directory is the path as configured (made absolute), not resolved
// through symbolic links: checkpoints bind this string and the source log
// names files under that path, so resolving it would make every existing
// checkpoint under a linked path mismatch. SameSource sees through links.
func (s *Files) Description() string {
	return fmt.Sprintf("FileStreamSource[%s, format=%s]", s.dir, s.cfg.Format)
}

// SameSource tells whether another query's description names this
// directory, perhaps through a symbolic link, in the same format.
func (s *Files) SameSource(description string) bool {
	inner, ok := strings.CutPrefix(description, "FileStreamSource[")
	if !ok {
		return false
	}
	if inner, ok = strings.CutSuffix(inner, "]"); !ok {
		return false
	}
	i := strings.LastIndex(inner, ", format=")
	if i < 0 || inner[i+len(", format="):] != s.cfg.Format {
		return false
	}
	if _, objects := s.store.(*objectStore); objects {
		return strings.TrimRight(inner[:i], "/") == s.dir
	}
	other, err := filepath.EvalSymlinks(inner[:i])
	if err != nil {
		return false
	}
	mine, err := filepath.EvalSymlinks(s.dir)
	return err == nil && other == mine
}

// InitialOffset is before the first log batch.
func (s *Files) InitialOffset() source.Offset { return encode(offset{LogOffset: -1}) }

// PrepareForAvailableNow fixes the backlog: files arriving later wait for
// the next run, as with Spark's Trigger.AvailableNow.
func (s *Files) PrepareForAvailableNow(ctx context.Context) error {
	// This listing only fixes the backlog. Its warnings are dropped: the
	// listings that plan batches give them, after stale plans are discarded
	// (a file of a failed batch's plan has not been ingested, so it has not
	// "changed after it was ingested"), and without giving them twice.
	warns, told := s.warns, maps.Clone(s.told)
	cands, held, _, err := s.list(ctx, "", nil)
	s.warns, s.told = warns, told
	if err != nil {
		return err
	}
	// Files that wait are left by this run: name them, since the run ends
	// without them. The listings that plan batches name those ignored.
	s.warnFiles("unfinished:", held.unfinished, func(names string) string {
		return fmt.Sprintf("available-now leaves %s for a later run: Parquet without its footer, changed within the last %s, so taken to be still being written", names, freshWindow)
	})
	s.warnFiles("young:", held.young, func(names string) string {
		return fmt.Sprintf("available-now leaves %s for a later run: younger than min-file-age (%s)", names, s.cfg.MinFileAge)
	})
	s.cap = make(map[string]int64, len(cands))
	for _, c := range cands {
		s.cap[c.Path] = c.Size
	}
	// list skips files of log batches planned by an earlier run that never
	// recorded the batch (a crash, or a failed batch whose offsets entry was
	// removed). LatestOffset discards those plans and the files become new
	// again; they were there when this run started, so they belong to its
	// backlog. Without this, such a file was silently skipped by one run.
	// Uncommitted plans are never compacted, so they are all in batches.
	for _, files := range s.log.batches {
		for _, f := range files {
			s.cap[f.Path] = f.Size
		}
	}
	return nil
}

// Backlog tells how much of an available-now run's input is left.
func (s *Files) Backlog() (source.Backlog, bool) {
	if s.cap == nil {
		return source.Backlog{}, false
	}
	b := source.Backlog{TotalFiles: len(s.cap)}
	for p, size := range s.cap {
		if _, ok := s.log.lookup(p); !ok {
			b.RemainingFiles++
			b.RemainingBytes += size
		}
	}
	return b, true
}

// Warnings returns and clears what planning found worth telling.
func (s *Files) Warnings() []string {
	w := s.warns
	s.warns = nil
	return w
}

// LatestOffset lists the directory, takes new files up to limit, records
// them as the next log batch and returns its id.
func (s *Files) LatestOffset(ctx context.Context, start source.Offset, limit source.ReadLimit) (source.Offset, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	if err := s.log.discardAfter(st.LogOffset); err != nil {
		return nil, err
	}
	now := s.now()
	var found int
	var foundBytes int64
	enough := func(e fileEntry) bool {
		if _, ok := s.cap[e.Path]; s.cap != nil && !ok {
			return false
		}
		found++
		foundBytes += e.Size
		return limit.MaxFiles > 0 && found >= limit.MaxFiles || limit.MaxBytes > 0 && foundBytes >= limit.MaxBytes
	}
	after := s.startAfter(now)
	cands, held, l, err := s.list(ctx, after, enough)
	if err != nil {
		return nil, err
	}
	s.listed = "full"
	if after != "" && !s.inc.off {
		s.listed = "incremental"
	}
	s.warnHeld(held)
	var picked []fileEntry
	var bytes int64
	for _, c := range cands {
		if _, ok := s.cap[c.Path]; s.cap != nil && !ok {
			continue
		}
		if limit.MaxFiles > 0 && len(picked) >= limit.MaxFiles {
			break
		}
		if limit.MaxBytes > 0 && len(picked) > 0 && bytes >= limit.MaxBytes {
			break
		}
		picked = append(picked, c)
		bytes += c.Size
	}
	if len(picked) == 0 {
		s.planned(l, cands, nil, now)
		return start, nil
	}
	n := st.LogOffset + 1
	if err := s.log.add(n, picked); err != nil {
		return nil, err
	}
	s.planned(l, cands, picked, now)
	return encode(offset{LogOffset: n}), nil
}

// Metrics tells, in a batch's progress record, how its listing went:
// "full" or "incremental" (source.listing).
func (s *Files) Metrics(source.Offset) (source.Offset, map[string]string) {
	if s.listed == "" {
		return nil, nil
	}
	return nil, map[string]string{"listing": s.listed}
}

// batchFiles lists the files of log batches (start, end].
func (s *Files) batchFiles(start, end source.Offset) ([]fileEntry, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	en, err := decode(end)
	if err != nil {
		return nil, err
	}
	return s.log.files(st.LogOffset, en.LogOffset)
}

// Read turns the files of log batches (start, end] into parts.
func (s *Files) Read(ctx context.Context, start, end source.Offset) ([]source.Part, error) {
	entries, err := s.batchFiles(start, end)
	if err != nil {
		return nil, err
	}
	parts := make([]source.Part, len(entries))
	fps := make([]*filePart, len(entries))
	for i, e := range entries {
		p := &filePart{entry: e, cfg: s.cfg, table: s.table, store: s.store, ctx: ctx, deadLetters: s.deadLetters}
		if s.cfg.Format == "parquet" {
			parts[i] = &parquetPart{p}
		} else {
			parts[i] = p
		}
		fps[i] = p
	}
	if o, ok := s.store.(*objectStore); ok && s.cfg.Format == "parquet" {
		go prefetchTails(ctx, o, fps)
	}
	return parts, nil
}

// SetTableSchema takes the columns of the table the next batch goes to:
// an inferred column the table has is read as the table's type where the
// file's values allow (see asTable). Types the readers do not produce from
// text (uuid, binary, fixed, nested types) are left to inference.
func (s *Files) SetTableSchema(schema *iceberg.Schema) {
	s.table = nil
	if schema == nil {
		return
	}
	var fields []arrow.Field
	for _, f := range schema.Fields() {
		switch f.Type.(type) {
		case iceberg.UUIDType, iceberg.BinaryType:
			continue
		}
		if dt, err := jsonrows.ColumnType(f.Type.String()); err == nil {
			fields = append(fields, arrow.Field{Name: f.Name, Type: dt, Nullable: true})
		}
	}
	s.table = arrow.NewSchema(fields, nil)
}

// SizeBytes is the file's size when it was planned.
func (p *filePart) SizeBytes() int64 { return p.entry.Size }

// Exclude drops files from the uncommitted log batch end: a file still
// being written becomes new again, a quarantined one is gone from the
// directory.
func (s *Files) Exclude(ctx context.Context, end source.Offset, names []string) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	var kept []fileEntry
	for _, f := range s.log.batches[en.LogOffset] {
		if !drop[f.Path] {
			kept = append(kept, f)
		}
	}
	if len(kept)+len(names) != len(s.log.batches[en.LogOffset]) {
		return fmt.Errorf("cannot drop %v from log batch %d of %s: not all of them are in it", names, en.LogOffset, s.dir)
	}
	return s.log.rewrite(en.LogOffset, kept)
}

// Discard forgets the plan of a batch the engine dropped before it
// committed anything (its offsets entry is gone): the log batches after
// start are removed and their files are new again. Without it the plan
// stays in the checkpoint until the next LatestOffset discards it.
func (s *Files) Discard(ctx context.Context, start, end source.Offset) error {
	st, err := decode(start)
	if err != nil {
		return err
	}
	return s.log.discardAfter(st.LogOffset)
}

// Commit cleans up the files of committed batches (clean-source) and
// compacts the log.
func (s *Files) Commit(ctx context.Context, end source.Offset) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	if s.cfg.CleanSource == "archive" || s.cfg.CleanSource == "delete" {
		for id, files := range s.log.batches {
			// Batches cleaned by this run are skipped; after a restart the
			// uncompacted ones are visited again, and their files are gone.
			if id > en.LogOffset || (s.cleaned != nil && id <= *s.cleaned) {
				continue
			}
			for _, f := range files {
				if err := s.clean(ctx, f); err != nil {
					s.warns = append(s.warns, err.Error())
				}
			}
		}
	}
	cleaned := en.LogOffset
	s.cleaned = &cleaned
	// max-file-age lets the log forget files older than the newest seen by
	// more than it: a listing ignores them anyway.
	oldest := int64(math.MinInt64)
	if newest, ok := s.log.maxModTime(); ok && s.cfg.MaxFileAge > 0 {
		oldest = newest - time.Duration(s.cfg.MaxFileAge).Milliseconds()
	}
	return s.log.compactThrough(en.LogOffset, oldest)
}

// clean archives or deletes one committed file. Files already gone were
// cleaned by an earlier run that stopped before compacting the log.
func (s *Files) clean(ctx context.Context, f fileEntry) error {
	p := f.Path
	now, err := s.store.stat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean-source %s: %w", p, err)
	}
	if !sameVersion(f, now) {
		// Rewritten in place since it was ingested: the new content was
		// never read, so it is neither deleted nor archived.
		return fmt.Errorf("clean-source left %s alone: it changed after it was ingested", p)
	}
	if s.cfg.CleanSource == "delete" {
		if err := s.store.remove(ctx, p); err != nil {
			return fmt.Errorf("clean-source delete %s: %w", p, err)
		}
		return nil
	}
	dst, err := s.archivePath(p)
	if err != nil {
		return err
	}
	if err := s.store.archive(ctx, f, dst); err != nil {
		return fmt.Errorf("clean-source archive %s to %s: %w", p, dst, err)
	}
	return nil
}

// OpenFile reads a landing file as it is now, for the quarantine.
func (s *Files) OpenFile(ctx context.Context, path string) (io.ReadCloser, error) {
	e, err := s.store.stat(ctx, path)
	if err != nil {
		return nil, err
	}
	return s.store.open(ctx, e, nil)
}

// RemoveFile deletes a landing file, for the quarantine.
func (s *Files) RemoveFile(ctx context.Context, path string) error { return s.store.remove(ctx, path) }

// archivePath is where clean-source archives the landing file p: at its
// path relative to the landing root, below the archive directory.
func (s *Files) archivePath(p string) (string, error) {
	rel, err := s.store.rel(p)
	if err != nil {
		return "", err
	}
	if isURL(s.cfg.ArchiveDir) {
		return strings.TrimRight(s.cfg.ArchiveDir, "/") + "/" + rel, nil
	}
	return filepath.Join(s.cfg.ArchiveDir, filepath.FromSlash(rel)), nil
}

// Close releases the object-store client; every file handle is owned by
// its part.
func (s *Files) Close() error { return s.store.close() }

func encode(o offset) source.Offset { return source.EncodeOffset(o) }

func decode(o source.Offset) (offset, error) { return source.DecodeOffset[offset](o, "file source") }
