package maintenance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
)

// Thresholds behind the recommendations. A table below all of them gets
// none: the report then only describes it.
const (
	// MaxHealthySnapshots: every commit rewrites a metadata file that lists
	// every retained snapshot, so commit time and metadata size grow with
	// the count; Iceberg's own expiry keeps five days, which at one batch a
	// minute is 7,200, far past where planning visibly slows.
	MaxHealthySnapshots = 500
	// MaxHealthySnapshotsPerDay: a table committing more than this keeps
	// growing past MaxHealthySnapshots within a day unless expiry runs.
	MaxHealthySnapshotsPerDay = MaxHealthySnapshots
	// MinSnapshotsForRate: a rate measured over fewer commits is noise.
	MinSnapshotsForRate = 20
	// MinHistoryForRate: a daily rate from a shorter history multiplies
	// whatever happened in it, most often a burst (a backfill, a restart
	// catching up), by more than 24; the count and span are all that is
	// known then. A table committing fast enough to matter shows its rate
	// within the hour, and one that passes MaxHealthySnapshots sooner is
	// advised by its count.
	MinHistoryForRate = time.Hour
	// MaxHealthyManifests: planning reads every manifest; 100 is Iceberg's
	// commit.manifest.min-count-to-merge, where its own merging kicks in.
	MaxHealthyManifests = 100
	// MaxHealthySmallFileShare: above half of the files small, the per-file
	// cost (open, footer, task) dominates reading.
	MaxHealthySmallFileShare = 0.5
	// MinSmallFilesToCompact: Spark's rewrite_data_files min-input-files;
	// compacting fewer gains nothing.
	MinSmallFilesToCompact = 5
	// SmallFileFraction: a data file smaller than target/4 counts as small,
	// Spark's min-file-size-bytes default (75% below target is 0.25).
	SmallFileFraction = 4
	// MaxHealthyMetadataFiles: without write.metadata.delete-after-commit
	// every commit leaves its metadata file on storage for good.
	MaxHealthyMetadataFiles = 100
	// MaxHealthyDeleteFileRatio: each delete file is merged into every read
	// of the data it covers; at one per ten data files that cost shows.
	MaxHealthyDeleteFileRatio = 0.1
	// MinDeleteFilesToCompact: a handful of delete files is cheap to apply.
	MinDeleteFilesToCompact = 5
	// MaxHealthyDeletedShare: past a tenth of the rows read being deleted
	// ones, reads pay for rows they throw away (Iceberg rewrites a file
	// at 30%, DefaultDeleteRatioThreshold).
	MaxHealthyDeletedShare = 0.1
	// SlowPlanMs: a full-scan plan slower than this delays every query
	// before it reads a byte.
	SlowPlanMs = 1000
	// DefaultTargetFileSizeBytes is write.target-file-size-bytes when the
	// table does not set it (Iceberg's and floe's writer default).
	DefaultTargetFileSizeBytes = 512 << 20
	// histogramFirstBucketBytes is the upper bound of the first histogram
	// bucket; later ones double.
	histogramFirstBucketBytes = 1 << 10
)

// Table properties the recommendations name.
const (
	metadataDeleteAfterCommitKey = "write.metadata.delete-after-commit.enabled"
	metadataPreviousVersionsKey  = "write.metadata.previous-versions-max"
	// defaultPreviousVersionsMax is Iceberg's default for
	// write.metadata.previous-versions-max.
	defaultPreviousVersionsMax = 100
)

// HealthOptions tune Health. The zero value measures against the clock,
// plans three times and reads the target size from the table.
type HealthOptions struct {
	// Now is the time the last commit's age is measured against (default
	// time.Now).
	Now func() time.Time
	// PlanRuns is how many full-scan plans are timed; the median is
	// reported (default 3; negative: do not plan).
	PlanRuns int
	// TargetFileSizeBytes overrides write.target-file-size-bytes.
	TargetFileSizeBytes int64
}

