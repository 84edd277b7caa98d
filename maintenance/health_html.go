package maintenance

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

// HistogramBarColor is the fill of the size histogram's bars, so that a
// rendered page can be checked for them.
const HistogramBarColor = "#1f77b4"

// CommitBarColor is the fill of the commits-over-time bars.
const CommitBarColor = "#2ca02c"

// commitBins is how many time slots the commits chart divides the
// table's history into.
const commitBins = 40

// maxHistoryRows bounds the page's snapshot table; the chart shows all.
const maxHistoryRows = 500

// Chart geometry, in SVG user units.
const (
	chartWidth   = 1000
	chartHeight  = 260
	chartLeft    = 60 // room for the y-axis labels
	chartRight   = 20
	chartTop     = 20
	chartBottom  = 50 // room for the x-axis labels and title
	chartPlotW   = chartWidth - chartLeft - chartRight
	chartPlotH   = chartHeight - chartTop - chartBottom
	chartXAxisY  = chartTop + chartPlotH
	chartLabelDY = 16
)

type htmlPage struct {
	R         Report
	Rows      [][2]string
	Histogram histogramChart
	History   historyChart
	Commits   histogramChart
	Generated string
	// RecentHistory is the tail of R.History the snapshot table lists.
	RecentHistory []SnapshotPoint
	Color         string
	CommitColor   string
	W, H          int
	Left          int
	Top           int
	Right         int
	AxisY         int
	LabelY        int
	TitleY        int
	MidX          int
}

type histogramChart struct {
	Bars   []bar
	Ticks  []tick
	YTicks []tick
}

type bar struct {
	X, Y, W, H float64
	Title      string
}

type tick struct {
	X, Y  float64
	Label string
	// Anchor is the label's text-anchor; "" is middle.
	Anchor string
}

type historyChart struct {
	Points string
	// XTicks label the time axis; the commits chart shares them.
	XTicks []tick
	YTicks []tick
	Empty  bool
}

// WriteHTML writes the report as one self-contained page: no scripts, no
// external styles or fonts, charts as inline SVG.
func WriteHTML(w io.Writer, r Report) error {
	p := htmlPage{
		R: r, Rows: reportRows(r), Histogram: buildHistogram(r.Histogram), History: buildHistory(r.History), Commits: buildCommits(r.History),
		RecentHistory: r.History[max(0, len(r.History)-maxHistoryRows):],
		Generated:     time.Now().UTC().Format(time.RFC3339), Color: HistogramBarColor, CommitColor: CommitBarColor,
		W: chartWidth, H: chartHeight, Left: chartLeft, Top: chartTop, Right: chartWidth - chartRight,
		AxisY: chartXAxisY, LabelY: chartXAxisY + chartLabelDY, TitleY: chartHeight - 6, MidX: chartLeft + chartPlotW/2,
	}
	return healthPage.Execute(w, p)
}

// reportRows are the numbers of the summary, as label and value.
func reportRows(r Report) [][2]string {
	rows := [][2]string{
		{"snapshots", r.SnapshotSpan()},
		{"last commit", Duration(r.LastCommitAgeMs) + " ago"},
		{"metadata files", fmt.Sprintf("%s, %s", Count(int64(r.MetadataFiles)), Bytes(r.MetadataBytes))},
		{"manifests", fmt.Sprintf("%s (%s data, %s delete), %s", Count(int64(r.Manifests)), Count(int64(r.DataManifests)), Count(int64(r.DeleteManifests)), Bytes(r.ManifestBytes))},
		{"data files", fmt.Sprintf("%s, %s, %s, mean %s", Count(int64(r.DataFiles)), Bytes(r.DataBytes), Counted(r.DataRecords, "record"), Bytes(r.MeanDataFileBytes))},
		{"small data files", fmt.Sprintf("%s (%.0f%%) below %s, a quarter of the target %s", Count(int64(r.SmallDataFiles)), r.SmallFileShare*100, Bytes(r.SmallFileThresholdBytes), Bytes(r.TargetFileSizeBytes))},
		{"partitions", r.PartitionSummary()},
		{"delete files", fmt.Sprintf("%s, %s (%d position, %d equality, %s)", Count(int64(r.DeleteFiles)), Bytes(r.DeleteBytes), r.PositionDeleteFiles, r.EqualityDeleteFiles, Counted(r.DeletionVectors, "deletion vector"))},
	}
	// As in the text report: a report made without timing a plan
	// (--plan-runs 0) has no plan to show.
	if r.PlanMs > 0 || r.PlanTasks > 0 {
		rows = append(rows, [2]string{"full-scan plan", fmt.Sprintf("%.1f ms, %s", r.PlanMs, Counted(r.PlanTasks, "task"))})
	}
	return rows
}

