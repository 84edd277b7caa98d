package main_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"image/color"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/maintenance"
)

// healthReport is the part of `floe table health --json` the tests read.
type healthReport struct {
	Snapshots         int      `json:"snapshots"`
	HistoryMs         int64    `json:"history_ms"`
	SnapshotsPerDay   *float64 `json:"snapshots_per_day"`
	MetadataFiles     int      `json:"metadata_files"`
	MetadataBytes     int64    `json:"metadata_bytes"`
	Manifests         int      `json:"manifests"`
	DataFiles         int      `json:"data_files"`
	DataBytes         int64    `json:"data_bytes"`
	DataRecords       int64    `json:"data_records"`
	MeanDataFileBytes int64    `json:"mean_data_file_bytes"`
	SmallDataFiles    int      `json:"small_data_files"`
	SmallFileShare    float64  `json:"small_file_share"`
	DeleteFiles       int      `json:"delete_files"`
	LastCommitAgeMs   int64    `json:"last_commit_age_ms"`
	PlanMs            float64  `json:"plan_ms"`
	Recommendations   []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"recommendations"`
	Histogram []struct {
		MinBytes int64 `json:"min_bytes"`
		Files    int   `json:"files"`
	} `json:"histogram"`
	History []struct {
		SnapshotID   int64 `json:"snapshot_id"`
		AddedRecords int64 `json:"added_records"`
	} `json:"history"`
}

// healthTable streams n one-file batches into db.t, plus one larger file,
// so the histogram has two non-empty buckets.
func healthTable(t *testing.T, n int) *env {
	t.Helper()
	e := newEnv(t)
	for i := range n {
		e.WriteIDs(fmt.Sprintf("part-%03d.parquet", i), int64(i*10), 10)
	}
	e.WriteIDs("part-999.parquet", 100_000, 20_000)
	if r := e.Stream("db.t", "--max-files-per-trigger", "1", "--maintenance=false"); r.Code != 0 {
		t.Fatal(r)
	}
	return e
}

func TestTableHealth(t *testing.T) {
	t.Parallel()
	e := healthTable(t, 24)
	var h healthReport
	if err := json.Unmarshal([]byte(e.OK("table", "health", "db.t", "--json").Stdout), &h); err != nil {
		t.Fatal(err)
	}
	snaps := e.Snapshots("db.t")
	var files []struct {
		SizeBytes int64  `json:"file_size_in_bytes"`
		Content   string `json:"content"`
		Records   int64  `json:"record_count"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "files", "db.t", "--json").Stdout), &files); err != nil {
		t.Fatal(err)
	}
	var bytes, records int64
	for _, f := range files {
		bytes += f.SizeBytes
		records += f.Records
	}
	if h.Snapshots != len(snaps) || h.Snapshots != 25 || len(h.History) != 25 {
		t.Errorf("health: %d snapshots (%d in history); table snapshots: %d; want 25", h.Snapshots, len(h.History), len(snaps))
	}
	if h.DataFiles != len(files) || h.DataBytes != bytes || h.DataRecords != records || h.MeanDataFileBytes != bytes/int64(len(files)) {
		t.Errorf("health: %d files, %d bytes, %d records; table files: %d, %d bytes, %d records", h.DataFiles, h.DataBytes, h.DataRecords, len(files), bytes, records)
	}
	if h.SmallDataFiles != 25 || h.SmallFileShare != 1 || h.DeleteFiles != 0 || h.Manifests != 25 || h.MetadataFiles < 25 || h.PlanMs <= 0 {
		t.Errorf("health: %+v", h)
	}
	// 25 snapshots in well under an hour are a backfill's burst, not a
	// daily rate, and too few to expire by their count.
	kinds := ""
	for _, r := range h.Recommendations {
		kinds += r.Kind + " "
	}
	if strings.Contains(kinds, "expire-snapshots") || !strings.Contains(kinds, "rewrite-data-files") {
		t.Errorf("recommendations: %+v", h.Recommendations)
	}
	if h.SnapshotsPerDay != nil {
		t.Errorf("snapshots_per_day %v from %d ms of history, want null", *h.SnapshotsPerDay, h.HistoryMs)
	}

	text := e.OK("table", "health", "db.t").Stdout
	for _, want := range []string{"snapshots         25 over " + maintenance.Duration(h.HistoryMs) + "\n", "data files        25,", "small data files  25 (100%) below 128 MiB", "recommendations:", "floe maintain rewrite-data-files db.t"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "a day") {
		t.Errorf("text output tells a daily rate:\n%s", text)
	}
	t.Logf("floe table health db.t:\n%s", text)

	// A table given by its directory reads the same.
	dir := e.OK("table", "describe", "db.t", "--json").Stdout
	var d struct {
		Location string `json:"location"`
	}
	_ = json.Unmarshal([]byte(dir), &d)
	var byDir healthReport
	if err := json.Unmarshal([]byte(e.OK("table", "health", strings.TrimPrefix(d.Location, "file://"), "--json", "--plan-runs", "0").Stdout), &byDir); err != nil {
		t.Fatal(err)
	}
	if byDir.Snapshots != 25 || byDir.DataFiles != 25 || byDir.PlanMs != 0 {
		t.Errorf("by directory: %+v", byDir)
	}

	if r := e.Run("table", "health"); r.Code != 2 {
		t.Errorf("no table: %s", r)
	}
	if r := e.Run("table", "health", "db.nope"); r.Code != 2 || !strings.Contains(r.Stderr, "does not exist") {
		t.Errorf("missing table: %s", r)
	}
}

