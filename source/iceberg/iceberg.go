// Package iceberg is the Iceberg table source: the data files appended to a
// table of the pipeline's catalog are read once each, in micro-batches,
// with the offsets, options and meaning of Spark's Iceberg streaming source
// (SparkMicroBatchStream).
//
// The unit of work is one data file added by an append snapshot. Replace
// snapshots (compactions) add no new rows and are skipped; overwrite and
// delete snapshots stop the query unless the matching
// streaming-skip-*-snapshots option is "true".
package iceberg

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

func init() {
	floe.RegisterSource("iceberg", func(cfg config.Source, env floe.SourceEnv) (floe.Source, error) {
		return New(cfg, env.Catalog)
	})
}

// Spark's read option names.
const (
	OptStreamFromTimestamp = "stream-from-timestamp"
	OptMaxFilesPerBatch    = "streaming-max-files-per-micro-batch"
	OptMaxRowsPerBatch     = "streaming-max-rows-per-micro-batch"
	OptSkipOverwriteSnaps  = "streaming-skip-overwrite-snapshots"
	OptSkipDeleteSnapshots = "streaming-skip-delete-snapshots"
	noSnapshot             = -1
)

// Source reads the appends of one table.
type Source struct {
	name  string
	ident table.Identifier
	cat   catalog.Catalog

	fromTimestamp int64 // epoch ms; 0 means from the first snapshot
	maxFiles      int
	maxRows       int64
	skipOverwrite bool
	skipDelete    bool

	// capSnapshot is the table's current snapshot when an available-now
	// run started: later snapshots wait for the next run. noSnapshot when
	// the table had none; nil outside available-now.
	capSnapshot *int64
}

var (
	_ floe.Source             = (*Source)(nil)
	_ floe.AvailableNowSource = (*Source)(nil)
)

// offset is the position: every unit up to and including the first
// Position added data files (in manifest order) of snapshot SnapshotID has
// been read. SnapshotID -1 is before the first snapshot (or before the
// first one at or after stream-from-timestamp).
type offset struct {
	SnapshotID int64 `json:"snapshot_id"`
	Position   int   `json:"position"`
}

// New builds the source; the table is loaded when batches are planned, so
// it need not exist yet.
func New(cfg config.Source, cat catalog.Catalog) (*Source, error) {
	if cat == nil {
		return nil, fmt.Errorf("%w: the iceberg source needs the pipeline's catalog", floe.ErrConfig)
	}
	ident, err := floe.ParseIdent(cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: source.table: %v", floe.ErrConfig, err)
	}
	s := &Source{name: cfg.Table, ident: ident, cat: cat}
	num := func(k string) (int64, error) {
		v, ok := cfg.Options[k]
		if !ok {
			return 0, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: source.options.%s: %q is not a non-negative whole number", floe.ErrConfig, k, v)
		}
		return n, nil
	}
	if s.fromTimestamp, err = num(OptStreamFromTimestamp); err != nil {
		return nil, err
	}
	n, err := num(OptMaxFilesPerBatch)
	if err != nil {
		return nil, err
	}
	s.maxFiles = int(n)
	if s.maxRows, err = num(OptMaxRowsPerBatch); err != nil {
		return nil, err
	}
	s.skipOverwrite = strings.EqualFold(strings.TrimSpace(cfg.Options[OptSkipOverwriteSnaps]), "true")
	s.skipDelete = strings.EqualFold(strings.TrimSpace(cfg.Options[OptSkipDeleteSnapshots]), "true")
	return s, nil
}

// Description names the table: two queries reading one table read the
// same data.
func (s *Source) Description() string { return "iceberg:" + s.name }

// InitialOffset is before the first snapshot to read.
func (s *Source) InitialOffset() floe.Offset { return encode(offset{SnapshotID: noSnapshot}) }

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

func (s *Source) load(ctx context.Context) (*table.Table, error) {
	tbl, err := s.cat.LoadTable(ctx, s.ident)
	if err != nil {
		return nil, fmt.Errorf("iceberg source: load table %s: %w", s.name, err)
	}
	return tbl, nil
}

// unit is one added data file of an append snapshot.
type unit struct {
	snapshot int64
	pos      int // 1-based position within the snapshot's added files
	file     iceberg.DataFile
}

