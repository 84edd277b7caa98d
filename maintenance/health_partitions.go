package maintenance

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/partition"
)

// partitionTally counts a snapshot's live data files by partition, from
// their manifest entries alone.
type partitionTally struct {
	spec   iceberg.PartitionSpec
	schema *iceberg.Schema
	// parts holds each partition's files and bytes, keyed by partitionKey.
	parts map[string]*partitionCount
	// values holds, per field of the current spec, the distinct values its
	// files hold.
	values []map[string]struct{}
	// tasks are the data files as rewrite-data-files plans them.
	tasks []table.FileScanTask
	// older counts the files of earlier specs.
	older int
	// mixing is the spec rewrite-data-files groups older files against
	// (mixingSpec).
	mixing int
	// merged sums the files' mergedSize.
	merged int64
}

// chunkOverhead is about what a Parquet column chunk of a few rows holds
// besides its values: page and dictionary headers with their statistics.
const chunkOverhead = 64

// mergedSize estimates what a data file's rows take once merged with
// others: its column chunks (as the manifest records them, without the
// footer) less each chunk's headers. A small file is mostly footer and
// headers, which merging pays once instead of once a file, so that its
// size would make a coarser spec look larger than it ends up. A file
// without column sizes counts whole.
func mergedSize(df iceberg.DataFile) int64 {
	sizes := df.ColumnSizes()
	if len(sizes) == 0 {
		return df.FileSizeBytes()
	}
	var n int64
	for _, b := range sizes {
		n += b - chunkOverhead
	}
	return max(n, df.Count())
}

type partitionCount struct {
	files, small int
	bytes        int64
}

// fieldStats is one field of the current spec and how many partitions
// it splits the table into.
type fieldStats struct {
	source    string
	transform iceberg.Transform
	distinct  int
}

func newPartitionTally(md table.Metadata) *partitionTally {
	spec := md.PartitionSpec()
	return &partitionTally{spec: spec, schema: md.CurrentSchema(), parts: map[string]*partitionCount{}, values: make([]map[string]struct{}, spec.NumFields()),
		mixing: mixingSpec(md, StrategyBinpack)}
}

func (p *partitionTally) add(df iceberg.DataFile, small bool) {
	key := partitionKey(df)
	c := p.parts[key]
	if c == nil {
		c = &partitionCount{}
		p.parts[key] = c
	}
	c.files++
	c.bytes += df.FileSizeBytes()
	p.merged += mergedSize(df)
	if small {
		c.small++
	}
	p.tasks = append(p.tasks, table.FileScanTask{File: df, Length: df.FileSizeBytes()})
	if int(df.SpecID()) != p.spec.ID() {
		p.older++
		return
	}
	for i, pf := range p.spec.Fields() {
		if p.values[i] == nil {
			p.values[i] = map[string]struct{}{}
		}
		p.values[i][fmt.Sprint(df.Partition()[pf.FieldID])] = struct{}{}
	}
}

// fill sets the report's partition numbers. Mergeable small files are
// those rewrite-data-files's own bin-pack plan would rewrite with its
// default min-input-files, so that the advice to run it never meets
// "already of a good size".
func (p *partitionTally) fill(r *Report) error {
	for i, pf := range p.spec.Fields() {
		r.fields = append(r.fields, fieldStats{source: partition.SourceName(p.schema, pf), transform: pf.Transform, distinct: len(p.values[i])})
	}
	r.Partitions = len(p.parts)
	if r.Partitions > 0 {
		r.MeanPartitionFiles = float64(r.DataFiles) / float64(r.Partitions)
		r.MeanPartitionBytes = r.DataBytes / int64(r.Partitions)
	}
	for _, c := range p.parts {
		if c.files == 1 && c.small == 1 {
			r.LoneSmallFiles++
		}
	}
	groups, _, err := binpackGroups(binpackConfig(r.TargetFileSizeBytes), p.tasks, MinSmallFilesToCompact, nil, p.mixing)
	if err != nil {
		return fmt.Errorf("plan the rewrite of small files: %w", err)
	}
	merged := map[string]bool{}
	for _, g := range groups {
		for _, t := range g.Tasks {
			merged[t.File.FilePath()] = true
			if t.File.FileSizeBytes() < r.SmallFileThresholdBytes {
				r.MergeableSmallFiles++
			}
		}
	}
	r.OlderSpecFiles = p.older
	r.mergedBytes = p.merged
	for _, t := range p.tasks {
		if int(t.File.SpecID()) != p.spec.ID() && t.File.FileSizeBytes() < r.SmallFileThresholdBytes && !merged[t.File.FilePath()] {
			r.olderStranded++
		}
	}
	return nil
}

