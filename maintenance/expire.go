package maintenance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/commit"
)

// Iceberg's defaults for history.expire.max-snapshot-age-ms and
// history.expire.min-snapshots-to-keep.
const (
	DefaultExpireOlderThan = 5 * 24 * time.Hour
	DefaultRetainLast      = 1
)

// ErrExpireOptions is the parent of every invalid ExpireOptions error.
var ErrExpireOptions = errors.New("invalid expire-snapshots options")

// ExpireOptions says which snapshots ExpireSnapshots may remove. Start from
// NewExpireOptions: a zero OlderThan means "every snapshot is old enough".
type ExpireOptions struct {
	// OlderThan: only snapshots committed longer ago than this are expired.
	OlderThan time.Duration
	// RetainLast newest snapshots of every branch are kept whatever their age.
	RetainLast int
	// DryRun computes the result without committing or deleting.
	DryRun bool
	// ReleaseQueries lists floe query ids whose checkpoints are gone: their
	// newest snapshots are no longer protected, and the tags of those
	// reading the table are removed.
	ReleaseQueries []string
}

// NewExpireOptions returns Iceberg's default retention: 5 days, the newest
// snapshot.
func NewExpireOptions() ExpireOptions {
	return ExpireOptions{OlderThan: DefaultExpireOlderThan, RetainLast: DefaultRetainLast}
}

// Validate reports every problem with the options.
func (o ExpireOptions) Validate() error {
	var errs []error
	if o.OlderThan < 0 {
		errs = append(errs, fmt.Errorf("%w: older-than %v is negative; use 0 to expire every snapshot beyond retain-last", ErrExpireOptions, o.OlderThan))
	}
	if o.RetainLast < 1 {
		errs = append(errs, fmt.Errorf("%w: retain-last %d must be at least 1 so that the current snapshot stays", ErrExpireOptions, o.RetainLast))
	}
	return errors.Join(errs...)
}

// Why a snapshot was kept, as ExpireResult reports it.
const (
	KeptCurrent    = "current snapshot"
	KeptYoung      = "younger than older-than"
	KeptRetainLast = "among the newest retain-last of branch %s"
	KeptRef        = "head of %s %s"
	KeptQuery      = "newest snapshot of floe query %s"
	KeptQueryPath  = "between the current snapshot and the newest snapshot of floe query %s (the committer's idempotency check walks this path)"
	KeptReader     = "not yet read by floe query %s (its tag %s)"
)

// KeptSnapshot is a snapshot ExpireSnapshots kept and every reason why.
type KeptSnapshot struct {
	SnapshotID  int64    `json:"snapshot_id"`
	TimestampMs int64    `json:"timestamp_ms"`
	Reasons     []string `json:"reasons"`
}

// DeletedFiles counts files of one kind.
type DeletedFiles struct {
	Count int      `json:"count"`
	Bytes int64    `json:"bytes"`
	Paths []string `json:"paths"`
}

func (d *DeletedFiles) add(path string, size int64) {
	d.Count++
	d.Bytes += size
	d.Paths = append(d.Paths, path)
}

// ExpiredFiles are the files no retained snapshot reaches any more, which
// ExpireSnapshots deletes after its commit.
type ExpiredFiles struct {
	ManifestLists   DeletedFiles `json:"manifest_lists"`
	Manifests       DeletedFiles `json:"manifests"`
	DataFiles       DeletedFiles `json:"data_files"`
	DeleteFiles     DeletedFiles `json:"delete_files"`
	StatisticsFiles DeletedFiles `json:"statistics_files"`
}

// ExpireResult is what ExpireSnapshots did, or would do on a dry run.
type ExpireResult struct {
	Table      string `json:"table"`
	DryRun     bool   `json:"dry_run"`
	CutoffMs   int64  `json:"cutoff_ms"`
	RetainLast int    `json:"retain_last"`
	// ExpiredCount and ExpiredIDs are the snapshots removed from metadata.
	ExpiredCount int     `json:"snapshots_expired"`
	ExpiredIDs   []int64 `json:"expired_snapshot_ids"`
	// ExpiredRefs are the branches and tags removed: older than their
	// max-ref-age-ms, or the tags of released floe queries.
	ExpiredRefs []string `json:"expired_refs"`
	KeptCount   int      `json:"snapshots_kept"`
	// Kept lists every kept snapshot with its reasons, newest first.
	Kept []KeptSnapshot `json:"kept"`
	// Files were deleted (planned, on a dry run, or when GC is disabled).
	Files ExpiredFiles `json:"files_deleted"`
	// FilesKeptGCDisabled: the table's gc.enabled is false, so Files were
	// left in place.
	FilesKeptGCDisabled bool `json:"files_kept_gc_disabled"`
}

