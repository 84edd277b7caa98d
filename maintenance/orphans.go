package maintenance

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
)

// DefaultOrphanOlderThan is Spark's remove_orphan_files default: a file
// younger than this may belong to a commit still in flight.
const DefaultOrphanOlderThan = 3 * 24 * time.Hour

// MinOrphanOlderThan is the least OlderThan allowed while writers may be
// running: a file younger than a commit's longest write-to-commit time may
// be one of its data files. Spark's procedure warns below its 3-day
// default; floe refuses below an hour unless WritersStopped is set.
const MinOrphanOlderThan = time.Hour

// ErrOrphanOptions is the parent of every invalid OrphanOptions error.
var ErrOrphanOptions = errors.New("invalid remove-orphan-files options")

// OrphanOptions says where RemoveOrphanFiles looks and what it may delete.
// Start from NewOrphanOptions.
type OrphanOptions struct {
	// OlderThan: only files last modified longer ago than this are removed,
	// so that the files of a commit in flight survive.
	OlderThan time.Duration
	// DryRun lists the orphans without deleting them.
	DryRun bool
	// Location to list; empty means the table's location.
	Location string
	// WritersStopped says that no writer is committing to the table, which
	// allows OlderThan below MinOrphanOlderThan. Files of floe batches the
	// table has not committed are still kept (see RemoveOrphanFiles).
	WritersStopped bool
}

// NewOrphanOptions returns the defaults: files older than 3 days, anywhere
// under the table's location.
func NewOrphanOptions() OrphanOptions { return OrphanOptions{OlderThan: DefaultOrphanOlderThan} }

// Validate reports every problem with the options.
func (o OrphanOptions) Validate() error {
	if o.OlderThan < 0 {
		return fmt.Errorf("%w: older-than %v is negative", ErrOrphanOptions, o.OlderThan)
	}
	if o.OlderThan < MinOrphanOlderThan && !o.WritersStopped {
		return fmt.Errorf("%w: older-than %v is below %v, so the data files of a commit still being written could be deleted and the table left naming missing files; "+
			"use %v or more (Spark's default is 3d), or, when no writer of the table is running, pass --writers-stopped", ErrOrphanOptions, o.OlderThan, MinOrphanOlderThan, MinOrphanOlderThan)
	}
	return nil
}

// OrphanResult is what RemoveOrphanFiles found and deleted.
type OrphanResult struct {
	Table    string   `json:"table"`
	Location string   `json:"location"`
	DryRun   bool     `json:"dry_run"`
	CutoffMs int64    `json:"cutoff_ms"`
	Count    int      `json:"orphan_files"`
	Bytes    int64    `json:"orphan_bytes"`
	Paths    []string `json:"paths"`
	Deleted  int      `json:"deleted"`
	// InFlight are unreferenced data files of floe batches the table has
	// not committed: they and every file younger than the oldest of them
	// were kept, and CutoffMs moved back to it.
	InFlight []string `json:"in_flight_files"`
}

