package main_test

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/maintenance"
)

var chromiumFlag = flag.Bool("chromium", false, "render the health page in headless Chromium and check the screenshot")

// healthReport is the part of `floe table health --json` the tests read.
type healthReport struct {
	Snapshots         int     `json:"snapshots"`
	MetadataFiles     int     `json:"metadata_files"`
	MetadataBytes     int64   `json:"metadata_bytes"`
	Manifests         int     `json:"manifests"`
	DataFiles         int     `json:"data_files"`
	DataBytes         int64   `json:"data_bytes"`
	DataRecords       int64   `json:"data_records"`
	MeanDataFileBytes int64   `json:"mean_data_file_bytes"`
	SmallDataFiles    int     `json:"small_data_files"`
	SmallFileShare    float64 `json:"small_file_share"`
	DeleteFiles       int     `json:"delete_files"`
	LastCommitAgeMs   int64   `json:"last_commit_age_ms"`
	PlanMs            float64 `json:"plan_ms"`
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
	kinds := ""
	for _, r := range h.Recommendations {
		kinds += r.Kind + " "
	}
	if !strings.Contains(kinds, "expire-snapshots") || !strings.Contains(kinds, "rewrite-data-files") {
		t.Errorf("recommendations: %+v", h.Recommendations)
	}

	text := e.OK("table", "health", "db.t").Stdout
	for _, want := range []string{"snapshots         25 over", "data files        25,", "small data files  25 (100%) below 128 MiB", "recommendations:", "floe maintain rewrite-data-files db.t"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
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
	if r := e.Run("table", "health", "db.nope"); r.Code != 1 || !strings.Contains(r.Stderr, "does not exist") {
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
	if *chromiumFlag {
		renderInChromium(t, page, filepath.Join(os.TempDir(), "floe-health-chromium.png"))
	}
}

// renderInChromium screenshots the page and checks it is not blank and
// that the histogram's bars were painted; with console logging, that no
// error was logged.
func renderInChromium(t *testing.T, page, shot string) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("-chromium: no chromium on PATH (Debian: apt-get install chromium)")
	}
	cmd := exec.Command(bin, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--screenshot="+shot, "--window-size=1200,1500", "file://"+page)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("chromium did not finish in 90 s")
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Uncaught") || strings.Contains(l, "ERROR:CONSOLE") || strings.Contains(l, ":CONSOLE(") && strings.Contains(l, "rror") {
			t.Errorf("console error: %s", l)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
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
		t.Fatalf("the screenshot is blank: %d colours", len(colours))
	}
	// Two bars at least a few pixels wide and tall each.
	if bars < 200 {
		t.Fatalf("%d pixels of the bar colour %s in the screenshot", bars, maintenance.HistogramBarColor)
	}
	t.Logf("screenshot %s: %d bar pixels", shot, bars)
}

func near(a, b uint8) bool { return int(a)-int(b) <= 3 && int(b)-int(a) <= 3 }