// ExpireSnapshots removes old snapshots from the table's metadata, then
// deletes the files only they reached. It keeps the newest RetainLast of
// every branch, every snapshot younger than OlderThan, branch and tag
// heads, and, for every floe query, its newest snapshot and the path from
// the current snapshot back to it: the committer's idempotency check walks
// that path to find a batch committed just before a crash, and a gap in it
// would let that batch be committed twice. A floe query streaming the
// table's appends keeps a tag at its position (ReaderRefPrefix and its
// id): the path from the current snapshot back to that tag is kept too, so
// that the query reads every row. Branches and tags older than their
// max-ref-age-ms (else the table's history.expire.max-ref-age-ms), as
// Iceberg measures it from the snapshot they point at, are removed first,
// and so are the tags of released queries; main never is.
//
// iceberg-go's Transaction.ExpireSnapshots cannot keep chosen snapshots, so
// the removal is committed as a remove-snapshots update of its own.
func ExpireSnapshots(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts ExpireOptions) (ExpireResult, error) {
	if err := opts.Validate(); err != nil {
		return ExpireResult{}, err
	}
	name := strings.Join(ident, ".")
	var (
		res ExpireResult
		pre *table.Table
	)
	plan := func(tbl *table.Table) {
		pre = tbl
		res = planExpiry(tbl, opts, time.Now())
		res.Table = name
	}
	if opts.DryRun {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return ExpireResult{}, fmt.Errorf("load table %s: %w", name, err)
		}
		plan(tbl)
		retained := snapshotsExcept(tbl.Metadata().Snapshots(), res.ExpiredIDs)
		files, err := expiredFiles(ctx, tbl, res.ExpiredIDs, retained, tbl.Metadata())
		if err != nil {
			return ExpireResult{}, err
		}
		res.Files, res.FilesKeptGCDisabled = files, !GCEnabled(tbl)
		return res, nil
	}

	post, err := CommitUpdates(ctx, cat, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		plan(tbl)
		if len(res.ExpiredIDs) == 0 && len(res.ExpiredRefs) == 0 {
			return nil, nil, nil
		}
		md := tbl.Metadata()
		reqs := []table.Requirement{table.AssertTableUUID(md.TableUUID())}
		// A ref moved by a concurrent commit changes what must be kept.
		for ref, r := range md.Refs() {
			id := r.SnapshotID
			reqs = append(reqs, table.AssertRefSnapshotID(ref, &id))
		}
		var updates []table.Update
		for _, ref := range res.ExpiredRefs {
			updates = append(updates, table.NewRemoveSnapshotRefUpdate(ref))
		}
		if len(res.ExpiredIDs) > 0 {
			updates = append(updates, table.NewRemoveSnapshotsUpdate(res.ExpiredIDs, false))
		}
		return reqs, updates, nil
	})
	if err != nil {
		return res, err
	}
	if len(res.ExpiredIDs) == 0 {
		return res, nil
	}
	// What survives is judged on the table after the commit, which may hold
	// snapshots committed meanwhile.
	files, err := expiredFiles(ctx, pre, res.ExpiredIDs, post.Metadata().Snapshots(), post.Metadata())
	if err != nil {
		return res, fmt.Errorf("find files of expired snapshots of %s (the snapshots are expired; remove-orphan-files will delete them): %w", name, err)
	}
	res.Files = files
	if !GCEnabled(post) {
		res.FilesKeptGCDisabled = true
		return res, nil
	}
	fs, err := post.FS(ctx)
	if err != nil {
		return res, err
	}
	if err := deleteExpiredFiles(fs, files); err != nil {
		return res, fmt.Errorf("delete files of expired snapshots of %s (remove-orphan-files deletes what is left): %w", name, err)
	}
	return res, nil
}