// Report is a table's health at its current snapshot.
type Report struct {
	Table             string `json:"table"`
	FormatVersion     int    `json:"format_version"`
	Location          string `json:"location"`
	MetadataLocation  string `json:"metadata_location"`
	CurrentSnapshotID *int64 `json:"current_snapshot_id"`

	// Snapshots retained in the metadata, and the span and rate of their
	// commits. SnapshotsPerDay is nil (null) when the history is too short
	// to tell a rate: fewer than MinSnapshotsForRate snapshots or less
	// than MinHistoryForRate between the oldest and newest.
	Snapshots       int      `json:"snapshots"`
	HistoryMs       int64    `json:"history_ms"`
	SnapshotsPerDay *float64 `json:"snapshots_per_day"`
	// LastCommitAgeMs is now minus the current snapshot's timestamp (0
	// without one).
	LastCommitAgeMs int64 `json:"last_commit_age_ms"`

	// Metadata files that still exist: the current one and those in its
	// metadata log.
	MetadataFiles int   `json:"metadata_files"`
	MetadataBytes int64 `json:"metadata_bytes"`
	// MetadataLogEntries is the length of the metadata log, capped by
	// write.metadata.previous-versions-max.
	MetadataLogEntries int `json:"metadata_log_entries"`

	// Manifests of the current snapshot.
	Manifests       int   `json:"manifests"`
	DataManifests   int   `json:"data_manifests"`
	DeleteManifests int   `json:"delete_manifests"`
	ManifestBytes   int64 `json:"manifest_bytes"`

	// Live data files of the current snapshot.
	DataFiles         int   `json:"data_files"`
	DataBytes         int64 `json:"data_bytes"`
	DataRecords       int64 `json:"data_records"`
	MeanDataFileBytes int64 `json:"mean_data_file_bytes"`
	// TargetFileSizeBytes is write.target-file-size-bytes; a file below a
	// quarter of it is small.
	TargetFileSizeBytes     int64   `json:"target_file_size_bytes"`
	SmallFileThresholdBytes int64   `json:"small_file_threshold_bytes"`
	SmallDataFiles          int     `json:"small_data_files"`
	SmallFileShare          float64 `json:"small_file_share"`

	// Partitions of the live data files, each a spec and its values, as
	// rewrite-data-files groups them; PartitionFields is the current spec
	// as partition-fields writes it, with identity spelled out ([] when
	// unpartitioned).
	PartitionFields    []string `json:"partition_fields"`
	Partitions         int      `json:"partitions"`
	MeanPartitionFiles float64  `json:"mean_partition_files"`
	MeanPartitionBytes int64    `json:"mean_partition_bytes"`
	// MergeableSmallFiles are the small files rewrite-data-files merges:
	// those its plan groups with at least MinSmallFilesToCompact files of
	// their partition. LoneSmallFiles are alone in their partition.
	MergeableSmallFiles int `json:"mergeable_small_files"`
	LoneSmallFiles      int `json:"lone_small_files"`
	// OlderSpecFiles were written with an earlier partition spec and keep
	// its partitions; olderStranded are the small ones rewrite-data-files
	// does not merge there.
	OlderSpecFiles int `json:"older_spec_files"`
	olderStranded  int
	// fields are the current spec's fields with the partitions each makes,
	// for the advice on a coarser spec.
	fields []fieldStats
	// mergedBytes estimates the data files' bytes once merged
	// (mergedSize).
	mergedBytes int64

	// Live delete files: position and equality deletes, and deletion
	// vectors (position deletes in Puffin files).
	DeleteFiles         int   `json:"delete_files"`
	DeleteBytes         int64 `json:"delete_bytes"`
	PositionDeleteFiles int   `json:"position_delete_files"`
	EqualityDeleteFiles int   `json:"equality_delete_files"`
	DeletionVectors     int   `json:"deletion_vectors"`
	// DeletedRows are the rows deletion vectors and position delete files
	// delete (their cardinalities); EqualityDeleteRows the keys equality
	// delete files hold, each deleting any number of rows.
	DeletedRows        int64 `json:"deleted_rows"`
	EqualityDeleteRows int64 `json:"equality_delete_rows"`
	// RowsReadPerLiveRow is what a full scan reads (data rows and delete
	// rows) per row it returns, counting equality-deleted rows as live:
	// 1 for a table without deletes.
	RowsReadPerLiveRow float64 `json:"rows_read_per_live_row"`

	// PlanMs is the median wall time of planning a full scan; PlanTasks
	// the tasks it planned.
	PlanMs    float64 `json:"plan_ms"`
	PlanTasks int     `json:"plan_tasks"`

	Recommendations []Recommendation `json:"recommendations"`
	// Histogram buckets data files by size, from the first non-empty
	// bucket to the last.
	Histogram []SizeBucket `json:"histogram"`
	// History lists the retained snapshots, oldest first.
	History []SnapshotPoint `json:"history"`
}

