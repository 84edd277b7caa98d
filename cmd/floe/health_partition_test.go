package main_test

import (
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
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(day0.AddDate(0, 0, c).Add(time.Duration(i) * time.Minute).UnixMicro()))
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
// spec instead, in partition-fields' own words.
func TestTableHealthOverPartitioned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, field, named string
		props              []string
		want               []string
	}{
		{name: "day", field: "day(ts)", named: "day(ts)", props: []string{"-p", "table-default.write.target-file-size-bytes=16384"},
			want: []string{"target file size of 16 KiB", "partition-fields: [month(ts)]", "--partition-fields 'month(ts)' --partition-spec-evolution"}},
		{name: "identity", field: "country", named: "identity(country)",
			want: []string{"target file size of 512 MiB", "needs no partitioning"}},
		{name: "identity to buckets", field: "country", named: "identity(country)", props: []string{"-p", "table-default.write.target-file-size-bytes=16384"},
			want: []string{`partition-fields: ["bucket(country, 3)"]`, "--partition-fields 'bucket(country, 3)' --partition-spec-evolution"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			writeCountries(t, e, "all.parquet", 0, 400, 80)
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
			if strings.Contains(text, "floe maintain rewrite-data-files db.t`") {
				t.Errorf("text report advises rewrite-data-files:\n%s", text)
			}
			// The advice not given would indeed have done nothing.
			if r := e.OK("maintain", "rewrite-data-files", "db.t"); !strings.Contains(r.Stdout, "nothing to rewrite") {
				t.Errorf("rewrite-data-files: %s", r)
			}
			if c.name == "day" {
				followPartitionAdvice(t, e, msg)
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

// followPartitionAdvice takes the advised flags into the next batch, then
// the commands health advises for the files written before, and checks
// that the table ends in few files of the coarser spec.
func followPartitionAdvice(t *testing.T, e *env, msg string) {
	t.Helper()
	flags := regexp.MustCompile("`(--partition-fields '[^']*' --partition-spec-evolution)`").FindStringSubmatch(msg)
	if flags == nil {
		t.Fatalf("no flags in the advice: %s", msg)
	}
	if flags[1] != "--partition-fields 'month(ts)' --partition-spec-evolution" {
		t.Fatalf("advised flags %s", flags[1])
	}
	writeCountries(t, e, "more.parquet", 400, 80, 80)
	e.OK(append(e.StreamArgs("db.t", "--maintenance=false"), "--partition-fields", "month(ts)", "--partition-spec-evolution")...)
	h := partitionHealthOf(t, e, "db.t")
	if h.OlderSpecFiles != 80 || !slices.Equal(h.PartitionFields, []string{"month(ts)"}) || recommendation(h, "partition-spec") != "" {
		t.Errorf("after the spec change: %d files of the older spec, spec %v, recommendations %+v", h.OlderSpecFiles, h.PartitionFields, h.Recommendations)
	}
	cmds := regexp.MustCompile("`floe (maintain rewrite-data-files [^`]*)`").FindAllStringSubmatch(recommendation(h, "rewrite-data-files"), -1)
	if len(cmds) != 2 || !strings.HasSuffix(cmds[0][1], "--rewrite-all") {
		t.Fatalf("after the spec change, advised %v: %+v", cmds, h.Recommendations)
	}
	for _, c := range cmds {
		t.Logf("floe %s: %s", c[1], e.OK(strings.Fields(c[1])...).Stdout)
	}
	files, _ := dataFiles(t, e.Warehouse, "db.t")
	parts := partitionsOf(t, e, "db.t")
	if len(parts) != 3 || len(files) > 6 {
		t.Errorf("after the advised rewrites: %d files in partitions %v, want at most 6 in the 3 months", len(files), parts)
	}
	if n := e.Count("db.t"); n != 480 {
		t.Errorf("%d rows after the rewrites, want 480", n)
	}
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
