package maintenance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"

	"github.com/floe-io/floe/filter"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/scan"
)

// Rewrite strategies, with Spark's names (rewrite_data_files).
const (
	StrategyBinpack = "binpack"
	StrategySort    = "sort"
)

// RewriteOptions configure RewriteDataFiles, after Spark's
// rewrite_data_files procedure.
type RewriteOptions struct {
	// TargetFileSize is the size output files roll at; 0 takes the
	// table's write.target-file-size-bytes (default 512 MiB). Files from
	// 75% to 180% of it are left alone, as in Iceberg.
	TargetFileSize int64
	// MinInputFiles is the fewest files worth rewriting together in a
	// partition; 0 means Iceberg's default, 5.
	MinInputFiles int
	// Where limits the rewrite to files that may hold rows matching this
	// filter (package filter's syntax); the files are rewritten whole.
	Where string
	// Strategy is StrategyBinpack (default) or StrategySort, which orders
	// each partition's rows by SortBy before writing them, so that files
	// hold disjoint ranges of the first sort column.
	Strategy string
	SortBy   []string
	// DeleteFileThreshold rewrites a data file that at least this many
	// delete files apply to, whatever its size (Iceberg's
	// delete-file-threshold); 0 is Iceberg's default, off.
	DeleteFileThreshold int
	// DeleteRatioThreshold rewrites a data file once this fraction of its
	// rows is deleted by deletion vectors or position deletes naming it,
	// whatever its size (Iceberg's delete-ratio-threshold); 0 is
	// Iceberg's default, DefaultDeleteRatioThreshold.
	DeleteRatioThreshold float64
	// RewriteAll rewrites every file (that Where selects), whatever its
	// size and deletes, as Spark's rewrite-all: afterwards no delete file
	// applies to the files rewritten.
	RewriteAll bool
	// PartialProgress commits each file group on its own, so that a
	// failing group (a conflict with another compaction) does not undo
	// the others.
	PartialProgress bool
	// DryRun plans without writing or committing anything.
	DryRun bool
}

// DefaultDeleteRatioThreshold is Iceberg's delete-ratio-threshold: a data
// file with 30% of its rows deleted costs as much to read as it would to
// rewrite a few times over.
const DefaultDeleteRatioThreshold = compaction.DefaultDeleteRatioThreshold

// RewriteResult reports a rewrite, in counts and bytes.
type RewriteResult struct {
	Groups             int   `json:"groups"`
	RewrittenDataFiles int   `json:"rewritten_data_files"`
	RewrittenBytes     int64 `json:"rewritten_bytes"`
	AddedDataFiles     int   `json:"added_data_files"`
	AddedBytes         int64 `json:"added_bytes"`
	RemovedDeleteFiles int   `json:"removed_delete_files"`
	// CarriedDeletes counts rows deleted by another commit while the
	// rewrite ran, whose deletes were carried over to the new files.
	CarriedDeletes int64   `json:"carried_deletes"`
	FailedGroups   int     `json:"failed_groups"`
	SkippedFiles   int     `json:"skipped_files"`
	Snapshots      []int64 `json:"snapshot_ids"`
	DryRun         bool    `json:"dry_run"`
}