// LatestOffset walks the snapshots after start and takes their added data
// files up to the limits.
func (s *Source) LatestOffset(ctx context.Context, start floe.Offset, limit floe.ReadLimit) (floe.Offset, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	tbl, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	maxFiles := minPositive(s.maxFiles, limit.MaxFiles)
	maxRows := minPositive(s.maxRows, limit.MaxRows)
	var picked []unit
	var rows, bytes int64
	err = s.walk(ctx, tbl, st, func(u unit) bool {
		if maxFiles > 0 && len(picked) >= maxFiles {
			return false
		}
		if len(picked) > 0 && ((maxRows > 0 && rows >= maxRows) || (limit.MaxBytes > 0 && bytes >= limit.MaxBytes)) {
			return false
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
	return encode(offset{SnapshotID: last.snapshot, Position: last.pos}), nil
}

// walk calls f for each unit after st in commit order, until f returns
// false.
func (s *Source) walk(ctx context.Context, tbl *table.Table, st offset, f func(unit) bool) error {
	snaps, err := s.after(tbl, st.SnapshotID)
	if err != nil {
		return err
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("iceberg source: table %s: %w", s.name, err)
	}
	for _, snap := range snaps {
		files, err := s.units(fio, snap)
		if err != nil {
			return err
		}
		skip := 0
		if snap.SnapshotID == st.SnapshotID {
			skip = st.Position
		}
		for i := skip; i < len(files); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !f(unit{snapshot: snap.SnapshotID, pos: i + 1, file: files[i]}) {
				return nil
			}
		}
	}
	return nil
}

// after returns, oldest first, the snapshots from start (included, since
// part of its files may be left) to the end of the backlog: the current
// snapshot, or the one fixed by an available-now run.
func (s *Source) after(tbl *table.Table, start int64) ([]*table.Snapshot, error) {
	var end *table.Snapshot
	if s.capSnapshot != nil {
		if *s.capSnapshot == noSnapshot {
			return nil, nil
		}
		if end = tbl.SnapshotByID(*s.capSnapshot); end == nil {
			return nil, fmt.Errorf("iceberg source: snapshot %d of table %s, the end of this available-now run, is gone (expired?)", *s.capSnapshot, s.name)
		}
	} else if end = tbl.CurrentSnapshot(); end == nil {
		return nil, nil
	}
	var chain []*table.Snapshot
	found := false
	for snap := end; snap != nil; {
		if start != noSnapshot && snap.SnapshotID == start {
			chain = append(chain, snap)
			found = true
			break
		}
		if start == noSnapshot && s.fromTimestamp > 0 && snap.TimestampMs < s.fromTimestamp {
			found = true
			break
		}
		chain = append(chain, snap)
		if snap.ParentSnapshotID == nil {
			break
		}
		snap = tbl.SnapshotByID(*snap.ParentSnapshotID)
	}
	if start != noSnapshot && !found {
		return nil, fmt.Errorf("iceberg source: snapshot %d of table %s, where the query stopped, is not an ancestor of snapshot %d: "+
			"it was expired or the table was rolled back; the query cannot resume exactly once (start a new checkpoint)", start, s.name, end.SnapshotID)
	}
	slices.Reverse(chain)
	return chain, nil
}

// units returns the data files a snapshot added, in manifest order, or
// none for snapshots that are skipped. Overwrite and delete snapshots are
// errors unless their skip option is set.
func (s *Source) units(fio icebergio.IO, snap *table.Snapshot) ([]iceberg.DataFile, error) {
	op := table.OpAppend
	if snap.Summary != nil {
		op = snap.Summary.Operation
	}
	switch op {
	case table.OpAppend:
	case table.OpReplace:
		return nil, nil
	case table.OpOverwrite:
		if s.skipOverwrite {
			return nil, nil
		}
		return nil, fmt.Errorf("iceberg source: table %s: snapshot %d is an overwrite, which a stream of appends cannot read; "+
			"set source.options.%s: \"true\" to skip such snapshots", s.name, snap.SnapshotID, OptSkipOverwriteSnaps)
	case table.OpDelete:
		if s.skipDelete {
			return nil, nil
		}
		return nil, fmt.Errorf("iceberg source: table %s: snapshot %d is a delete, which a stream of appends cannot read; "+
			"set source.options.%s: \"true\" to skip such snapshots", s.name, snap.SnapshotID, OptSkipDeleteSnapshots)
	default:
		return nil, fmt.Errorf("iceberg source: table %s: snapshot %d has operation %q, which the iceberg source does not know", s.name, snap.SnapshotID, op)
	}
	manifests, err := snap.Manifests(fio)
	if err != nil {
		return nil, fmt.Errorf("iceberg source: table %s: manifests of snapshot %d: %w", s.name, snap.SnapshotID, err)
	}
	var files []iceberg.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData || m.SnapshotID() != snap.SnapshotID {
			continue // a manifest written by another snapshot adds nothing here
		}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, fmt.Errorf("iceberg source: table %s: manifest %s of snapshot %d: %w", s.name, m.FilePath(), snap.SnapshotID, err)
			}
			if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == snap.SnapshotID && e.DataFile().ContentType() == iceberg.EntryContentData {
				files = append(files, e.DataFile())
			}
		}
	}
	return files, nil
}