func TestTableHealthHealthy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	if r := e.Stream("db.t", "--maintenance=false"); r.Code != 0 {
		t.Fatal(r)
	}
	text := e.OK("table", "health", "db.t").Stdout
	if !strings.Contains(text, "no recommendation: the table is healthy") {
		t.Errorf("text:\n%s", text)
	}
}

// Counts of one take the singular in the text report and on the page:
// one plan task, one file in the histogram's bar, one commit in the
// history's.
func TestTableHealthCountsOfOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 1)
	if r := e.Stream("db.t", "--maintenance=false"); r.Code != 0 {
		t.Fatal(r)
	}
	page := filepath.Join(e.Dir, "health.html")
	text := e.OK("table", "health", "db.t", "--html", page).Stdout
	if !regexp.MustCompile(`full-scan plan +[0-9.]+ ms, 1 task\n`).MatchString(text) || !strings.Contains(text, "mean 1 file,") {
		t.Errorf("text report:\n%s", text)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"ms, 1 task</td>", "<title>1 file of ", "<title>1 commit, 1 record added, "} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`\b1 (tasks|files|commits|records)\b`).FindString(html + text); m != "" {
		t.Errorf("a count of one in the plural: %q", m)
	}
}

func TestTableHealthHTML(t *testing.T) {
	t.Parallel()
	e := healthTable(t, 8)
	page := filepath.Join(e.Dir, "health.html")
	r := e.OK("table", "health", "db.t", "--html", page, "--json")
	var h healthReport
	if err := json.Unmarshal([]byte(r.Stdout), &h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.Contains(html, "</html>") {
		t.Fatal("not an HTML page")
	}
	for _, bad := range []string{"<script", "<link", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("page has %s", bad)
		}
	}
	if rest := strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, ""); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
		t.Error("page references the network")
	}
	i := strings.Index(html, `<svg id="file-size-histogram"`)
	j := strings.Index(html[max(i, 0):], "</svg>")
	if i < 0 || j < 0 {
		t.Fatal("no histogram svg")
	}
	var svg struct {
		Rects []struct{} `xml:"rect"`
	}
	if err := xml.Unmarshal([]byte(html[i:i+j+len("</svg>")]), &svg); err != nil {
		t.Fatal(err)
	}
	nonEmpty := 0
	for _, b := range h.Histogram {
		if b.Files > 0 {
			nonEmpty++
		}
	}
	if nonEmpty != 2 || len(svg.Rects) != nonEmpty {
		t.Errorf("%d bars for %d non-empty buckets (want 2)", len(svg.Rects), nonEmpty)
	}
	if !strings.Contains(html, `<svg id="snapshot-history"`) || strings.Count(html, "<tr>") < h.Snapshots+1 {
		t.Error("no snapshot history")
	}
}