// partitionFields names the current spec's fields.
func partitionFields(md table.Metadata) []string {
	out := []string{}
	spec := md.PartitionSpec()
	for _, pf := range spec.Fields() {
		out = append(out, partition.Expr(partition.SourceName(md.CurrentSchema(), pf), pf.Transform))
	}
	return out
}

// PartitionSummary is the report's partition line: "80 by day(ts), mean
// 1 file, 714 B".
func (r Report) PartitionSummary() string {
	by := "(unpartitioned)"
	if len(r.PartitionFields) > 0 {
		by = "by " + strings.Join(r.PartitionFields, ", ")
	}
	return fmt.Sprintf("%s %s, mean %s, %s", Count(int64(r.Partitions)), by, meanFiles(r.MeanPartitionFiles), Bytes(r.MeanPartitionBytes))
}

// olderSpecAdvice is the advice for small files that an earlier spec
// strands in its partitions: rewrite-all writes every file into the
// current spec's partitions, where the next rewrite can merge them.
func olderSpecAdvice(r Report, name string) string {
	by := "the current spec's partitions (unpartitioned)"
	if len(r.PartitionFields) > 0 {
		by = "the current spec's partitions (by " + strings.Join(r.PartitionFields, ", ") + ")"
	}
	return fmt.Sprintf("%s small data files were written with an earlier partition spec and are too few in each of its partitions for rewrite-data-files to merge: "+
		"run `floe maintain rewrite-data-files %s --rewrite-all`, which rewrites every data file into %s, then `floe maintain rewrite-data-files %s` to merge them",
		Count(int64(r.olderStranded)), name, by, name)
}

// overPartitioned tells that the small files are small because the spec
// cuts the table too fine: its partitions hold less than a target-size
// file, and most small files are in partitions too small to merge, or
// even merged each partition would make one small file. Files an earlier
// spec strands are moved first: the current spec is judged after.
func overPartitioned(r Report) bool {
	if len(r.PartitionFields) == 0 || r.Partitions < 2 || r.mergedPartitionBytes() >= r.TargetFileSizeBytes || r.olderStranded >= MinSmallFilesToCompact {
		return false
	}
	stranded := r.SmallDataFiles - r.MergeableSmallFiles
	return 2*stranded > r.SmallDataFiles || r.MeanPartitionBytes < r.SmallFileThresholdBytes
}

// mergedPartitionBytes estimates what a partition holds on average once
// its files are merged, which is what a coarser spec gathers.
func (r Report) mergedPartitionBytes() int64 {
	return r.mergedBytes / int64(max(r.Partitions, 1))
}

// timeUnits are the time transforms from finest to coarsest, with about
// how many of each the next holds.
var timeUnits = []struct {
	transform iceberg.Transform
	perNext   float64
}{
	{iceberg.HourTransform{}, 24},
	{iceberg.DayTransform{}, 30},
	{iceberg.MonthTransform{}, 12},
	{iceberg.YearTransform{}, 0},
}

// coarserFields proposes partition fields with about need times fewer
// partitions, coarsening from the last field, usually the finest: a time
// unit up (day to month), fewer buckets, an identity field bucketed, and
// a field dropped where its coarsest form still splits too much. None
// left means the table needs no partitioning.
func coarserFields(fields []fieldStats, need float64) []string {
	out := make([]string, 0, len(fields))
	for i := len(fields) - 1; i >= 0; i-- {
		expr, fewer := coarsen(fields[i], need)
		need /= fewer
		if expr != "" {
			out = append([]string{expr}, out...)
		}
	}
	return out
}

