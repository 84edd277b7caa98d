package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
)

// partitionHealth is the partition part of `floe table health --json`.
type partitionHealth struct {
	healthReport
	PartitionFields     []string `json:"partition_fields"`
	Partitions          int      `json:"partitions"`
	MeanPartitionFiles  float64  `json:"mean_partition_files"`
	MeanPartitionBytes  int64    `json:"mean_partition_bytes"`
	MergeableSmallFiles int      `json:"mergeable_small_files"`
	LoneSmallFiles      int      `json:"lone_small_files"`
	OlderSpecFiles      int      `json:"older_spec_files"`
}

var countrySchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "country", Type: arrow.BinaryTypes.String},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// writeCountries drops a Parquet file of rows ids first.. into the
// landing directory, row i in country c<i mod countries> on day i mod
// countries from 2026-01-01.
func writeCountries(t *testing.T, e *env, rel string, first, rows, countries int) {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, countrySchema)
	defer b.Release()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := first; i < first+rows; i++ {
		c := i % countries
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("c%02d", c))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(day0.AddDate(0, 0, c).Add(time.Duration(i) * time.Second).UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, rel), rec); err != nil {
		t.Fatal(err)
	}
}

func partitionHealthOf(t *testing.T, e *env, name string) partitionHealth {
	t.Helper()
	var h partitionHealth
	if err := json.Unmarshal([]byte(e.OK("table", "health", name, "--json", "--plan-runs", "0").Stdout), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// partitionsOf counts a table's live data files per partition as
// iceberg-go's manifest reader sees them.
func partitionsOf(t *testing.T, e *env, name string) map[string]int {
	t.Helper()
	files, _ := dataFiles(t, e.Warehouse, name)
	out := map[string]int{}
	for _, f := range files {
		p := f.Partition()
		var key strings.Builder
		for _, id := range slices.Sorted(maps.Keys(p)) {
			fmt.Fprintf(&key, "%d=%v ", id, p[id])
		}
		out[key.String()]++
	}
	return out
}

func recommendation(h partitionHealth, kind string) string {
	for _, r := range h.Recommendations {
		if r.Kind == kind {
			return r.Message
		}
	}
	return ""
}

// A table partitioned on a column of 80 values and written in one batch
// has one small file per partition: rewrite-data-files cannot merge
// files of different partitions, so health advises a coarser partition
// spec instead, in partition-fields' own words, judged by what the rows
// take once merged: 400 rows need no partitioning even at a target of
// 16 KiB, 8000 or 16000 fill a few such files.
func TestTableHealthOverPartitioned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, field, named string
		rows               int
		// files bounds the files the advice followed leaves.
		files int
		props []string
		want  []string
	}{
		{name: "day", field: "day(ts)", named: "day(ts)", rows: 16000, files: 6, props: []string{"-p", "table-default.write.target-file-size-bytes=16384"},
			want: []string{"target file size of 16 KiB", "partition-fields: [month(ts)]", "`floe table set-partition-spec db.t --partition-fields 'month(ts)'`"}},
		{name: "day v3", field: "day(ts)", named: "day(ts)", rows: 64000, files: 16, props: []string{"-p", "table-default.write.target-file-size-bytes=65536", "--format-version", "3"},
			want: []string{"partition-fields: [month(ts)]", "`floe table set-partition-spec db.t --partition-fields 'month(ts)'`, then `floe maintain rewrite-data-files db.t --rewrite-all`"}},
		{name: "identity", field: "country", named: "identity(country)", rows: 400,
			want: []string{"target file size of 512 MiB", "needs no partitioning"}},
		{name: "small", field: "country", named: "identity(country)", rows: 400, props: []string{"-p", "table-default.write.target-file-size-bytes=16384"},
			want: []string{"target file size of 16 KiB", "needs no partitioning"}},
		{name: "identity to buckets", field: "country", named: "identity(country)", rows: 8000, props: []string{"-p", "table-default.write.target-file-size-bytes=16384"},
			want: []string{`partition-fields: ["bucket(country, 2)"]`, "`floe table set-partition-spec db.t --partition-fields 'bucket(country, 2)'`"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			writeCountries(t, e, "all.parquet", 0, c.rows, 80)
			if r := e.Stream("db.t", append([]string{"--partition-fields", c.field, "--maintenance=false"}, c.props...)...); r.Code != 0 {
				t.Fatal(r)
			}
			parts := partitionsOf(t, e, "db.t")
			if len(parts) != 80 {
				t.Fatalf("the table has %d partitions, want 80", len(parts))
			}
			h := partitionHealthOf(t, e, "db.t")
			t.Logf("recommendations: %+v", h.Recommendations)
			if h.Partitions != 80 || h.MeanPartitionFiles != 1 || h.MeanPartitionBytes != h.DataBytes/80 || h.DataFiles != 80 ||
				h.LoneSmallFiles != 80 || h.MergeableSmallFiles != 0 || !slices.Equal(h.PartitionFields, []string{c.named}) {
				t.Errorf("health: %d partitions by %v, %.2f files and %d bytes a partition, %d of %d small files alone, %d mergeable",
					h.Partitions, h.PartitionFields, h.MeanPartitionFiles, h.MeanPartitionBytes, h.LoneSmallFiles, h.SmallDataFiles, h.MergeableSmallFiles)
			}
			if msg := recommendation(h, "rewrite-data-files"); msg != "" {
				t.Errorf("health advises rewrite-data-files, which cannot merge files of different partitions: %s", msg)
			}
			msg := recommendation(h, "partition-spec")
			if msg == "" {
				t.Fatalf("no partition-spec advice: %+v", h.Recommendations)
			}
			for _, w := range append([]string{"80 partitions (by " + c.named + ")"}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("partition advice lacks %q: %s", w, msg)
				}
			}
			page := filepath.Join(e.Dir, "health.html")
			text := e.OK("table", "health", "db.t", "--plan-runs", "0", "--html", page).Stdout
			if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "<th>partitions</th><td>80 by "+c.named+", mean 1 file, ") {
				t.Errorf("the HTML report has no partitions row (%v)", err)
			}
			if want := regexp.MustCompile(`partitions +80 by ` + regexp.QuoteMeta(c.named) + `, mean 1 file, `); !want.MatchString(text) {
				t.Errorf("text report lacks %s:\n%s", want, text)
			}
			if strings.Count(text, "`floe maintain rewrite-data-files db.t`") != strings.Count(text, "`floe table set-partition-spec db.t ") {
				t.Errorf("text report advises rewrite-data-files without a new spec:\n%s", text)
			}
			// The advice not given would indeed have done nothing.
			if r := e.OK("maintain", "rewrite-data-files", "db.t"); !strings.Contains(r.Stdout, "nothing to rewrite") {
				t.Errorf("rewrite-data-files: %s", r)
			}
			if strings.HasPrefix(c.name, "day") {
				followPartitionAdvice(t, e, msg, c.files)
			}
		})
	}
}