// RewriteDataFiles compacts the current snapshot's small data files (and
// files with many deletes) into files of the target size: binpack
// concatenates them, sort orders their rows first. Deletes are applied
// while reading, and delete files that no longer apply to any data file
// are removed in the same commit.
//
// Files are written once; the commit is then validated against the table
// as it is at commit time and retried on a lost race, so appends that
// happen meanwhile are kept, and a group whose files another commit
// removed fails without changing anything. Files of a commit the catalog
// refused are deleted; a commit whose answer was lost is looked for in the
// table, and its files stay while it may have landed.
func RewriteDataFiles(ctx context.Context, cat catalog.Catalog, ident table.Identifier, o RewriteOptions) (RewriteResult, error) {
	res := RewriteResult{DryRun: o.DryRun}
	if o.Strategy == "" {
		o.Strategy = StrategyBinpack
	}
	switch o.Strategy {
	case StrategyBinpack:
		if len(o.SortBy) > 0 {
			return res, fmt.Errorf("%w: sort columns need the sort strategy", ingest.ErrConfig)
		}
	case StrategySort:
		if len(o.SortBy) == 0 {
			return res, fmt.Errorf("%w: the sort strategy needs the columns to sort by", ingest.ErrConfig)
		}
	default:
		return res, fmt.Errorf("%w: strategy %q is not known; use binpack or sort", ingest.ErrConfig, o.Strategy)
	}
	if o.DeleteFileThreshold < 0 {
		return res, fmt.Errorf("%w: delete-file-threshold %d is negative; give the fewest delete files that make a file worth rewriting, such as 1", ingest.ErrConfig, o.DeleteFileThreshold)
	}
	if o.DeleteRatioThreshold < 0 || o.DeleteRatioThreshold > 1 {
		return res, fmt.Errorf("%w: delete-ratio-threshold %g is not a fraction of a file's rows; give one from 0 to 1, such as %g", ingest.ErrConfig, o.DeleteRatioThreshold, DefaultDeleteRatioThreshold)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return res, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	if tbl.CurrentSnapshot() == nil {
		return res, nil
	}
	for _, c := range o.SortBy {
		if _, ok := tbl.Schema().FindFieldByName(c); !ok || strings.Contains(c, ".") {
			return res, fmt.Errorf("%w: sort column %q is not a top-level column of table %s", ingest.ErrConfig, c, strings.Join(ident, "."))
		}
	}
	if o.Strategy == StrategySort && tbl.Metadata().Version() >= 3 {
		return res, fmt.Errorf("%w: table %s is format v3, whose row lineage a sort would lose; use the binpack strategy", ingest.ErrConfig, strings.Join(ident, "."))
	}
	target := o.TargetFileSize
	if target <= 0 {
		target = int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	groups, skipped, err := planRewrite(ctx, tbl, o, target)
	if err != nil {
		return res, err
	}
	res.Groups, res.SkippedFiles = len(groups), skipped
	for _, g := range groups {
		res.RewrittenDataFiles += len(g.Tasks)
		res.RewrittenBytes += g.TotalSizeBytes
	}
	if o.DryRun || len(groups) == 0 {
		return res, nil
	}
	res.RewrittenDataFiles, res.RewrittenBytes = 0, 0
	var done []groupDone
	fail := func(err error) (RewriteResult, error) {
		if !errors.Is(err, errOutcomeUnknown) {
			discard(ctx, tbl, done)
		}
		return res, err
	}
	for _, g := range groups {
		gr, err := rewriteGroup(ctx, tbl, g, o, target)
		done = append(done, groupDone{group: g, result: gr, lineage: o.Strategy == StrategyBinpack && tbl.Metadata().Version() >= 3})
		if err != nil {
			return fail(fmt.Errorf("rewrite table %s, partition %s: %w", strings.Join(ident, "."), partitionName(g), err))
		}
	}
	// The first commit starts from the table the rewrite read; the next
	// ones follow it and load the table.
	base := tbl
	commit := func(ds []groupDone) error {
		var carried int64
		from := base
		base = nil
		id := uuid.NewString()
		committed, unknown, err := markedCommit(ctx, cat, ident, from, id, func(cur *table.Table) (*table.Transaction, error) {
			tx, n, err := rewriteTransaction(ctx, tbl, cur, ds, o.PartialProgress, id)
			carried = n
			return tx, err
		})
		if unknown {
			return fmt.Errorf("%w: %w", errOutcomeUnknown, err)
		}
		if err != nil {
			return err
		}
		res.Snapshots = append(res.Snapshots, committed.CurrentSnapshot().SnapshotID)
		res.CarriedDeletes += carried
		for _, d := range ds {
			res.RewrittenDataFiles += len(d.result.OldDataFiles)
			res.RewrittenBytes += d.result.BytesBefore
			res.AddedDataFiles += len(d.result.NewDataFiles)
			res.AddedBytes += d.result.BytesAfter
		}
		if s := committed.CurrentSnapshot(); s != nil && s.Summary != nil {
			if n, err := strconv.Atoi(s.Summary.Properties["removed-delete-files"]); err == nil {
				res.RemovedDeleteFiles += n
			}
		}
		return nil
	}
	if !o.PartialProgress {
		if err := commit(done); err != nil {
			return fail(err)
		}
		return res, nil
	}
	var errs []error
	for _, d := range done {
		if err := commit([]groupDone{d}); err != nil {
			if !errors.Is(err, errOutcomeUnknown) {
				discard(ctx, tbl, []groupDone{d})
			}
			res.FailedGroups++
			errs = append(errs, fmt.Errorf("partition %s: %w", partitionName(d.group), err))
		}
	}
	if len(errs) == len(done) {
		return res, errors.Join(errs...)
	}
	return res, nil
}

// groupDone is a file group and the files its rewrite wrote; lineage
// tells that the rewrite kept the group's rows in their order
// (iceberg-go's executor), so that positions can be carried over.
type groupDone struct {
	group   table.CompactionTaskGroup
	result  table.CompactionGroupResult
	lineage bool
}

// planRewrite picks the files to rewrite, grouped by partition as
// Iceberg's bin-pack planner does (compaction.Config); the sort strategy
// sorts each partition's picked files together.
func planRewrite(ctx context.Context, tbl *table.Table, o RewriteOptions, target int64) ([]table.CompactionTaskGroup, int, error) {
	var scanOpts []table.ScanOption
	if o.Where != "" {
		e, err := filter.Parse(o.Where)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: where: %v", ingest.ErrConfig, err)
		}
		b, err := filter.Bind(e, tbl.Schema())
		if err != nil {
			return nil, 0, fmt.Errorf("%w: where: %v", ingest.ErrConfig, err)
		}
		scanOpts = append(scanOpts, table.WithRowFilter(b.Pushed))
	}
	tasks, err := tbl.Scan(scanOpts...).PlanFiles(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("plan the files of table %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	// Compaction plans, reads and replaces files, never parts of them.
	tasks = scan.WholeFiles(tasks)
	if o.Where != "" {
		// The filter's residual on a task is the rest of the filter, not
		// a delete: rewrite every row of the picked files.
		for i := range tasks {
			tasks[i].Residual = nil
		}
	}
	cfg := binpackConfig(target)
	if o.DeleteFileThreshold > 0 {
		cfg.DeleteFileThreshold = o.DeleteFileThreshold
	}
	if o.DeleteRatioThreshold > 0 {
		cfg.DeleteRatioThreshold = o.DeleteRatioThreshold
	}
	minInput := int(compaction.DefaultMinInputFiles)
	if o.MinInputFiles > 0 {
		minInput = o.MinInputFiles
	}
	heavy, err := deleteHeavy(cfg, tasks)
	if err != nil {
		return nil, 0, err
	}
	if o.Strategy == StrategySort || o.RewriteAll {
		// Sorting re-clusters whole partitions, whatever their files'
		// sizes (Spark's rewrite-all): a file of the right size still
		// overlaps the others' ranges.
		return partitionGroups(tasks, heavy, o.RewriteAll, mixingSpec(tbl.Metadata(), o.Strategy)), 0, nil
	}
	return binpackGroups(cfg, tasks, minInput, heavy, mixingSpec(tbl.Metadata(), o.Strategy))
}

// mixingSpec is the id of the spec whose files the planners group by
// partition, putting the files of earlier specs in one group; -1 has them
// group every file by its own spec's partition. Binpack on format v3 goes
// through iceberg-go's executor, which keeps row lineage but writes one
// partition a group, so that it moves older files partition by partition.
func mixingSpec(md table.Metadata, strategy string) int {
	if strategy == StrategyBinpack && md.Version() >= 3 {
		return -1
	}
	spec := md.PartitionSpec()
	return spec.ID()
}

// olderSpecs is the partition key of the group that holds the files of
// earlier partition specs. Iceberg plans them as one partition, whatever
// their old partitions: the writer spreads their rows over the current
// spec's partitions, so that files a finer spec kept apart merge in one
// rewrite.
const olderSpecs = "(files of earlier partition specs)"

// splitBySpec parts tasks into those of spec and the others; spec -1
// takes them all.
func splitBySpec(tasks []table.FileScanTask, spec int) (current, older []table.FileScanTask) {
	for _, t := range tasks {
		if spec < 0 || int(t.File.SpecID()) == spec {
			current = append(current, t)
		} else {
			older = append(older, t)
		}
	}
	return current, older
}

// binpackConfig is Iceberg's bin-pack planner for target: files from 75%
// to 180% of it are of a good size, and deletes pick no file unless the
// caller sets a threshold.
func binpackConfig(target int64) compaction.Config {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = target
	cfg.MinFileSizeBytes = target * 3 / 4
	cfg.MaxFileSizeBytes = target * 9 / 5
	cfg.DeleteFileThreshold = math.MaxInt
	// min-input-files is applied by binpackGroups, where files picked for
	// their deletes are exempt from it, as in Iceberg.
	cfg.MinInputFiles = 1
	return cfg
}

// binpackGroups bin-packs each partition's files as cfg plans them and
// keeps the groups of at least minInput files, or with a file heavy with
// deletes; it also returns how many files it leaves alone. Health counts
// the small files it would merge with the same plan.
func binpackGroups(cfg compaction.Config, tasks []table.FileScanTask, minInput int, heavy map[string]bool, spec int) ([]table.CompactionTaskGroup, int, error) {
	current, older := splitBySpec(tasks, spec)
	plan, err := cfg.PlanCompaction(current)
	if err != nil {
		return nil, 0, err
	}
	if len(older) > 0 {
		// The older files' candidates, picked by the same rules, make
		// one group.
		op, err := cfg.PlanCompaction(older)
		if err != nil {
			return nil, 0, err
		}
		plan.SkippedFiles += op.SkippedFiles
		g := compaction.Group{PartitionKey: olderSpecs}
		for _, og := range op.Groups {
			g.Tasks = append(g.Tasks, og.Tasks...)
			g.TotalSizeBytes += og.TotalSizeBytes
		}
		if len(g.Tasks) > 0 {
			plan.Groups = append(plan.Groups, g)
		}
	}
	var groups []table.CompactionTaskGroup
	skipped := plan.SkippedFiles
	for _, g := range plan.Groups {
		if len(g.Tasks) < minInput && !slices.ContainsFunc(g.Tasks, func(t table.FileScanTask) bool { return heavy[t.File.FilePath()] }) {
			skipped += len(g.Tasks)
			continue
		}
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
	}
	return groups, skipped, nil
}

// deleteHeavy finds the files cfg's delete rules pick whatever their size
// (delete-file-threshold, delete-ratio-threshold), by planning with no
// file too small.
func deleteHeavy(cfg compaction.Config, tasks []table.FileScanTask) (map[string]bool, error) {
	cfg.MinFileSizeBytes = 0
	plan, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return nil, err
	}
	heavy := map[string]bool{}
	for _, g := range plan.Groups {
		for _, t := range g.Tasks {
			heavy[t.File.FilePath()] = true
		}
	}
	return heavy, nil
}

// partitionGroups groups tasks by partition of the current spec, one
// group per partition in order of first appearance, and the files of
// earlier specs in one: every group with all, else those with more than
// one file or a file heavy with deletes.
func partitionGroups(tasks []table.FileScanTask, heavy map[string]bool, all bool, spec int) []table.CompactionTaskGroup {
	var groups []table.CompactionTaskGroup
	at := map[string]int{}
	for _, t := range tasks {
		key := partitionKey(t.File)
		if spec >= 0 && int(t.File.SpecID()) != spec {
			key = olderSpecs
		}
		i, ok := at[key]
		if !ok {
			i = len(groups)
			at[key] = i
			groups = append(groups, table.CompactionTaskGroup{PartitionKey: key})
		}
		groups[i].Tasks = append(groups[i].Tasks, t)
		groups[i].TotalSizeBytes += t.File.FileSizeBytes()
	}
	return slices.DeleteFunc(groups, func(g table.CompactionTaskGroup) bool {
		return !all && len(g.Tasks) < 2 && !heavy[g.Tasks[0].File.FilePath()]
	})
}

// rewriteGroup writes a group's rows into new files. Binpack on format v3
// goes through iceberg-go's executor, which keeps row lineage; everything
// else is read through floe's file reader, which also fixes what
// iceberg-go reads wrong in other engines' files (identity-partition
// columns the files lack, initial defaults), and written by floe's writer
// as ingested files are: 1.4–1.9× the MB per CPU-second of iceberg-go's
// writer (docs/benchmarks.md, compaction).
func rewriteGroup(ctx context.Context, tbl *table.Table, g table.CompactionTaskGroup, o RewriteOptions, target int64) (table.CompactionGroupResult, error) {
	if o.Strategy == StrategyBinpack && tbl.Metadata().Version() >= 3 {
		// iceberg-go's writer makes every bloom filter its maximum size:
		// cut it to the group's rows, which no file written exceeds.
		var rows int64
		for _, t := range g.Tasks {
			rows += t.File.Count()
		}
		sized, err := write.BloomSizedFor(tbl, rows)
		if err != nil {
			return table.CompactionGroupResult{}, err
		}
		return table.ExecuteCompactionGroup(ctx, sized, g, table.WithCompactionTargetFileSize(target))
	}
	gr := table.CompactionGroupResult{PartitionKey: g.PartitionKey, BytesBefore: g.TotalSizeBytes}
	rd, err := scan.NewFileReader(ctx, tbl, scan.Options{})
	if err != nil {
		return gr, err
	}
	var parts []ingest.Part
	rest := g.Tasks
	if o.Strategy == StrategyBinpack {
		if parts, rest, err = copyableParts(ctx, tbl, rd, g.Tasks); err != nil {
			return gr, err
		}
	}
	var restSize int64
	for _, t := range rest {
		restSize += t.File.FileSizeBytes()
	}
	part := groupPart{name: "partition " + partitionName(g), size: restSize, open: func(ctx context.Context) (array.RecordReader, error) {
		return rd.Open(ctx, rest), nil
	}}
	if o.Strategy == StrategySort {
		sorted, err := sortGroup(ctx, rd, g, o.SortBy)
		if err != nil {
			return gr, err
		}
		defer sorted.Release()
		// The writer rolls files between records: hand it the sorted rows
		// in slices, so that files roll near the target.
		step := sliceRows(g, target)
		part.open = func(context.Context) (array.RecordReader, error) { return slicesOf(sorted, step) }
	}
	w := &write.Writer{Table: tbl, FilePrefix: "rewrite", TargetFileSize: target, OneFile: true}
	// The file reader yields a required identity-partition source as
	// optional (it fills it for files that lack it): check the values.
	w.Conform.AllowNullable = true
	if len(rest) > 0 {
		parts = append(parts, part)
	}
	res, err := w.Write(ctx, parts)
	if err != nil {
		// The part is the group, not an input file: the reader's own
		// error names the file.
		if bf, ok := errors.AsType[*ingest.BadFileError](err); ok && bf.Path == part.name {
			err = bf.Err
		}
		return gr, fmt.Errorf("write: %w", err)
	}
	for _, f := range res.Files {
		gr.NewDataFiles = append(gr.NewDataFiles, f.File)
		gr.BytesAfter += f.SizeBytes
	}
	for _, t := range g.Tasks {
		gr.OldDataFiles = append(gr.OldDataFiles, t.File)
	}
	gr.SafePosDeletes = table.CollectSafePositionDeletes(g.Tasks)
	gr.SafeDeletionVectors = table.CollectSafeDeletionVectors(g.Tasks)
	return gr, nil
}

// groupPart is a file group's rows, as the one part floe's writer reads.
type groupPart struct {
	name string
	size int64
	open func(ctx context.Context) (array.RecordReader, error)
}

var _ ingest.Part = groupPart{}

func (p groupPart) Name() string                                         { return p.name }
func (p groupPart) SizeBytes() int64                                     { return p.size }
func (p groupPart) Open(ctx context.Context) (array.RecordReader, error) { return p.open(ctx) }

// sortGroup reads the group's rows and sorts them into one record.
func sortGroup(ctx context.Context, rd *scan.FileReader, g table.CompactionTaskGroup, keys []string) (arrow.RecordBatch, error) {
	rdr := rd.Open(ctx, g.Tasks)
	defer rdr.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	return sortRecords(ctx, rd.Schema(), recs, keys)
}

// rewriteTransaction stages the groups' replacement on cur, the table as
// it is now, for groups read from start. The new files keep the data
// sequence number of start's snapshot (Iceberg's
// use-starting-sequence-number), so equality deletes committed since still
// apply to their rows; deletion vectors committed since for rewritten files
// are carried over to the new files' positions (the count it returns), and
// any other delete committed since for rewritten rows fails the commit. It
// also removes the delete files the rewrite applied, and, unless partial
// (one group cannot tell), the equality deletes that no longer apply to any
// data file.
func rewriteTransaction(ctx context.Context, start, cur *table.Table, done []groupDone, partial bool, id string) (*table.Transaction, int64, error) {
	fs, err := cur.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	startSnap := start.CurrentSnapshot()
	live, err := liveDeletes(fs, cur.CurrentSnapshot())
	if err != nil {
		return nil, 0, err
	}
	before := live
	if cur.CurrentSnapshot().SnapshotID != startSnap.SnapshotID {
		if before, err = liveDeletes(fs, startSnap); err != nil {
			return nil, 0, err
		}
	}
	carried, err := carryDeletes(ctx, fs, cur, done, live, before)
	if err != nil {
		return nil, 0, err
	}
	tx := cur.NewTransaction()
	rw := tx.NewRewrite(iceberg.Properties{ingest.SummaryMaintenance: "rewrite-data-files", summaryCommitID: id})
	rw.DataSequenceNumber(startSnap.SequenceNumber)
	rewritten := map[string]struct{}{}
	removed := map[string]bool{}
	var applied []iceberg.DataFile
	remove := func(f iceberg.DataFile) {
		if k := deleteKey(f); !removed[k] {
			if _, ok := live[k]; ok {
				removed[k] = true
				applied = append(applied, f)
			}
		}
	}
	for _, d := range done {
		for _, f := range d.result.OldDataFiles {
			rw.DeleteFile(f)
			rewritten[f.FilePath()] = struct{}{}
		}
		for _, f := range d.result.NewDataFiles {
			rw.AddDataFile(f)
		}
		for _, f := range d.result.SafePosDeletes {
			remove(f)
		}
		for _, f := range d.result.SafeDeletionVectors {
			remove(f)
		}
	}
	if !partial {
		// Judged on start's snapshot: equality deletes committed since
		// apply to the new files, which keep start's sequence number.
		dead, err := compaction.CollectDeadEqualityDeletesWithSpecs(ctx, fs, start.Metadata(), startSnap, rewritten)
		if err != nil {
			return nil, 0, fmt.Errorf("find dead equality deletes: %w", err)
		}
		for _, f := range dead {
			remove(f)
		}
	}
	for _, f := range carried.replaced {
		rw.DeleteFile(f)
	}
	for _, a := range carried.added {
		rw.AddDeleteFileWithDataSequenceNumber(a.file, a.seq)
	}
	if len(applied) > 0 {
		// Removed as a consequence of the rewrite, not rewritten
		// themselves: the rewrite result's slot for them says so.
		rw.ApplyResult(table.CompactionGroupResult{SafePosDeletes: applied})
	}
	if err := rw.Commit(ctx); err != nil {
		return nil, 0, fmt.Errorf("stage the rewrite: %w", err)
	}
	return tx, carried.rows, nil
}

// errOutcomeUnknown marks a rewrite whose commit may have landed though
// it failed: its files stay (remove-orphan-files takes them if it did
// not).
var errOutcomeUnknown = errors.New("the catalog did not say whether the rewrite was committed; its files are kept")

// discard deletes the files groups wrote for a rewrite that will not be
// committed.
func discard(ctx context.Context, tbl *table.Table, done []groupDone) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	for _, d := range done {
		for _, f := range d.result.NewDataFiles {
			_ = fs.Remove(f.FilePath())
		}
	}
}

func partitionName(g table.CompactionTaskGroup) string {
	if g.PartitionKey == "" {
		return "(unpartitioned)"
	}
	return g.PartitionKey
}

// sliceRows is how many sorted rows to hand the writer at a time: about a
// quarter of the target size, judged by the input files' bytes per row,
// since the writer rolls files only between records.
func sliceRows(g table.CompactionTaskGroup, target int64) int64 {
	var rows int64
	for _, t := range g.Tasks {
		rows += t.File.Count()
	}
	if rows == 0 || g.TotalSizeBytes == 0 {
		return 1 << 16
	}
	return min(max(target/4*rows/g.TotalSizeBytes, 1<<10), 1<<20)
}

// slicesOf reads rec in slices of step rows.
func slicesOf(rec arrow.RecordBatch, step int64) (array.RecordReader, error) {
	var parts []arrow.RecordBatch
	for off := int64(0); off < rec.NumRows(); off += step {
		parts = append(parts, rec.NewSlice(off, min(off+step, rec.NumRows())))
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	// The reader retains the slices it holds.
	return array.NewRecordReader(rec.Schema(), parts)
}
