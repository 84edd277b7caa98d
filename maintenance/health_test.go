package maintenance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/maintenance"
	_ "github.com/floe-io/floe/source/files"
)

type healthEnv struct {
	t       *testing.T
	dir     string
	cat     catalog.Catalog
	landing string
	nfiles  int
	nextID  int64
}

func newHealthEnv(t *testing.T) *healthEnv {
	t.Helper()
	dir := t.TempDir()
	cat, _ := fixture.CatalogAt(t, filepath.Join(dir, "warehouse"))
	return &healthEnv{t: t, dir: dir, cat: cat, landing: filepath.Join(dir, "landing")}
}

// appendFiles lands n files of rows rows each in db.t, one snapshot per
// file (a pipeline with max-files-per-trigger 1).
func (e *healthEnv) appendFiles(n int, rows int64) {
	e.t.Helper()
	e.appendFilesWith(n, rows, nil)
}

// appendFilesWith is appendFiles creating db.t with the table properties.
func (e *healthEnv) appendFilesWith(n int, rows int64, props map[string]string) {
	e.t.Helper()
	for range n {
		if err := fixture.WriteIDFile(filepath.Join(e.landing, fmt.Sprintf("part-%03d.parquet", e.nfiles)), e.nextID, rows); err != nil {
			e.t.Fatal(err)
		}
		e.nfiles++
		e.nextID += rows
	}
	cfg := &config.Pipeline{
		Source:     config.Source{Path: e.landing, Format: "parquet", MaxFilesPerTrigger: 1},
		Sink:       config.Sink{Table: "db.t", TableProperties: props},
		Checkpoint: filepath.Join(e.dir, "ckpt"),
	}
	off := false
	cfg.Maintenance.Enabled = &off // the report is of a table left alone
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
	if err != nil {
		e.t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *healthEnv) table() *table.Table {
	e.t.Helper()
	tbl, err := e.cat.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

func kinds(r maintenance.Report) []string {
	var out []string
	for _, rec := range r.Recommendations {
		out = append(out, rec.Kind)
	}
	return out
}

func TestHealthManySmallAppends(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(30, 10)
	tbl := e.table()
	r, err := maintenance.Health(context.Background(), tbl, maintenance.HealthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshots != 30 || r.DataFiles != 30 || r.SmallDataFiles != 30 || r.SmallFileShare != 1 {
		t.Fatalf("snapshots %d, data files %d, small %d, share %v; want 30, 30, 30, 1", r.Snapshots, r.DataFiles, r.SmallDataFiles, r.SmallFileShare)
	}
	if r.DataRecords != 300 || r.DeleteFiles != 0 {
		t.Errorf("records %d, delete files %d; want 300, 0", r.DataRecords, r.DeleteFiles)
	}
	// Fast append: one manifest per commit.
	if r.Manifests != 30 || r.DataManifests != 30 || r.ManifestBytes <= 0 {
		t.Errorf("manifests %d (data %d), %d bytes; want 30 data manifests", r.Manifests, r.DataManifests, r.ManifestBytes)
	}
	// The table's creation and 30 commits each wrote a metadata file;
	// floe's tables keep the current one and 25 before it.
	if r.MetadataFiles != 26 || r.MetadataBytes <= 0 {
		t.Errorf("metadata files %d, %d bytes; want 26", r.MetadataFiles, r.MetadataBytes)
	}
	if r.TargetFileSizeBytes != 512<<20 || r.SmallFileThresholdBytes != 128<<20 {
		t.Errorf("target %d, small below %d; want 512 MiB, 128 MiB", r.TargetFileSizeBytes, r.SmallFileThresholdBytes)
	}
	if r.MeanDataFileBytes != r.DataBytes/30 || r.PlanMs <= 0 || r.PlanTasks != 30 {
		t.Errorf("mean %d of %d bytes, plan %v ms for %d tasks", r.MeanDataFileBytes, r.DataBytes, r.PlanMs, r.PlanTasks)
	}
	if len(r.History) != 30 || r.History[0].AddedRecords != 10 || r.History[0].AddedFiles != 1 || r.History[0].Operation != "append" {
		t.Errorf("history %+v", r.History)
	}
	files := 0
	for _, b := range r.Histogram {
		files += b.Files
		if b.MaxBytes != 2*b.MinBytes && b.MinBytes != 0 {
			t.Errorf("bucket %+v does not double", b)
		}
	}
	if files != 30 {
		t.Errorf("histogram holds %d files, want 30: %+v", files, r.Histogram)
	}
	// 30 commits in well under an hour tell no daily rate, and are too
	// few to expire by their count.
	if got := strings.Join(kinds(r), ","); strings.Contains(got, "expire-snapshots") || !strings.Contains(got, "rewrite-data-files") {
		t.Fatalf("recommendations %q; want rewrite-data-files and no expire-snapshots", got)
	}
	if r.SnapshotsPerDay != nil || r.HistoryMs <= 0 {
		t.Errorf("%d ms of history, a rate told: %t", r.HistoryMs, r.SnapshotsPerDay != nil)
	}
	for _, rec := range r.Recommendations {
		if rec.Kind == "rewrite-data-files" && !strings.Contains(rec.Message, "100% of data files (30 of 30)") {
			t.Errorf("rewrite recommendation: %s", rec.Message)
		}
	}
	if r.LastCommitAgeMs < 0 || r.LastCommitAgeMs > time.Minute.Milliseconds() {
		t.Errorf("last commit %d ms ago", r.LastCommitAgeMs)
	}
	// The age is measured against the given clock.
	later, err := maintenance.Health(context.Background(), tbl, maintenance.HealthOptions{PlanRuns: -1,
		Now: func() time.Time { return time.UnixMilli(tbl.CurrentSnapshot().TimestampMs).Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if later.LastCommitAgeMs != time.Hour.Milliseconds() || later.PlanMs != 0 {
		t.Errorf("age %d ms, plan %v; want one hour, not planned", later.LastCommitAgeMs, later.PlanMs)
	}
}

func TestHealthHealthyTable(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(3, 100)
	r, err := maintenance.Health(context.Background(), e.table(), maintenance.HealthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshots != 3 || r.DataFiles != 3 {
		t.Fatalf("snapshots %d, data files %d; want 3, 3", r.Snapshots, r.DataFiles)
	}
	if len(r.Recommendations) != 0 {
		t.Fatalf("a healthy table got recommendations: %+v", r.Recommendations)
	}
	// Recommendations is [] in JSON, not null, so scripts can count it.
	b, _ := json.Marshal(r)
	if !bytes.Contains(b, []byte(`"recommendations":[]`)) {
		t.Errorf("json: %s", b)
	}
}

func TestHealthTargetSize(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(6, 10)
	// A target just above the files' size: none is below a quarter of it.
	r, err := maintenance.Health(context.Background(), e.table(), maintenance.HealthOptions{PlanRuns: -1, TargetFileSizeBytes: 1600})
	if err != nil {
		t.Fatal(err)
	}
	if r.SmallDataFiles != 0 || r.SmallFileThresholdBytes != 400 {
		t.Fatalf("small %d below %d; want none below 400 B (files of %d bytes)", r.SmallDataFiles, r.SmallFileThresholdBytes, r.MeanDataFileBytes)
	}
	if len(r.Recommendations) != 0 {
		t.Fatalf("recommendations: %+v", r.Recommendations)
	}
}

func TestHealthMetadataLogFull(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFilesWith(6, 100, map[string]string{"write.metadata.previous-versions-max": "3", "write.metadata.delete-after-commit.enabled": "false"})
	// A target the files meet, so that metadata is the only thing wrong.
	opts := maintenance.HealthOptions{PlanRuns: -1, TargetFileSizeBytes: 1600}
	r, err := maintenance.Health(context.Background(), e.table(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.MetadataLogEntries != 3 || r.MetadataFiles != 4 {
		t.Fatalf("metadata log %d entries, %d files; want 3, 4", r.MetadataLogEntries, r.MetadataFiles)
	}
	if got := strings.Join(kinds(r), ","); got != "metadata-retention" {
		t.Fatalf("recommendations %+v; want metadata-retention alone", r.Recommendations)
	}
	if !strings.Contains(r.Recommendations[0].Message, "write.metadata.delete-after-commit.enabled=true") {
		t.Errorf("message: %s", r.Recommendations[0].Message)
	}

	// With deletion after commit the full log is the steady state.
	e2 := newHealthEnv(t)
	e2.appendFilesWith(6, 100, map[string]string{"write.metadata.previous-versions-max": "3", "write.metadata.delete-after-commit.enabled": "true"})
	r, err = maintenance.Health(context.Background(), e2.table(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Recommendations) != 0 || r.MetadataFiles != 4 {
		t.Fatalf("%d metadata files, recommendations %+v", r.MetadataFiles, r.Recommendations)
	}
}

func TestHealthMissingOldMetadata(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(3, 10)
	tbl := e.table()
	before, err := maintenance.Health(context.Background(), tbl, maintenance.HealthOptions{PlanRuns: -1})
	if err != nil {
		t.Fatal(err)
	}
	var oldest string
	for m := range tbl.Metadata().PreviousFiles() {
		oldest = m.MetadataFile
		break
	}
	if err := os.Remove(strings.TrimPrefix(oldest, "file://")); err != nil {
		t.Fatal(err)
	}
	after, err := maintenance.Health(context.Background(), tbl, maintenance.HealthOptions{PlanRuns: -1})
	if err != nil {
		t.Fatal(err)
	}
	if after.MetadataFiles != before.MetadataFiles-1 || after.MetadataBytes >= before.MetadataBytes {
		t.Fatalf("after removing %s: %d files (%d bytes), before %d (%d)", oldest, after.MetadataFiles, after.MetadataBytes, before.MetadataFiles, before.MetadataBytes)
	}
}

func TestHealthEmptyTable(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(1, 10)
	tbl := e.table()
	// A table with no snapshot: create one beside.
	empty, err := e.cat.CreateTable(context.Background(), table.Identifier{"db", "empty"}, tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	r, err := maintenance.Health(context.Background(), empty, maintenance.HealthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshots != 0 || r.DataFiles != 0 || r.MetadataFiles != 1 || r.CurrentSnapshotID != nil || len(r.Recommendations) != 0 {
		t.Fatalf("%+v", r)
	}
	var html bytes.Buffer
	if err := maintenance.WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "No data files.") {
		t.Errorf("page for an empty table:\n%s", html.String())
	}
}

func TestWriteHTML(t *testing.T) {
	t.Parallel()
	e := newHealthEnv(t)
	e.appendFiles(12, 10)
	e.appendFiles(1, 20000) // a larger file in a bucket of its own
	r, err := maintenance.Health(context.Background(), e.table(), maintenance.HealthOptions{PlanRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Table = `db.<script>alert(1)</script>`
	var buf bytes.Buffer
	if err := maintenance.WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "<script") {
		t.Fatal("the table name was not escaped")
	}
	svg := fragment(t, page, `<svg id="file-size-histogram"`)
	var doc struct {
		Rects []struct {
			Fill string `xml:"fill,attr"`
		} `xml:"rect"`
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatalf("histogram svg does not parse: %v\n%s", err, svg)
	}
	nonEmpty := 0
	for _, b := range r.Histogram {
		if b.Files > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 2 || len(doc.Rects) != nonEmpty {
		t.Fatalf("%d rects for %d non-empty buckets", len(doc.Rects), nonEmpty)
	}
	if doc.Rects[0].Fill != maintenance.HistogramBarColor {
		t.Errorf("bar fill %q", doc.Rects[0].Fill)
	}
	if len(doc.Texts) < len(r.Histogram)+2 {
		t.Errorf("axis labels: %q", doc.Texts)
	}
	if err := xml.Unmarshal([]byte(fragment(t, page, `<svg id="snapshot-history"`)), new(struct{})); err != nil {
		t.Fatalf("history svg does not parse: %v", err)
	}
	var commits struct {
		Rects []struct {
			Fill  string `xml:"fill,attr"`
			Title string `xml:"title"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal([]byte(fragment(t, page, `<svg id="commit-rate"`)), &commits); err != nil {
		t.Fatalf("commits svg does not parse: %v", err)
	}
	total := 0
	for _, b := range commits.Rects {
		var n int
		var noun string
		_, err := fmt.Sscanf(b.Title, "%d %s", &n, &noun)
		want := "commits,"
		if n == 1 {
			want = "commit,"
		}
		if err != nil || noun != want || b.Fill != maintenance.CommitBarColor {
			t.Fatalf("commit bar %+v: %v", b, err)
		}
		total += n
	}
	if len(commits.Rects) == 0 || total != len(r.History) {
		t.Errorf("%d commit bars count %d commits, want %d", len(commits.Rects), total, len(r.History))
	}
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	if strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
		t.Error("the page references the network")
	}
}

// fragment cuts the element starting at start out of page, up to its
// closing </svg>.
func fragment(t *testing.T, page, start string) string {
	t.Helper()
	i := strings.Index(page, start)
	if i < 0 {
		t.Fatalf("no %s in page", start)
	}
	j := strings.Index(page[i:], "</svg>")
	if j < 0 {
		t.Fatalf("%s is not closed", start)
	}
	return page[i : i+j+len("</svg>")]
}

// svgText is a label of a chart of the health page.
type svgText struct {
	Class string  `xml:"class,attr"`
	Y     float64 `xml:"y,attr"`
	Text  string  `xml:",chardata"`
}

// historyTexts renders the page of a report with the given history and
// returns the labels of its snapshot-history chart.
func historyTexts(t *testing.T, history []maintenance.SnapshotPoint) []svgText {
	t.Helper()
	r := maintenance.Report{Table: "db.t", Histogram: []maintenance.SizeBucket{}, Recommendations: []maintenance.Recommendation{}, History: history}
	var buf bytes.Buffer
	if err := maintenance.WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	var svg struct {
		Texts []svgText `xml:"text"`
	}
	if err := xml.Unmarshal([]byte(fragment(t, buf.String(), `<svg id="snapshot-history"`)), &svg); err != nil {
		t.Fatal(err)
	}
	return svg.Texts
}

// The time axis's labels differ at every span of history, from none to
// days, and the first names its date.
func TestWriteHTMLTimeLabels(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 6, 23, 59, 58, 900e6, time.UTC).UnixMilli()
	for _, span := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 246 * time.Millisecond,
		1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 90 * time.Minute, 72 * time.Hour} {
		var history []maintenance.SnapshotPoint
		for i := range 25 {
			history = append(history, maintenance.SnapshotPoint{SnapshotID: int64(i + 1), TimestampMs: start + span.Milliseconds()*int64(i)/24})
		}
		var labels []string
		for _, l := range historyTexts(t, history) {
			if l.Class == "xtick" {
				labels = append(labels, l.Text)
			}
		}
		want := min(3, int(span.Milliseconds())+1)
		if len(labels) != want || !strings.HasPrefix(labels[0], "2026-12-06 23:59:58") {
			t.Errorf("%s of history: labels %q, want %d, the first dated", span, labels, want)
		}
		for i := 1; i < len(labels); i++ {
			if slices.Contains(labels[:i], labels[i]) {
				t.Errorf("%s of history: labels %q repeat", span, labels)
			}
		}
	}
}

// Each count axis labels whole counts at their own heights: with 3
// snapshots the middle label is 1, a third of the way up, where the
// step to the first snapshot is drawn.
func TestWriteHTMLCountLabelsAtTheirHeights(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 7; n++ {
		var history []maintenance.SnapshotPoint
		for i := range n {
			history = append(history, maintenance.SnapshotPoint{SnapshotID: int64(i + 1), TimestampMs: int64(i) * 60_000})
		}
		heights := map[int]float64{}
		for _, l := range historyTexts(t, history) {
			if l.Class == "ytick" {
				var v int
				if _, err := fmt.Sscan(l.Text, &v); err != nil {
					t.Fatalf("%d snapshots: y label %q is not a count", n, l.Text)
				}
				heights[v] = l.Y
			}
		}
		zero, top := heights[0], heights[n]
		if len(heights) < 2 || top >= zero {
			t.Fatalf("%d snapshots: y labels at %v, want 0 and %d", n, heights, n)
		}
		for v, y := range heights {
			if want := zero - (zero-top)*float64(v)/float64(n); y < want-0.1 || y > want+0.1 {
				t.Errorf("%d snapshots: label %d at y %.1f, want %.1f", n, v, y, want)
			}
		}
	}
}