// A mean just above one file a partition (81 files in 80 partitions) is
// written as it rounds, "1 file"; the advice names the partition fields
// as partition-fields does, without brackets.
func TestTableHealthMeanFilesRounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeCountries(t, e, "all.parquet", 0, 400, 80)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts),country", "--maintenance=false")...)
	writeCountries(t, e, "one.parquet", 400, 1, 80)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts),country", "--maintenance=false")...)
	h := partitionHealthOf(t, e, "db.t")
	if h.Partitions != 80 || h.DataFiles != 81 {
		t.Fatalf("health: %d files in %d partitions, want 81 in 80", h.DataFiles, h.Partitions)
	}
	text := e.OK("table", "health", "db.t", "--plan-runs", "0").Stdout
	if want := regexp.MustCompile(`partitions +80 by day\(ts\), identity\(country\), mean 1 file, `); !want.MatchString(text) {
		t.Errorf("text report lacks %s:\n%s", want, text)
	}
	if msg := recommendation(h, "partition-spec"); !strings.Contains(msg, "80 partitions (by day(ts), identity(country))") {
		t.Errorf("partition advice does not name the fields as partition-fields does: %s", msg)
	}
}

// followPartitionAdvice runs the commands the advice gives as a user
// copies them, with no new input, and checks that they leave the table in
// at most most files of the coarser spec, with the same rows as an
// independent reader sees them, that health then advises nothing more,
// and that the pipeline the advice describes writes the table. On format
// v3 the advice has two rewrites, and the second packs the first's files
// into groups of about the target size.
func followPartitionAdvice(t *testing.T, e *env, msg string, most int) {
	t.Helper()
	cmds := regexp.MustCompile("`floe ([^`]*)`").FindAllStringSubmatch(msg, -1)
	if len(cmds) < 2 || cmds[0][1] != "table set-partition-spec db.t --partition-fields 'month(ts)'" || cmds[len(cmds)-1][1] != "maintain rewrite-data-files db.t" {
		t.Fatalf("advised commands %v: %s", cmds, msg)
	}
	before := rowsOf(t, e, "db.t")
	for _, c := range cmds {
		t.Logf("floe %s: %s", c[1], e.OK(shellWords(t, c[1])...).Stdout)
	}
	files, _ := dataFiles(t, e.Warehouse, "db.t")
	parts := partitionsOf(t, e, "db.t")
	if len(parts) != 3 || len(files) > most {
		t.Errorf("after the advised commands: %d files in partitions %v, want at most %d in the 3 months", len(files), parts, most)
	}
	if after := rowsOf(t, e, "db.t"); !maps.Equal(after, before) {
		t.Errorf("the rewrite changed the rows: %d before, %d after", len(before), len(after))
	}
	h := partitionHealthOf(t, e, "db.t")
	if !slices.Equal(h.PartitionFields, []string{"month(ts)"}) || h.OlderSpecFiles != 0 || len(h.Recommendations) != 0 {
		t.Errorf("health after the advice: spec %v, %d files of the older spec, recommendations %+v", h.PartitionFields, h.OlderSpecFiles, h.Recommendations)
	}
	flags := regexp.MustCompile("`(--partition-fields '[^']*')`").FindStringSubmatch(msg)
	if flags == nil {
		t.Fatalf("no pipeline flags in the advice: %s", msg)
	}
	writeCountries(t, e, "more.parquet", len(before), 80, 80)
	e.OK(append(e.StreamArgs("db.t", "--maintenance=false"), shellWords(t, flags[1])...)...)
	if n := len(rowsOf(t, e, "db.t")); n != len(before)+80 {
		t.Errorf("%d rows after the next batch, want %d", n, len(before)+80)
	}
	if msg := recommendation(partitionHealthOf(t, e, "db.t"), "partition-spec"); msg != "" {
		t.Errorf("health advises another spec after the next batch: %s", msg)
	}
	t.Logf("%s", e.OK("table", "health", "db.t", "--plan-runs", "0").Stdout)
}