// minColumnGap is the least space, in CSS pixels, between the text of
// two adjacent cells of the snapshot table for a reader to see columns.
const minColumnGap = 8

// measureScript measures the rendered page into <pre id=measure>: the
// text of every cell of the snapshot table and the time-axis labels of
// both charts, each as its text and horizontal extent, and the charts'
// extents. A Range over the contents measures the text itself, so
// padding counts as space.
const measureScript = `<script>
(() => {
  const box = el => {
    const r = document.createRange();
    r.selectNodeContents(el);
    const b = r.getBoundingClientRect();
    return {text: el.textContent, left: b.left, right: b.right};
  };
  const m = {rows: [], ticks: {}, charts: {}};
  for (const tr of document.querySelectorAll("#snapshots tr")) m.rows.push([...tr.cells].map(box));
  for (const id of ["snapshot-history", "commit-rate"]) {
    const svg = document.getElementById(id).getBoundingClientRect();
    m.charts[id] = {left: svg.left, right: svg.right};
    m.ticks[id] = [...document.querySelectorAll("#" + id + " text.xtick")].map(box);
  }
  const pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(m);
  document.body.append(pre);
})();
</script>`

type textBox struct {
	Text        string
	Left, Right float64
}

// TestTableHealthHTMLInChromium renders the page of a table whose
// history spans well under a second (one snapshot per file of a
// backfill) in headless Chromium: the snapshot table's columns stand
// apart, its counts align right, the time-axis labels differ and do not
// overlap, and the screenshot shows the histogram's bars.
func TestTableHealthHTMLInChromium(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	e := healthTable(t, 24)
	page := filepath.Join(e.Dir, "health.html")
	e.OK("table", "health", "db.t", "--html", page, "--plan-runs", "0")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "full-scan plan") {
		t.Errorf("the page made with --plan-runs 0 shows a full-scan plan it never timed")
	}
	measured := filepath.Join(e.Dir, "measured.html")
	if err := os.WriteFile(measured, []byte(strings.Replace(string(b), "</body>", measureScript+"\n</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(headlessChromium(t, chromium, "--dump-dom", "file://"+measured))
	_, after, ok := strings.Cut(dom, `<pre id="measure">`)
	raw, _, ok2 := strings.Cut(after, "</pre>")
	if !ok || !ok2 {
		t.Fatalf("the measuring script left no result:\n%s", dom)
	}
	var m struct {
		Rows   [][]textBox
		Ticks  map[string][]textBox
		Charts map[string]textBox
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(raw)), &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}

	if len(m.Rows) != 26 {
		t.Fatalf("%d rows in the snapshot table, want a header and 25 snapshots", len(m.Rows))
	}
	// One message per kind of fault, naming its first row and how many.
	faults := map[string][]string{}
	for i, row := range m.Rows {
		if len(row) != 5 {
			t.Fatalf("row %d has %d cells: %+v", i, len(row), row)
		}
		for j := 1; j < len(row); j++ {
			if gap := row[j].Left - row[j-1].Right; gap < minColumnGap {
				faults["narrow gap"] = append(faults["narrow gap"], fmt.Sprintf("row %d: %.1f px between %q and %q, want at least %d", i, gap, row[j-1].Text, row[j].Text, minColumnGap))
			}
		}
		// Added records and files align right, under their headers.
		for _, j := range []int{3, 4} {
			if d := row[j].Right - m.Rows[0][j].Right; d < -0.5 || d > 0.5 {
				faults["not right-aligned"] = append(faults["not right-aligned"], fmt.Sprintf("row %d: %q ends %.1f px from the end of its header %q", i, row[j].Text, d, m.Rows[0][j].Text))
			}
		}
	}
	for kind, f := range faults {
		t.Errorf("snapshot table, %s in %d cells, first %s", kind, len(f), f[0])
	}

	for _, chart := range []string{"snapshot-history", "commit-rate"} {
		ticks := m.Ticks[chart]
		t.Logf("%s time axis: %+v", chart, ticks)
		if len(ticks) < 2 {
			t.Errorf("%s: time-axis labels %+v, want at least the first and last commit", chart, ticks)
		}
		seen := map[string]bool{}
		for i, l := range ticks {
			if seen[l.Text] {
				t.Errorf("%s: two time-axis labels read %q", chart, l.Text)
			}
			seen[l.Text] = true
			if box := m.Charts[chart]; l.Left < box.Left || l.Right > box.Right {
				t.Errorf("%s: label %q spans %.0f to %.0f px, past the chart's %.0f to %.0f", chart, l.Text, l.Left, l.Right, box.Left, box.Right)
			}
			if i > 0 && l.Left < ticks[i-1].Right {
				t.Errorf("%s: labels %q and %q overlap", chart, ticks[i-1].Text, l.Text)
			}
		}
	}

	artifacts := filepath.Join(os.TempDir(), "floe-test-artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "health-report.png")
	if err := os.Remove(shot); err != nil && !os.IsNotExist(err) {
		t.Fatal(err) // a stale screenshot would pass for this run's
	}
	headlessChromium(t, chromium, "--screenshot="+shot, "--window-size=1280,2000", "file://"+page)
	if err := os.WriteFile(filepath.Join(artifacts, "health-report.html"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, shot)
}

// checkScreenshot checks the screenshot is not blank and that the
// histogram's bars were painted.
func checkScreenshot(t *testing.T, shot string) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	var want color.RGBA
	if _, err := fmt.Sscanf(maintenance.HistogramBarColor, "#%02x%02x%02x", &want.R, &want.G, &want.B); err != nil {
		t.Fatal(err)
	}
	bounds := img.Bounds()
	colours := map[color.RGBA]bool{}
	bars := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
			if len(colours) < 64 {
				colours[c] = true
			}
			if near(c.R, want.R) && near(c.G, want.G) && near(c.B, want.B) {
				bars++
			}
		}
	}
	if len(colours) < 3 {
		t.Fatalf("the screenshot %s is blank: %d colours", shot, len(colours))
	}
	// Two bars at least a few pixels wide and tall each.
	if bars < 200 {
		t.Fatalf("%d pixels of the bar colour %s in the screenshot %s", bars, maintenance.HistogramBarColor, shot)
	}
	t.Logf("screenshot %s (%dx%d): %d bar pixels", shot, bounds.Dx(), bounds.Dy(), bars)
}