// planExpiry decides, on one version of the table's metadata, which
// snapshots go and why the others stay.
func planExpiry(tbl *table.Table, opts ExpireOptions, now time.Time) ExpireResult {
	md := tbl.Metadata()
	cutoff := now.Add(-opts.OlderThan).UnixMilli()
	res := ExpireResult{DryRun: opts.DryRun, CutoffMs: cutoff, RetainLast: opts.RetainLast, ExpiredIDs: []int64{}, ExpiredRefs: []string{}, Kept: []KeptSnapshot{}}
	reasons := map[int64][]string{}
	keep := func(id int64, why string) {
		if !slices.Contains(reasons[id], why) {
			reasons[id] = append(reasons[id], why)
		}
	}
	lookup := func(id int64) *table.Snapshot { return md.SnapshotByID(id) }

	// keepPath keeps the snapshots from the current one back to id, id
	// excluded, when id is an ancestor of the current snapshot.
	keepPath := func(id int64, why string) {
		cur := md.CurrentSnapshot()
		if cur == nil {
			return
		}
		var path []int64
		for _, a := range table.AncestorsOf(cur.SnapshotID, lookup) {
			if a.SnapshotID == id {
				for _, p := range path {
					keep(p, why)
				}
				return
			}
			path = append(path, a.SnapshotID)
		}
	}

	if cur := md.CurrentSnapshot(); cur != nil {
		keep(cur.SnapshotID, KeptCurrent)
	}
	defaultRefAge := md.Properties().GetInt64(table.MaxRefAgeMsKey, math.MaxInt64)
	refs := maps.Collect(md.Refs())
	for _, ref := range slices.Sorted(maps.Keys(refs)) {
		r := refs[ref]
		reader, isReader := strings.CutPrefix(ref, commit.ReaderRefPrefix)
		isReader = isReader && r.SnapshotRefType == table.TagRef
		if ref != table.MainBranch {
			maxAge := defaultRefAge
			if r.MaxRefAgeMs != nil {
				maxAge = *r.MaxRefAgeMs
			}
			s := md.SnapshotByID(r.SnapshotID)
			if (s != nil && now.UnixMilli()-s.TimestampMs > maxAge) || (isReader && slices.Contains(opts.ReleaseQueries, reader)) {
				res.ExpiredRefs = append(res.ExpiredRefs, ref)
				continue
			}
		}
		if r.SnapshotRefType != table.BranchRef {
			keep(r.SnapshotID, fmt.Sprintf(KeptRef, "tag", ref))
			if isReader {
				keepPath(r.SnapshotID, fmt.Sprintf(KeptReader, reader, ref))
			}
			continue
		}
		keep(r.SnapshotID, fmt.Sprintf(KeptRef, "branch", ref))
		for n, s := range table.AncestorsOf(r.SnapshotID, lookup) {
			if n >= opts.RetainLast {
				break
			}
			keep(s.SnapshotID, fmt.Sprintf(KeptRetainLast, ref))
		}
	}
	newest := map[string]*table.Snapshot{}
	for _, s := range md.Snapshots() {
		if s.TimestampMs >= cutoff {
			keep(s.SnapshotID, KeptYoung)
		}
		if s.Summary == nil {
			continue
		}
		q := s.Summary.Properties[commit.SummaryQueryID]
		if q == "" || slices.Contains(opts.ReleaseQueries, q) {
			continue
		}
		if n := newest[q]; n == nil || s.SequenceNumber > n.SequenceNumber ||
			(s.SequenceNumber == n.SequenceNumber && s.TimestampMs > n.TimestampMs) {
			newest[q] = &s
		}
	}
	for q, s := range newest {
		keep(s.SnapshotID, fmt.Sprintf(KeptQuery, q))
		keepPath(s.SnapshotID, fmt.Sprintf(KeptQueryPath, q))
	}

	snaps := slices.Clone(md.Snapshots())
	slices.SortFunc(snaps, func(a, b table.Snapshot) int {
		return cmp.Or(cmp.Compare(b.SequenceNumber, a.SequenceNumber), cmp.Compare(b.TimestampMs, a.TimestampMs))
	})
	for _, s := range snaps {
		if why := reasons[s.SnapshotID]; len(why) > 0 {
			res.Kept = append(res.Kept, KeptSnapshot{SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs, Reasons: why})
		} else {
			res.ExpiredIDs = append(res.ExpiredIDs, s.SnapshotID)
		}
	}
	res.ExpiredCount, res.KeptCount = len(res.ExpiredIDs), len(res.Kept)
	return res
}

func snapshotsExcept(snaps []table.Snapshot, ids []int64) []table.Snapshot {
	return slices.DeleteFunc(slices.Clone(snaps), func(s table.Snapshot) bool { return slices.Contains(ids, s.SnapshotID) })
}