// rowsOf reads a countries table with iceberg-go's scan, not floe's: each
// row's country and time by its id.
func rowsOf(t *testing.T, e *env, name string) map[int64]string {
	t.Helper()
	ctx := context.Background()
	tbl := e.loadTable(ctx, e.catalog(ctx), name)
	_, recs, err := tbl.Scan(table.WithSelectedFields("id", "country", "ts")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		countries := rec.Column(rec.Schema().FieldIndices("country")[0])
		ts := rec.Column(rec.Schema().FieldIndices("ts")[0])
		for i := range ids.Len() {
			if _, dup := out[ids.Value(i)]; dup {
				t.Errorf("id %d twice in %s", ids.Value(i), name)
			}
			out[ids.Value(i)] = countries.ValueStr(i) + " " + ts.ValueStr(i)
		}
		rec.Release()
	}
	return out
}

// Many small files in few partitions: health advises rewrite-data-files,
// and the command it gives merges them, one file a partition.
func TestTableHealthSmallFilesSharePartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 8 {
		writeCountries(t, e, fmt.Sprintf("part-%d.parquet", i), i*30, 30, 3)
	}
	if r := e.Stream("db.t", "--partition-fields", "country", "--max-files-per-trigger", "1", "--maintenance=false",
		"-p", "table-default.write.target-file-size-bytes=16384"); r.Code != 0 {
		t.Fatal(r)
	}
	before := partitionsOf(t, e, "db.t")
	if len(before) != 3 || before[slices.Collect(maps.Keys(before))[0]] != 8 {
		t.Fatalf("partitions before: %v, want 3 of 8 files", before)
	}
	h := partitionHealthOf(t, e, "db.t")
	t.Logf("recommendations: %+v", h.Recommendations)
	if h.Partitions != 3 || h.MeanPartitionFiles != 8 || h.SmallDataFiles != 24 || h.MergeableSmallFiles != 24 || h.LoneSmallFiles != 0 {
		t.Errorf("health: %d partitions, %.2f files a partition, %d small files, %d mergeable, %d alone",
			h.Partitions, h.MeanPartitionFiles, h.SmallDataFiles, h.MergeableSmallFiles, h.LoneSmallFiles)
	}
	if msg := recommendation(h, "partition-spec"); msg != "" {
		t.Errorf("partition advice for partitions of %d bytes against a target of 16 KiB: %s", h.MeanPartitionBytes, msg)
	}
	msg := recommendation(h, "rewrite-data-files")
	cmd := regexp.MustCompile("`floe (maintain rewrite-data-files [^`]*)`").FindStringSubmatch(msg)
	if cmd == nil {
		t.Fatalf("no rewrite-data-files command advised: %+v", h.Recommendations)
	}
	r := e.OK(strings.Fields(cmd[1])...)
	t.Logf("floe %s: %s", cmd[1], r.Stdout)
	after := partitionsOf(t, e, "db.t")
	if len(after) != 3 || slices.Max(slices.Collect(maps.Values(after))) != 1 {
		t.Errorf("partitions after the advised rewrite: %v, want 3 of one file", after)
	}
	if n := e.Count("db.t"); n != 240 {
		t.Errorf("%d rows after the rewrite, want 240", n)
	}
	if h := partitionHealthOf(t, e, "db.t"); recommendation(h, "rewrite-data-files") != "" {
		t.Errorf("rewrite-data-files still advised after it ran: %+v", h.Recommendations)
	}
}