func buildHistogram(buckets []SizeBucket) histogramChart {
	var c histogramChart
	if len(buckets) == 0 {
		return c
	}
	most := 0
	for _, b := range buckets {
		most = max(most, b.Files)
	}
	slot := float64(chartPlotW) / float64(len(buckets))
	for i, b := range buckets {
		x := float64(chartLeft) + float64(i)*slot
		label := Bytes(b.MinBytes) + "–"
		if b.MinBytes == 0 {
			label = "< " + Bytes(b.MaxBytes)
		}
		c.Ticks = append(c.Ticks, tick{X: x + slot/2, Label: label})
		if b.Files == 0 {
			continue
		}
		h := float64(chartPlotH) * float64(b.Files) / float64(most)
		c.Bars = append(c.Bars, bar{X: x + slot*0.1, Y: float64(chartXAxisY) - h, W: slot * 0.8, H: h,
			Title: fmt.Sprintf("%s of %s to %s (%s in all)", Counted(b.Files, "file"), Bytes(b.MinBytes), Bytes(b.MaxBytes), Bytes(b.Bytes))})
	}
	c.YTicks = yTicks(most)
	return c
}

// yTicks labels 0, half and the maximum of a count axis.
func yTicks(most int) []tick {
	ticks := []tick{{Y: chartXAxisY, Label: "0"}}
	if most >= 2 {
		// A whole count, drawn at its own height: half of an odd most
		// is not a count, and would sit where no bar or step can.
		mid := most / 2
		ticks = append(ticks, tick{Y: chartXAxisY - float64(chartPlotH)*float64(mid)/float64(most), Label: Count(int64(mid))})
	}
	if most >= 1 {
		ticks = append(ticks, tick{Y: chartTop, Label: Count(int64(most))})
	}
	return ticks
}