// Recommendation is one thing to do, derived from the report's numbers.
type Recommendation struct {
	// Kind names the remedy: expire-snapshots, rewrite-data-files,
	// partition-spec, convert-equality-deletes, rewrite-manifests,
	// metadata-retention, plan.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// SizeBucket counts the data files with MinBytes <= size < MaxBytes.
type SizeBucket struct {
	MinBytes int64 `json:"min_bytes"`
	MaxBytes int64 `json:"max_bytes"`
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
}

// SnapshotPoint is one snapshot, as its summary tells it.
type SnapshotPoint struct {
	SnapshotID   int64  `json:"snapshot_id"`
	TimestampMs  int64  `json:"timestamp_ms"`
	Operation    string `json:"operation"`
	AddedRecords int64  `json:"added_records"`
	AddedFiles   int64  `json:"added_files"`
}

// Health measures tbl at its current snapshot and recommends the
// maintenance it needs. It reads the metadata log, manifests and manifest
// entries through the table's FileIO and times full-scan planning; it
// writes nothing.
func Health(ctx context.Context, tbl *table.Table, opts HealthOptions) (Report, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PlanRuns == 0 {
		opts.PlanRuns = 3
	}
	md := tbl.Metadata()
	r := Report{
		Table: strings.Join(tbl.Identifier(), "."), Location: tbl.Location(), MetadataLocation: tbl.MetadataLocation(),
		FormatVersion: md.Version(), Snapshots: len(md.Snapshots()), TargetFileSizeBytes: targetFileSize(tbl, opts),
		Recommendations: []Recommendation{}, Histogram: []SizeBucket{}, History: []SnapshotPoint{}, PartitionFields: partitionFields(md),
	}
	r.SmallFileThresholdBytes = r.TargetFileSizeBytes / SmallFileFraction
	r.History = history(md.Snapshots())
	if n := len(r.History); n > 0 {
		r.HistoryMs = r.History[n-1].TimestampMs - r.History[0].TimestampMs
		if n >= MinSnapshotsForRate && r.HistoryMs >= MinHistoryForRate.Milliseconds() {
			perDay := float64(n-1) / (float64(r.HistoryMs) / float64(24*time.Hour/time.Millisecond))
			r.SnapshotsPerDay = &perDay
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return r, fmt.Errorf("open table storage: %w", err)
	}
	if err := r.countMetadataFiles(tbl, fs); err != nil {
		return r, err
	}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		id := cur.SnapshotID
		r.CurrentSnapshotID = &id
		r.LastCommitAgeMs = max(0, opts.Now().UnixMilli()-cur.TimestampMs)
		if err := r.countFiles(cur, fs, md); err != nil {
			return r, err
		}
	}
	if opts.PlanRuns > 0 {
		if err := r.timePlan(ctx, tbl, opts.PlanRuns); err != nil {
			return r, err
		}
	}
	r.Recommendations = recommend(r, tbl.Properties(), opts.Now())
	return r, nil
}

func targetFileSize(tbl *table.Table, opts HealthOptions) int64 {
	if opts.TargetFileSizeBytes > 0 {
		return opts.TargetFileSizeBytes
	}
	if n, err := strconv.ParseInt(tbl.Properties()[table.WriteTargetFileSizeBytesKey], 10, 64); err == nil && n > 0 {
		return n
	}
	return DefaultTargetFileSizeBytes
}

func history(snaps []table.Snapshot) []SnapshotPoint {
	out := make([]SnapshotPoint, 0, len(snaps))
	for _, s := range snaps {
		p := SnapshotPoint{SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs}
		if s.Summary != nil {
			p.Operation = string(s.Summary.Operation)
			p.AddedRecords, _ = strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
			p.AddedFiles, _ = strconv.ParseInt(s.Summary.Properties["added-data-files"], 10, 64)
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b SnapshotPoint) int { return cmp.Compare(a.TimestampMs, b.TimestampMs) })
	return out
}

// countMetadataFiles stats the current metadata file and the metadata
// log's; one already deleted is not counted.
func (r *Report) countMetadataFiles(tbl *table.Table, fs icebergio.IO) error {
	paths := []string{tbl.MetadataLocation()}
	for e := range tbl.Metadata().PreviousFiles() {
		r.MetadataLogEntries++
		if !slices.Contains(paths, e.MetadataFile) {
			paths = append(paths, e.MetadataFile)
		}
	}
	for _, p := range paths {
		size, err := fileSize(fs, p)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat metadata file %s: %w", p, err)
		}
		r.MetadataFiles++
		r.MetadataBytes += size
	}
	return nil
}