// RemoveOrphanFiles deletes the files under the table's location that no
// metadata of the table names: not any snapshot's manifest list, manifests,
// data or delete files, not a statistics file, not a metadata file in the
// metadata log nor version-hint.text. Such files are left by commits that
// failed or were killed. Files younger than OlderThan are never touched.
//
// Nor is any file younger than the oldest commit in flight that the table
// tells of. floe names a batch's data files after its query and batch id
// (QQQQQQQQ-BBBBB-xxxxxxxx-NNNNN.parquet, the query id's first 8
// characters), and commits a query's batches in order; an unreferenced
// such file of a batch after the newest one the table holds for that query
// belongs to a batch being written or one whose writer died before
// committing, which cannot be told apart. Such files younger than
// DefaultOrphanOlderThan move the cutoff back to the oldest of them, so
// that the batch's other data files and the manifests its commit writes
// survive; a dead writer's files pin it for at most that long.
//
// It uses iceberg-go's PlanOrphanFiles and ExecuteOrphanCleanup, which
// compare file:// URIs and bare paths as the same file.
func RemoveOrphanFiles(ctx context.Context, tbl *table.Table, opts OrphanOptions) (OrphanResult, error) {
	if err := opts.Validate(); err != nil {
		return OrphanResult{}, err
	}
	res := OrphanResult{Table: strings.Join(tbl.Identifier(), "."), Location: opts.Location, DryRun: opts.DryRun, Paths: []string{}, InFlight: []string{}}
	if res.Location == "" {
		res.Location = tbl.Location()
	}
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithLocation(res.Location), table.WithFilesOlderThan(opts.OlderThan))
	if err != nil {
		return res, fmt.Errorf("list orphan files of %s under %s: %w", res.Table, res.Location, err)
	}
	res.CutoffMs = plan.Cutoff().UnixMilli()
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, err
	}
	orphans := plan.OrphanFiles()
	inFlight, oldest, err := inFlightFiles(tbl, fs, orphans, time.Now().Add(-DefaultOrphanOlderThan))
	if err != nil {
		return res, fmt.Errorf("find files of commits in flight under %s: %w", res.Location, err)
	}
	if len(inFlight) == 0 {
		for _, f := range orphans {
			res.Paths = append(res.Paths, f.Path)
		}
		slices.Sort(res.Paths)
		res.Count, res.Bytes = len(res.Paths), plan.TotalSizeBytes()
		if opts.DryRun || res.Count == 0 {
			return res, nil
		}
		done, err := tbl.ExecuteOrphanCleanup(ctx, plan)
		res.Deleted = len(done.DeletedFiles)
		if err != nil {
			return res, fmt.Errorf("delete orphan files of %s: %w", res.Table, err)
		}
		return res, nil
	}

	res.InFlight, res.CutoffMs = inFlight, oldest.UnixMilli()
	slices.Sort(res.InFlight)
	for _, f := range orphans {
		fi, err := fileInfo(fs, f.Path)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("list orphan files of %s: %w", res.Table, err)
		}
		if fi.ModTime().Before(oldest) {
			res.Paths = append(res.Paths, f.Path)
			res.Bytes += f.SizeBytes
		}
	}
	slices.Sort(res.Paths)
	res.Count = len(res.Paths)
	if opts.DryRun {
		return res, nil
	}
	var errs []error
	for _, p := range res.Paths {
		if err := fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("delete %s: %w", p, err))
			continue
		}
		res.Deleted++
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("delete orphan files of %s: %w", res.Table, err)
	}
	return res, nil
}

// batchFileName is how floe names a streaming batch's data files: the
// query id's first 8 characters, the batch id, a random part and a
// sequence number (pipeline.go and internal/write/fanout.go).
var batchFileName = regexp.MustCompile(`^([0-9a-f]{8})-(\d+)-[0-9a-f]{8}-\d+\.parquet$`)

// inFlightFiles picks, among orphans, the floe batch data files of batches
// the table has not committed that were modified after since, and returns
// them with the oldest one's modification time.
func inFlightFiles(tbl *table.Table, fs icebergio.IO, orphans []table.OrphanFile, since time.Time) ([]string, time.Time, error) {
	newest := map[string]int64{} // query id prefix -> newest batch the table holds
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil {
			continue
		}
		q := s.Summary.Properties[commit.SummaryQueryID]
		b, err := strconv.ParseInt(s.Summary.Properties[commit.SummaryBatchID], 10, 64)
		if len(q) < 8 || err != nil {
			continue
		}
		if n, ok := newest[q[:8]]; !ok || b > n {
			newest[q[:8]] = b
		}
	}
	var (
		out    []string
		oldest time.Time
	)
	for _, f := range orphans {
		m := batchFileName.FindStringSubmatch(path.Base(f.Path))
		if m == nil {
			continue
		}
		b, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			continue
		}
		if n, ok := newest[m[1]]; ok && b <= n {
			continue // a retried batch's leftover: the table holds the batch
		}
		fi, err := fileInfo(fs, f.Path)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		if t := fi.ModTime(); t.After(since) {
			out = append(out, f.Path)
			if oldest.IsZero() || t.Before(oldest) {
				oldest = t
			}
		}
	}
	return out, oldest, nil
}