func minPositive[T int | int64](a, b T) T {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}

// Read plans one part per data file of (start, end].
func (s *Source) Read(ctx context.Context, start, end floe.Offset) ([]floe.Part, error) {
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	en, err := decode(end)
	if err != nil {
		return nil, err
	}
	tbl, err := s.load(ctx)
	if err != nil {
		return nil, err
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
	if !reached && len(units) > 0 {
		return nil, fmt.Errorf("iceberg source: table %s: batch end %s is not after %s in the table's history", s.name, end, start)
	}
	// Plan each snapshot once; parts pick their file's tasks.
	scans := map[int64]*table.Scan{}
	tasks := map[int64]map[string][]table.FileScanTask{}
	parts := make([]floe.Part, 0, len(units))
	for _, u := range units {
		if _, ok := scans[u.snapshot]; !ok {
			scan := tbl.Scan(table.WithSnapshotID(u.snapshot))
			planned, err := scan.PlanFiles(ctx)
			if err != nil {
				return nil, fmt.Errorf("iceberg source: table %s: plan snapshot %d: %w", s.name, u.snapshot, err)
			}
			byPath := map[string][]table.FileScanTask{}
			for _, t := range planned {
				byPath[t.File.FilePath()] = append(byPath[t.File.FilePath()], t)
			}
			scans[u.snapshot], tasks[u.snapshot] = scan, byPath
		}
		ts := tasks[u.snapshot][u.file.FilePath()]
		if len(ts) == 0 {
			return nil, fmt.Errorf("iceberg source: table %s: data file %s of snapshot %d is not in the snapshot's scan plan", s.name, u.file.FilePath(), u.snapshot)
		}
		parts = append(parts, &part{scan: scans[u.snapshot], tasks: ts, file: u.file})
	}
	return parts, nil
}

// Commit has nothing to clean up: the table is not the source's to change.
func (s *Source) Commit(ctx context.Context, end floe.Offset) error { return nil }

// Close releases nothing: the catalog belongs to the pipeline.
func (s *Source) Close() error { return nil }

// part is one data file.
type part struct {
	scan  *table.Scan
	tasks []table.FileScanTask
	file  iceberg.DataFile
}

func (p *part) Name() string     { return p.file.FilePath() }
func (p *part) SizeBytes() int64 { return p.file.FileSizeBytes() }

// Open reads the file's rows through iceberg-go, with the deletes that
// apply to it at its snapshot. For now the records are collected in memory
// and replayed; a streaming reader is a next step.
func (p *part) Open(ctx context.Context) (array.RecordReader, error) {
	schema, recs, err := p.scan.ReadTasks(ctx, p.tasks)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.file.FilePath(), err)
	}
	var got []arrow.RecordBatch
	release := func() {
		for _, r := range got {
			r.Release()
		}
	}
	for rec, err := range recs {
		if err != nil {
			release()
			return nil, fmt.Errorf("read %s: %w", p.file.FilePath(), err)
		}
		got = append(got, rec)
	}
	rr, err := array.NewRecordReader(schema, got)
	release() // the reader holds its own references
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.file.FilePath(), err)
	}
	return rr, nil
}

func encode(o offset) floe.Offset { return floe.EncodeOffset(o) }

func decode(o floe.Offset) (offset, error) { return floe.DecodeOffset[offset](o, "iceberg source") }