// coarsen proposes one field at about need times fewer partitions, and
// how many times fewer it makes them; "" drops the field.
func coarsen(f fieldStats, need float64) (string, float64) {
	d := float64(f.distinct)
	if need <= 1 || d <= 1 {
		// A field of one value splits nothing: coarsening it gains nothing.
		return partition.Expr(f.source, f.transform), 1
	}
	switch t := f.transform.(type) {
	case iceberg.IdentityTransform:
		return bucketsFor(f.source, d, need)
	case iceberg.BucketTransform:
		return bucketsFor(f.source, min(d, float64(t.NumBuckets)), need)
	case iceberg.VoidTransform:
		return partition.Expr(f.source, t), 1
	}
	unit := -1
	for i, u := range timeUnits {
		if u.transform.Equals(f.transform) {
			unit = i
		}
	}
	if unit < 0 {
		// A truncate is coarser shorter for strings and wider for
		// numbers; dropping it is coarser for both.
		return "", d
	}
	fewer := 1.0
	for ; need > fewer && unit < len(timeUnits)-1; unit++ {
		per := timeUnits[unit].perNext
		fewer *= min(per, d)
		d = math.Ceil(d / per)
	}
	if need > fewer {
		return "", fewer * d
	}
	return partition.Expr(f.source, timeUnits[unit].transform), fewer
}

// bucketsFor hashes d values into about need times fewer buckets, or
// drops the field when fewer than two would be left.
func bucketsFor(src string, d, need float64) (string, float64) {
	n := int(d / need)
	if n < 2 {
		return "", d
	}
	return fmt.Sprintf("bucket(%s, %d)", src, n), d / float64(n)
}

// partitionAdvice is the advice for an over-partitioned table: what the
// partitions hold against the target, and a coarser spec in the words of
// partition-fields, set by set-partition-spec, with the one rewrite that
// moves the files written before into it.
func partitionAdvice(r Report, name string) string {
	var b strings.Builder
	stranded := r.SmallDataFiles - r.MergeableSmallFiles
	fmt.Fprintf(&b, "the table's %s (by %s) hold on average %s in %s against a target file size of %s, so its files stay small",
		Counted(r.Partitions, "partition"), strings.Join(r.PartitionFields, ", "), Bytes(r.MeanPartitionBytes), meanFiles(r.MeanPartitionFiles), Bytes(r.TargetFileSizeBytes))
	if stranded > 0 {
		fmt.Fprintf(&b, ": %s of the %s small data files (%s alone in their partition) are in partitions with too few files for rewrite-data-files, which merges files only within a partition",
			Count(int64(stranded)), Count(int64(r.SmallDataFiles)), Count(int64(r.LoneSmallFiles)))
	}
	coarser := coarserFields(r.fields, float64(r.TargetFileSizeBytes)/float64(max(r.mergedPartitionBytes(), 1)))
	if len(coarser) == 0 {
		fmt.Fprintf(&b, "; at about %s in all once merged the table needs no partitioning: write it into a table created without partition-fields (partition-spec-evolution cannot drop every field)",
			Bytes(r.mergedBytes))
		return b.String()
	}
	rewrite := fmt.Sprintf("then `floe maintain rewrite-data-files %s`, which rewrites the files written before into the new partitions", name)
	if r.FormatVersion >= 3 {
		// Binpack on v3 moves an old partition a group (mixingSpec).
		rewrite = fmt.Sprintf("then `floe maintain rewrite-data-files %s --rewrite-all`, which rewrites the files written before into the new partitions, and `floe maintain rewrite-data-files %s` to merge them", name, name)
	}
	fmt.Fprintf(&b, "; at about %s a partition once merged, partition it more coarsely, by %s: run `floe table set-partition-spec %s --partition-fields '%s'`, %s, "+
		"and set `partition-fields: [%s]` (`--partition-fields '%s'`) in the pipeline that writes it",
		Bytes(r.mergedPartitionBytes()), strings.Join(coarser, ", "), name, strings.Join(coarser, ","), rewrite, yamlList(coarser), strings.Join(coarser, ","))
	return b.String()
}

// yamlList writes entries for a YAML flow sequence, quoting those whose
// comma would split them: month(ts), "bucket(country, 4)".
func yamlList(entries []string) string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e
		if strings.Contains(e, ",") {
			out[i] = strconv.Quote(e)
		}
	}
	return strings.Join(out, ", ")
}

// meanFiles writes a mean file count: "1 file", "8 files", "1.5 files".
// The noun follows the number as written, so that 1.01 is "1 file".
func meanFiles(n float64) string {
	s := strings.TrimSuffix(strconv.FormatFloat(n, 'f', 1, 64), ".0")
	if s == "1" {
		return "1 file"
	}
	return s + " files"
}