// expiredFiles lists the files the expired snapshots of pre reached that no
// retained snapshot reaches: their manifest lists, the manifests no
// retained manifest list names, and the data and delete files of those
// manifests that no retained manifest holds live.
func expiredFiles(ctx context.Context, pre *table.Table, expired []int64, retained []table.Snapshot, post table.Metadata) (ExpiredFiles, error) {
	var out ExpiredFiles
	if len(expired) == 0 {
		return out, nil
	}
	fs, err := pre.FS(ctx)
	if err != nil {
		return out, err
	}
	retainedLists := map[string]bool{}
	retainedManifests := map[string]iceberg.ManifestFile{}
	for _, s := range retained {
		retainedLists[s.ManifestList] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			return out, fmt.Errorf("read manifest list %s: %w", s.ManifestList, err)
		}
		for _, m := range mans {
			retainedManifests[m.FilePath()] = m
		}
	}

	type candidate struct {
		size   int64
		delete bool
	}
	files := map[string]candidate{}
	var fileOrder []string
	seenManifests := map[string]bool{}
	for _, id := range expired {
		s := pre.Metadata().SnapshotByID(id)
		if s == nil {
			continue
		}
		if !retainedLists[s.ManifestList] && s.ManifestList != "" {
			out.ManifestLists.add(s.ManifestList, sizeOrZero(fs, s.ManifestList))
		}
		mans, err := s.Manifests(fs)
		if err != nil {
			return out, fmt.Errorf("read manifest list %s: %w", s.ManifestList, err)
		}
		for _, m := range mans {
			p := m.FilePath()
			if retainedManifests[p] != nil || seenManifests[p] {
				continue
			}
			seenManifests[p] = true
			out.Manifests.add(p, m.Length())
			for e, err := range m.Entries(fs, false) {
				if err != nil {
					return out, fmt.Errorf("read manifest %s: %w", p, err)
				}
				df := e.DataFile()
				if _, ok := files[df.FilePath()]; !ok {
					fileOrder = append(fileOrder, df.FilePath())
				}
				files[df.FilePath()] = candidate{size: df.FileSizeBytes(), delete: df.ContentType() != iceberg.EntryContentData}
			}
		}
	}
	if len(files) > 0 {
		for _, m := range retainedManifests {
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					return out, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				delete(files, e.DataFile().FilePath())
			}
		}
	}
	for _, p := range fileOrder {
		c, ok := files[p]
		switch {
		case !ok:
		case c.delete:
			out.DeleteFiles.add(p, c.size)
		default:
			out.DataFiles.add(p, c.size)
		}
	}

	expiredSet := map[int64]bool{}
	for _, id := range expired {
		expiredSet[id] = true
	}
	live := map[string]bool{}
	for sf := range post.Statistics() {
		live[sf.StatisticsPath] = true
	}
	for sf := range post.PartitionStatistics() {
		live[sf.StatisticsPath] = true
	}
	for sf := range pre.Metadata().Statistics() {
		if expiredSet[sf.SnapshotID] && sf.StatisticsPath != "" && !live[sf.StatisticsPath] {
			out.StatisticsFiles.add(sf.StatisticsPath, sf.FileSizeInBytes)
		}
	}
	for sf := range pre.Metadata().PartitionStatistics() {
		if expiredSet[sf.SnapshotID] && sf.StatisticsPath != "" && !live[sf.StatisticsPath] {
			out.StatisticsFiles.add(sf.StatisticsPath, sf.FileSizeInBytes)
		}
	}
	return out, nil
}

// deleteExpiredFiles deletes data first and manifest lists last, so that an
// interrupted run leaves files that only unreachable metadata names, which
// remove-orphan-files deletes; a file already gone is not an error.
func deleteExpiredFiles(fs icebergio.IO, files ExpiredFiles) error {
	var errs []error
	for _, kind := range []DeletedFiles{files.DataFiles, files.DeleteFiles, files.StatisticsFiles, files.Manifests, files.ManifestLists} {
		for _, p := range kind.Paths {
			if err := fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("delete %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// GCEnabled reads a table's gc.enabled as Iceberg does: only "false"
// turns it off, and then nothing may delete the table's data and delete
// files (expiry, purge).
func GCEnabled(tbl *table.Table) bool {
	return !strings.EqualFold(tbl.Properties()["gc.enabled"], "false")
}

// sizeOrZero is a file's size for reports, 0 when it cannot be read.
func sizeOrZero(fs icebergio.IO, path string) int64 {
	n, _ := fileSize(fs, path)
	return n
}