// floe table set-partition-spec refuses fields the table cannot take,
// with exit 2 (a table the catalog lacks with 1, as the other table
// commands do) and the metadata untouched, changes nothing when the spec
// is already the one asked for, and otherwise commits the new spec, which
// a pipeline must then name, even when it has no new input, and which the
// next batch writes into; --rewrite-all then moves the files of every
// earlier spec into the current one's partitions in one run.
func TestTableSetPartitionSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeCountries(t, e, "all.parquet", 0, 400, 80)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "day(ts)", "--maintenance=false")...)
	metadata := func() string {
		var d struct {
			MetadataLocation string `json:"metadata_location"`
		}
		if err := json.Unmarshal([]byte(e.OK("table", "describe", "db.t", "--json").Stdout), &d); err != nil {
			t.Fatal(err)
		}
		return d.MetadataLocation
	}
	start := metadata()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"db.t"}, "needs --partition-fields"},
		{[]string{"db.t", "--partition-fields", ""}, "needs --partition-fields"},
		{[]string{"db.t", "--partition-fields", "month(nope)"}, `no column "nope"`},
		{[]string{"db.t", "--partition-fields", "bucket(ts)"}, "bucket takes a column and N"},
		{[]string{"db.t", "--partition-fields", "hour(country)"}, `cannot apply to column "country"`},
		{[]string{"db.t", "--partition-fields", "day(ts),month(ts)"}, "twice"},
		{[]string{"db.nope", "--partition-fields", "month(ts)"}, "table db.nope does not exist"},
		{[]string{"db.t", "db.u", "--partition-fields", "month(ts)"}, "takes one table"},
	} {
		r := e.Run(append([]string{"table", "set-partition-spec"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("set-partition-spec %q: want exit 2 and %q, got %s", c.args, c.want, r)
		}
	}
	if r := e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "day(ts)"); !strings.Contains(r.Stdout, "already partitioned by [day(ts)]; nothing changed") {
		t.Errorf("the same spec again: %s", r.Stdout)
	}
	if m := metadata(); m != start {
		t.Fatalf("refused and unchanged specs committed metadata %s after %s", m, start)
	}
	e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "Month(TS), country")
	if h := partitionHealthOf(t, e, "db.t"); !slices.Equal(h.PartitionFields, []string{"month(ts)", "identity(country)"}) || h.OlderSpecFiles != 80 {
		t.Errorf("after the change: spec %v, %d files of the older spec", h.PartitionFields, h.OlderSpecFiles)
	}
	// With no new input, a pipeline still naming the old spec is refused
	// as its next batch would be.
	if r := e.Stream("db.t", "--partition-fields", "day(ts)", "--maintenance=false"); r.Code != 2 || !strings.Contains(r.Stderr, "table db.t is partitioned by [month(ts), country], but partition-fields ask for [day(ts)]") {
		t.Errorf("a stream with the old spec and no new input: %s", r)
	}
	writeCountries(t, e, "more.parquet", 400, 80, 80)
	e.OK(e.StreamArgs("db.t", "--partition-fields", "month(ts),country", "--maintenance=false")...)
	if parts := partitionsOf(t, e, "db.t"); len(parts) != 160 {
		t.Errorf("after a batch into the new spec: %d partitions, want the 80 days and 80 months by country", len(parts))
	}
	// --rewrite-all writes the files of both earlier specs into the
	// current one's partitions in one run, a file a month.
	e.OK("table", "set-partition-spec", "db.t", "--partition-fields", "month(ts)")
	before := rowsOf(t, e, "db.t")
	t.Log(e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all").Stdout)
	if parts := partitionsOf(t, e, "db.t"); len(parts) != 3 || slices.Max(slices.Collect(maps.Values(parts))) != 1 {
		t.Errorf("after --rewrite-all: partitions %v, want the 3 months of one file", parts)
	}
	if after := rowsOf(t, e, "db.t"); len(after) != 480 || !maps.Equal(after, before) {
		t.Errorf("--rewrite-all changed the rows: %d before, %d after", len(before), len(after))
	}
}