// buildHistory draws the cumulative snapshot count against time.
func buildHistory(points []SnapshotPoint) historyChart {
	var c historyChart
	if len(points) == 0 {
		c.Empty = true
		return c
	}
	first, last := points[0].TimestampMs, points[len(points)-1].TimestampMs
	span := float64(max(last-first, 1))
	x := func(ms int64) float64 { return float64(chartLeft) + float64(chartPlotW)*float64(ms-first)/span }
	y := func(n int) float64 { return float64(chartXAxisY) - float64(chartPlotH)*float64(n)/float64(len(points)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%.1f,%.1f", x(first), y(0))
	for i, p := range points {
		// A step: the count rises at each commit.
		fmt.Fprintf(&b, " %.1f,%.1f %.1f,%.1f", x(p.TimestampMs), y(i), x(p.TimestampMs), y(i+1))
	}
	c.Points = b.String()
	step := (last - first) / 2
	labelled := []int64{}
	for _, ms := range []int64{first, first + step, last} {
		if slices.Contains(labelled, ms) {
			continue // a history under 2 ms has fewer instants to label
		}
		c.XTicks = append(c.XTicks, tick{X: x(ms), Label: timeLabel(ms, step, len(labelled) > 0 && sameDay(ms, first))})
		labelled = append(labelled, ms)
	}
	// Centred, the labels at the ends would run past the chart's edges.
	c.XTicks[0].Anchor = "start"
	if n := len(c.XTicks); n > 1 {
		c.XTicks[n-1].Anchor = "end"
	}
	c.YTicks = yTicks(len(points))
	return c
}

// timeLabel formats ms (UTC) to the second, or to the millisecond when
// labels are less than a second apart, so that labels step apart at
// least one unit of what they show and never repeat. The date is left
// off a label on the first label's day, which tells it.
func timeLabel(ms, apart int64, dateKnown bool) string {
	layout := "15:04:05"
	if apart < time.Second.Milliseconds() {
		layout += ".000"
	}
	if !dateKnown {
		layout = "2006-01-02 " + layout
	}
	return time.UnixMilli(ms).UTC().Format(layout)
}

func sameDay(a, b int64) bool {
	ta, tb := time.UnixMilli(a).UTC(), time.UnixMilli(b).UTC()
	return ta.YearDay() == tb.YearDay() && ta.Year() == tb.Year()
}

// buildCommits counts the commits in equal slots of the history's time
// span: the rate at which the table gains snapshots, which the cumulative
// line shows only as a slope.
func buildCommits(points []SnapshotPoint) histogramChart {
	var c histogramChart
	if len(points) == 0 {
		return c
	}
	first, last := points[0].TimestampMs, points[len(points)-1].TimestampMs
	bins := commitBins
	if last == first {
		bins = 1
	}
	span := max(last-first, 1)
	counts, records := make([]int, bins), make([]int64, bins)
	for _, p := range points {
		i := min(int((p.TimestampMs-first)*int64(bins)/span), bins-1)
		counts[i]++
		records[i] += p.AddedRecords
	}
	most := slices.Max(counts)
	slot := float64(chartPlotW) / float64(bins)
	binMs := span / int64(bins)
	for i, n := range counts {
		if n == 0 {
			continue
		}
		h := float64(chartPlotH) * float64(n) / float64(most)
		from := first + int64(i)*binMs
		c.Bars = append(c.Bars, bar{X: float64(chartLeft) + float64(i)*slot + slot*0.05, Y: float64(chartXAxisY) - h, W: slot * 0.9, H: h,
			Title: fmt.Sprintf("%s, %s added, from %s for %s", Counted(n, "commit"), Counted(records[i], "record"),
				timeLabel(from, binMs, false), Duration(max(binMs, 1)))})
	}
	c.YTicks = yTicks(most)
	return c
}

var healthPage = template.Must(template.New("health").Funcs(template.FuncMap{
	"msTime": func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") },
	"count":  Count,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Health of {{.R.Table}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }
table.numbers { border-collapse: collapse; }
table.numbers th { text-align: left; padding: 2px 16px 2px 0; font-weight: 600; }
table.numbers td { padding: 2px 0; font-variant-numeric: tabular-nums; }
table.snapshots { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.snapshots th, table.snapshots td { padding: 3px 12px; text-align: left; white-space: nowrap; }
table.snapshots th { font-weight: 600; border-bottom: 1px solid #888; }
table.snapshots .num { text-align: right; }
table.snapshots tr:nth-child(even) td { background: #f3f3f3; }
svg { display: block; margin: 8px 0 24px; }
svg text { font-size: 11px; fill: #444; }
svg .axis { stroke: #888; stroke-width: 1; }
li.rec { margin-bottom: 6px; }
.healthy { color: #2a7a2a; }
</style>
</head>
<body>
<h1>Health of {{.R.Table}}</h1>
<p>{{.R.Location}}<br>metadata {{.R.MetadataLocation}}<br>report made {{.Generated}}</p>
<table class="numbers">
{{range .Rows}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
<h2>Recommendations</h2>
{{if .R.Recommendations}}<ul>
{{range .R.Recommendations}}<li class="rec" data-kind="{{.Kind}}">{{.Message}}</li>
{{end}}</ul>{{else}}<p class="healthy">None: the table is healthy.</p>{{end}}
<h2>Data-file sizes</h2>
{{if .Histogram.Bars}}<svg id="file-size-histogram" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="data files by size">
<line class="axis" x1="{{.Left}}" y1="{{.AxisY}}" x2="{{.Right}}" y2="{{.AxisY}}"/>
<line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.AxisY}}"/>
{{range .Histogram.Bars}}<rect class="bar" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .H}}" fill="{{$.Color}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Histogram.Ticks}}<text x="{{printf "%.1f" .X}}" y="{{$.LabelY}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Histogram.YTicks}}<text class="ytick" x="{{$.Left | printf "%d"}}" dx="-6" y="{{printf "%.1f" .Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}<text x="{{.MidX}}" y="{{.TitleY}}" text-anchor="middle">file size (bucket lower bound; each bucket doubles)</text>
<text x="14" y="{{.Top}}" transform="rotate(-90 14 {{.Top}})" text-anchor="end">files</text>
</svg>{{else}}<p>No data files.</p>{{end}}
<h2>Snapshots over time</h2>
{{if .History.Empty}}<p>No snapshots.</p>{{else}}<svg id="snapshot-history" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="cumulative snapshots over time">
<line class="axis" x1="{{.Left}}" y1="{{.AxisY}}" x2="{{.Right}}" y2="{{.AxisY}}"/>
<line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.AxisY}}"/>
<polyline points="{{.History.Points}}" fill="none" stroke="#d62728" stroke-width="2"/>
{{range .History.XTicks}}<text class="xtick" x="{{printf "%.1f" .X}}" y="{{$.LabelY}}" text-anchor="{{or .Anchor "middle"}}">{{.Label}}</text>
{{end}}{{range .History.YTicks}}<text class="ytick" x="{{$.Left | printf "%d"}}" dx="-6" y="{{printf "%.1f" .Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}<text x="{{.MidX}}" y="{{.TitleY}}" text-anchor="middle">commit time (UTC)</text>
<text x="14" y="{{.Top}}" transform="rotate(-90 14 {{.Top}})" text-anchor="end">snapshots</text>
</svg>{{end}}
<h2>Commits over time</h2>
{{if .Commits.Bars}}<svg id="commit-rate" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="commits per time slot">
<line class="axis" x1="{{.Left}}" y1="{{.AxisY}}" x2="{{.Right}}" y2="{{.AxisY}}"/>
<line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.AxisY}}"/>
{{range .Commits.Bars}}<rect class="bar" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .H}}" fill="{{$.CommitColor}}"><title>{{.Title}}</title></rect>
{{end}}{{range .History.XTicks}}<text class="xtick" x="{{printf "%.1f" .X}}" y="{{$.LabelY}}" text-anchor="{{or .Anchor "middle"}}">{{.Label}}</text>
{{end}}{{range .Commits.YTicks}}<text class="ytick" x="{{$.Left | printf "%d"}}" dx="-6" y="{{printf "%.1f" .Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}<text x="{{.MidX}}" y="{{.TitleY}}" text-anchor="middle">commit time (UTC), snapshots still in the table</text>
<text x="14" y="{{.Top}}" transform="rotate(-90 14 {{.Top}})" text-anchor="end">commits</text>
</svg>{{else}}<p>No snapshots.</p>{{end}}
<h2>Snapshots</h2>
{{if lt (len .RecentHistory) (len .R.History)}}<p>The newest {{len .RecentHistory}} of {{len .R.History}}.</p>{{end}}
<table class="snapshots" id="snapshots">
<tr><th>time (UTC)</th><th>snapshot</th><th>operation</th><th class="num">added records</th><th class="num">added files</th></tr>
{{range .RecentHistory}}<tr><td>{{msTime .TimestampMs}}</td><td>{{.SnapshotID}}</td><td>{{.Operation}}</td><td class="num">{{count .AddedRecords}}</td><td class="num">{{count .AddedFiles}}</td></tr>
{{end}}</table>
</body>
</html>
`))