// fileSize is fileInfo's size.
func fileSize(fs icebergio.IO, path string) (int64, error) {
	fi, err := fileInfo(fs, path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// fileInfo stats through the IO's Stat when it has one, else by opening.
func fileInfo(fs icebergio.IO, path string) (iofs.FileInfo, error) {
	if s, ok := fs.(icebergio.StatIO); ok {
		return s.Stat(path)
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

func (r *Report) countFiles(cur *table.Snapshot, fs icebergio.IO, md table.Metadata) error {
	manifests, err := cur.Manifests(fs)
	if err != nil {
		return fmt.Errorf("read manifest list %s: %w", cur.ManifestList, err)
	}
	var sizes []int64
	parts := newPartitionTally(md)
	for _, m := range manifests {
		r.Manifests++
		r.ManifestBytes += m.Length()
		if m.ManifestContent() == iceberg.ManifestContentDeletes {
			r.DeleteManifests++
		} else {
			r.DataManifests++
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			df := e.DataFile()
			switch df.ContentType() {
			case iceberg.EntryContentData:
				r.DataFiles++
				r.DataBytes += df.FileSizeBytes()
				r.DataRecords += df.Count()
				sizes = append(sizes, df.FileSizeBytes())
				small := df.FileSizeBytes() < r.SmallFileThresholdBytes
				if small {
					r.SmallDataFiles++
				}
				parts.add(df, small)
			case iceberg.EntryContentPosDeletes:
				r.DeleteFiles++
				r.DeleteBytes += df.FileSizeBytes()
				r.DeletedRows += df.Count()
				if df.FileFormat() == iceberg.PuffinFile {
					r.DeletionVectors++
				} else {
					r.PositionDeleteFiles++
				}
			case iceberg.EntryContentEqDeletes:
				r.DeleteFiles++
				r.DeleteBytes += df.FileSizeBytes()
				r.EqualityDeleteFiles++
				r.EqualityDeleteRows += df.Count()
			}
		}
	}
	if r.DataFiles > 0 {
		r.MeanDataFileBytes = r.DataBytes / int64(r.DataFiles)
		r.SmallFileShare = float64(r.SmallDataFiles) / float64(r.DataFiles)
	}
	r.Histogram = sizeHistogram(sizes)
	if err := parts.fill(r); err != nil {
		return err
	}
	if live := r.DataRecords - r.DeletedRows; live > 0 {
		r.RowsReadPerLiveRow = float64(r.DataRecords+r.DeletedRows+r.EqualityDeleteRows) / float64(live)
	}
	return nil
}

// sizeHistogram buckets sizes by powers of two: [0, 1 KiB), [1 KiB,
// 2 KiB), ..., trimmed to the first and last non-empty bucket.
func sizeHistogram(sizes []int64) []SizeBucket {
	buckets := []SizeBucket{}
	if len(sizes) == 0 {
		return buckets
	}
	largest := slices.Max(sizes)
	lo, hi := int64(0), int64(histogramFirstBucketBytes)
	for {
		buckets = append(buckets, SizeBucket{MinBytes: lo, MaxBytes: hi})
		if largest < hi {
			break
		}
		lo, hi = hi, hi*2
	}
	for _, s := range sizes {
		i := 0
		for s >= buckets[i].MaxBytes {
			i++
		}
		buckets[i].Files++
		buckets[i].Bytes += s
	}
	first := slices.IndexFunc(buckets, func(b SizeBucket) bool { return b.Files > 0 })
	return buckets[first:]
}

func (r *Report) timePlan(ctx context.Context, tbl *table.Table, runs int) error {
	times := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return fmt.Errorf("plan a full scan: %w", err)
		}
		times = append(times, time.Since(start))
		r.PlanTasks = len(tasks)
	}
	slices.Sort(times)
	r.PlanMs = float64(times[len(times)/2].Microseconds()) / 1000
	return nil
}

// Snapshot counts the expiry advice brings a table down to: a table with
// more than adviseKeepMany snapshots keeps that many, a smaller one whose
// rate alone is unhealthy keeps as many as a pipeline's own maintenance
// does.
const (
	adviseKeepMany = MaxHealthySnapshots / 5
	adviseKeepFew  = defaultRetainLast
)

// expireAdvice is the retention the expiry advice names: the newest keep
// snapshots, and an older-than no longer than Iceberg's 5 days that every
// older snapshot is past. Iceberg's default alone expires nothing on a
// table that commits every minute but is younger than 5 days. olderThan is
// floored to its largest unit, so the command, run later, expires at least
// as much as it says.
func expireAdvice(r Report, now time.Time) (keep int, olderThan time.Duration) {
	keep = adviseKeepFew
	if r.Snapshots > adviseKeepMany {
		keep = adviseKeepMany
	}
	olderThan = DefaultExpireOlderThan
	if n := len(r.History); n >= keep {
		age := time.Duration(now.UnixMilli()-r.History[n-keep].TimestampMs) * time.Millisecond
		olderThan = min(olderThan, max(age, 0))
	}
	for _, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if olderThan >= unit {
			return keep, olderThan.Truncate(unit)
		}
	}
	return keep, 0
}

// recommend turns the numbers into advice; a healthy table gets none.
func recommend(r Report, props iceberg.Properties, now time.Time) []Recommendation {
	out := []Recommendation{}
	name := r.Table
	if name == "" {
		name = "TABLE"
	}
	add := func(kind, format string, args ...any) {
		out = append(out, Recommendation{Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	fastRate := r.SnapshotsPerDay != nil && *r.SnapshotsPerDay > MaxHealthySnapshotsPerDay
	if r.Snapshots > MaxHealthySnapshots || fastRate {
		keep, olderThan := expireAdvice(r, now)
		rate := ""
		if r.SnapshotsPerDay != nil {
			rate = fmt.Sprintf(" (about one every %s: %s a day)", Duration(int64(86_400_000 / *r.SnapshotsPerDay)), Count(int64(*r.SnapshotsPerDay+0.5)))
		}
		add("expire-snapshots", "%s snapshots in %s%s; "+
			"let the writing pipeline's maintenance expire them (its maintenance: block, on unless turned off) or run `floe maintain expire-snapshots %s --older-than %s --retain-last %d`, "+
			"which keeps the newest %d (and those floe queries and refs need)",
			Count(int64(r.Snapshots)), Duration(r.HistoryMs), rate, name,
			config.Duration(olderThan), keep, keep)
	}
	smallFiles := r.SmallDataFiles >= MinSmallFilesToCompact && r.SmallFileShare > MaxHealthySmallFileShare
	// Advised only for the files it merges: it leaves a partition's only
	// file as it is.
	if smallFiles && r.MergeableSmallFiles >= MinSmallFilesToCompact {
		merges := ""
		if r.MergeableSmallFiles < r.SmallDataFiles {
			merges = fmt.Sprintf(", which merges the %s of them in partitions with at least %d files to merge", Count(int64(r.MergeableSmallFiles)), MinSmallFilesToCompact)
		}
		add("rewrite-data-files", "%d%% of data files (%s of %s) are smaller than a quarter of the target size %s (%s); mean size %s: run `floe maintain rewrite-data-files %s`%s",
			int(r.SmallFileShare*100+0.5), Count(int64(r.SmallDataFiles)), Count(int64(r.DataFiles)), Bytes(r.TargetFileSizeBytes), Bytes(r.SmallFileThresholdBytes), Bytes(r.MeanDataFileBytes), name, merges)
	}
	if smallFiles && r.olderStranded >= MinSmallFilesToCompact {
		add("rewrite-data-files", "%s", olderSpecAdvice(r, name))
	}
	if smallFiles && overPartitioned(r) {
		add("partition-spec", "%s", partitionAdvice(r, name))
	}
	if r.DeleteFiles >= MinDeleteFilesToCompact && float64(r.DeleteFiles) > MaxHealthyDeleteFileRatio*float64(max(r.DataFiles, 1)) {
		add("rewrite-data-files", "%s delete files (%s) for %s data files are merged into every read: run `floe maintain rewrite-data-files %s --delete-file-threshold 1` to apply them",
			Count(int64(r.DeleteFiles)), Bytes(r.DeleteBytes), Count(int64(r.DataFiles)), name)
	}
	if r.DataRecords > 0 && float64(r.DeletedRows) >= MaxHealthyDeletedShare*float64(r.DataRecords) {
		add("rewrite-data-files", "%d%% of the data rows (%s of %s) are deleted by deletion vectors or position deletes, and every read skips them (%.2f rows read per live row): "+
			"run `floe maintain rewrite-data-files %s --delete-ratio-threshold %g`, which rewrites the files with at least that share deleted",
			int(100*float64(r.DeletedRows)/float64(r.DataRecords)+0.5), Count(r.DeletedRows), Count(r.DataRecords), r.RowsReadPerLiveRow, name, MaxHealthyDeletedShare)
	}
	if r.EqualityDeleteFiles > 0 && r.FormatVersion >= 3 {
		add("convert-equality-deletes", "%s equality delete files (%s keys) are matched against every row of the older data files on each read: "+
			"run `floe maintain convert-equality-deletes %s` to turn them into deletion vectors",
			Count(int64(r.EqualityDeleteFiles)), Count(r.EqualityDeleteRows), name)
	}
	if r.Manifests > MaxHealthyManifests {
		add("rewrite-manifests", "%s manifests (%s) are read to plan every scan: run `floe maintain rewrite-manifests %s`",
			Count(int64(r.Manifests)), Bytes(r.ManifestBytes), name)
	}
	logCap, err := strconv.Atoi(props[metadataPreviousVersionsKey])
	if err != nil || logCap < 1 {
		logCap = defaultPreviousVersionsMax
	}
	if props[metadataDeleteAfterCommitKey] != "true" {
		switch {
		case r.MetadataLogEntries >= logCap:
			add("metadata-retention", "the metadata log is full (%s entries, %s=%d): every commit now drops the oldest from the log but leaves its file on storage; "+
				"set %s=true so that it is deleted", Count(int64(r.MetadataLogEntries)), metadataPreviousVersionsKey, logCap, metadataDeleteAfterCommitKey)
		case r.MetadataFiles > MaxHealthyMetadataFiles:
			add("metadata-retention", "%s metadata files (%s) are kept; set %s=true and %s=%d so that old ones are deleted at commit",
				Count(int64(r.MetadataFiles)), Bytes(r.MetadataBytes), metadataDeleteAfterCommitKey, metadataPreviousVersionsKey, MaxHealthyMetadataFiles)
		}
	}
	if r.PlanMs > SlowPlanMs {
		add("plan", "planning a full scan takes %s; fewer manifests and data files (the steps above) make it faster", Duration(int64(r.PlanMs)))
	}
	return out
}

// SnapshotSpan tells the snapshot count, the time between the oldest and
// newest, and the daily rate where the history is long enough to tell
// one: "25 over 489 ms", "1,980 over 3.5 days (566 a day)".
func (r Report) SnapshotSpan() string {
	s := Count(int64(r.Snapshots))
	if r.Snapshots > 1 {
		s += " over " + Duration(r.HistoryMs)
	}
	if r.SnapshotsPerDay != nil {
		s += " (" + Count(int64(*r.SnapshotsPerDay+0.5)) + " a day)"
	}
	return s
}

// Count formats n with thousands separators: 1,980.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Counted writes a count, as Count does, with its noun in the singular or
// the plural: "1 file", "1,980 snapshots", "2 batches".
func Counted[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "ch") {
		return Count(int64(n)) + " " + noun + "es"
	}
	return Count(int64(n)) + " " + noun + "s"
}

// Bytes formats a size in binary units: 128 MiB, 3.4 KiB, 512 B.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTPE"[i]) + "iB"
}

// Duration formats milliseconds coarsely, as a person says it: 87 s,
// 2 days, 3.5 h.
func Duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	trim := func(v float64, unit string) string {
		s := strconv.FormatFloat(v, 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + " " + unit
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < 2*time.Minute:
		return trim(d.Seconds(), "s")
	case d < 2*time.Hour:
		return trim(d.Minutes(), "min")
	case d < 48*time.Hour:
		return trim(d.Hours(), "h")
	default:
		return trim(d.Hours()/24, "days")
	}
}