func near(a, b uint8) bool { return int(a)-int(b) <= 3 && int(b)-int(a) <= 3 }

// editedMetadata writes a metadata file beside db.t's current one with
// its snapshots as edit leaves them, and returns the file's path: the
// metadata a table with another commit history would have.
func editedMetadata(t *testing.T, e *env, edit func(snaps []map[string]any) []map[string]any) string {
	t.Helper()
	var d struct {
		MetadataLocation string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(e.OK("table", "describe", "db.t", "--json").Stdout), &d); err != nil {
		t.Fatal(err)
	}
	current := strings.TrimPrefix(d.MetadataLocation, "file://")
	b, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	// Numbers stay json.Number: snapshot IDs do not survive a float64.
	decode := func(v any) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var md struct {
		Snapshots []map[string]any `json:"snapshots"`
		Log       []map[string]any `json:"snapshot-log"`
	}
	var all map[string]any
	decode(&md)
	decode(&all)
	snaps := edit(md.Snapshots)
	times := map[any]any{}
	for _, s := range snaps {
		times[s["snapshot-id"]] = s["timestamp-ms"]
	}
	for _, l := range md.Log {
		l["timestamp-ms"] = times[l["snapshot-id"]]
	}
	all["snapshots"], all["snapshot-log"] = snaps, md.Log
	if b, err = json.Marshal(all); err != nil {
		t.Fatal(err)
	}
	// Named as a commit names it, so that the table commits after it.
	version, _ := strconv.Atoi(strings.SplitN(filepath.Base(current), "-", 2)[0])
	path := filepath.Join(filepath.Dir(current), fmt.Sprintf("%05d-%s.metadata.json", version+1, uuid.NewString()))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// copies adds n copies of the first snapshot, committed at the same
// time: to the health report, which reads no snapshot's files but the
// current one's, a table with n more commits.
func copies(n int) func([]map[string]any) []map[string]any {
	return func(snaps []map[string]any) []map[string]any {
		for i := range n {
			c := maps.Clone(snaps[0])
			c["snapshot-id"] = json.Number(strconv.Itoa(1_000_000 + i))
			snaps = append(snaps, c)
		}
		return snaps
	}
}

// spaced moves the snapshots' commit times apart, oldest first, ending
// at the newest one's.
func spaced(apart time.Duration) func([]map[string]any) []map[string]any {
	return func(snaps []map[string]any) []map[string]any {
		last, _ := snaps[len(snaps)-1]["timestamp-ms"].(json.Number).Int64()
		for i, s := range snaps {
			s["timestamp-ms"] = json.Number(strconv.FormatInt(last-int64(len(snaps)-1-i)*apart.Milliseconds(), 10))
		}
		return snaps
	}
}

// A table of 525 snapshots committed within a second has too many by
// their count, so expiry is advised, but no daily rate is told from that
// second; 25 spread over an hour tell one.
func TestTableHealthSnapshotRate(t *testing.T) {
	t.Parallel()
	e := healthTable(t, 24)
	health := func(path string) (healthReport, string, string) {
		var h healthReport
		if err := json.Unmarshal([]byte(e.OK("table", "health", path, "--json", "--plan-runs", "0").Stdout), &h); err != nil {
			t.Fatal(err)
		}
		var expire string
		for _, r := range h.Recommendations {
			if r.Kind == "expire-snapshots" {
				expire = r.Message
			}
		}
		return h, expire, e.OK("table", "health", path, "--plan-runs", "0").Stdout
	}

	h, expire, text := health(editedMetadata(t, e, copies(500)))
	if h.Snapshots != 525 || h.SnapshotsPerDay != nil || h.HistoryMs <= 0 || h.HistoryMs >= time.Hour.Milliseconds() {
		t.Fatalf("%d snapshots over %d ms, a rate told: %t; want 525 in under an hour and no rate", h.Snapshots, h.HistoryMs, h.SnapshotsPerDay != nil)
	}
	span := maintenance.Duration(h.HistoryMs)
	if want := "525 snapshots in " + span + "; "; !strings.HasPrefix(expire, want) || !strings.Contains(expire, "--retain-last 100") || strings.Contains(expire, "a day") {
		t.Errorf("expire-snapshots advice %q, want it to begin %q, keep 100 and tell no daily rate", expire, want)
	}
	if !strings.Contains(text, "snapshots         525 over "+span+"\n") {
		t.Errorf("text:\n%s", text)
	}

	// 25 commits 2.5 minutes apart: an hour, enough to tell a rate, of
	// 576 a day.
	h, expire, text = health(editedMetadata(t, e, spaced(150*time.Second)))
	if h.SnapshotsPerDay == nil || h.HistoryMs != time.Hour.Milliseconds() {
		t.Fatalf("%d snapshots over %d ms, a rate told: %t; want a rate from an hour", h.Snapshots, h.HistoryMs, h.SnapshotsPerDay != nil)
	}
	if *h.SnapshotsPerDay != 576 {
		t.Errorf("snapshots_per_day %v, want 576", *h.SnapshotsPerDay)
	}
	if !strings.HasPrefix(expire, "25 snapshots in 60 min (about one every 2.5 min: 576 a day); ") || !strings.Contains(text, "snapshots         25 over 60 min (576 a day)\n") {
		t.Errorf("advice %q, text:\n%s", expire, text)
	}
}
