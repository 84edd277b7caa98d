package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// formatRuns are the formats benchmark's runs, by input then contender.
type formatRuns struct {
	inputs  []string
	order   []string // contenders, in the order first seen
	runs    map[string]map[string][]FormatRun
	startup []ProcCost
	notes   []string
}

// AddFormat records one contender's run of the formats benchmark.
func (r *Report) AddFormat(run FormatRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &r.formats
	if f.runs == nil {
		f.runs = map[string]map[string][]FormatRun{}
	}
	if _, ok := f.runs[run.Input]; !ok {
		f.inputs = append(f.inputs, run.Input)
		f.runs[run.Input] = map[string][]FormatRun{}
	}
	if !slices.Contains(f.order, run.Contender) {
		f.order = append(f.order, run.Contender)
	}
	f.runs[run.Input][run.Contender] = append(f.runs[run.Input][run.Contender], run)
}

// AddFormatStartup records one run of floe's binary over an empty input.
func (r *Report) AddFormatStartup(c ProcCost) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.formats.startup = append(r.formats.startup, c)
}

// NoteFormats adds a line under the formats tables, such as why an input
// or a contender did not run.
func (r *Report) NoteFormats(note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.formats.notes, note) {
		r.formats.notes = append(r.formats.notes, note)
	}
}

// The formats targets: floe's rows per CPU-s against single-threaded
// DuckDB's (every input) and iceberg-go's single Append (Parquet inputs).
const (
	formatsDuckDBTarget    = 0.8
	formatsIcebergGoTarget = 2.5
)

// formatSummary holds the medians of one contender's runs over one input.
type formatSummary struct {
	runs                          int
	wall, cpu, perCPU, perWall    float64
	procWall, procCPU, procPerCPU float64
	rss, mb, files                float64
	rows                          int64
	hasProcess                    bool
}

func summariseFormat(rs []FormatRun) formatSummary {
	s := formatSummary{runs: len(rs), rows: rs[0].Rows, hasProcess: rs[0].Process.Wall > 0}
	var wall, cpu, perCPU, perWall, pw, pc, ppc, rss, mb, files []float64
	for _, x := range rs {
		wall = append(wall, x.Wall.Seconds())
		cpu = append(cpu, x.CPU.Seconds())
		perCPU = append(perCPU, x.RowsPerCPUSec())
		perWall = append(perWall, x.RowsPerSec())
		pw = append(pw, x.Process.Wall.Seconds())
		pc = append(pc, x.Process.CPU.Seconds())
		ppc = append(ppc, float64(x.Rows)/x.Process.CPU.Seconds())
		rss = append(rss, float64(x.Process.PeakRSS)/(1<<20))
		mb = append(mb, float64(x.Bytes)/1e6)
		files = append(files, float64(x.Files))
	}
	s.wall, s.cpu, s.perCPU, s.perWall = median(wall), median(cpu), median(perCPU), median(perWall)
	s.procWall, s.procCPU, s.procPerCPU = median(pw), median(pc), median(ppc)
	s.rss, s.mb, s.files = median(rss), median(mb), median(files)
	return s
}

// writeFormats prints the formats tables: per input and contender the
// medians, then floe's ratios to DuckDB and iceberg-go with the targets.
func (r *Report) writeFormats(w io.Writer) {
	f := &r.formats
	rounds := 0
	sums := map[string]map[string]formatSummary{}
	var rows int64
	for _, in := range f.inputs {
		sums[in] = map[string]formatSummary{}
		for name, rs := range f.runs[in] {
			sums[in][name] = summariseFormat(rs)
			rounds = max(rounds, len(rs))
			rows = rs[0].Rows
		}
	}
	fmt.Fprintf(w, "\n### Formats: %d rows into zstd level 1 Parquet (median of %d rounds, contenders alternated)\n\n", rows, rounds)
	fmt.Fprintln(w, "CPU s and wall s: floe's whole process (start-up included), DuckDB's COPY alone (without node's and DuckDB's start-up), iceberg-go's table creation and one Append in the benchmark's process; the process columns are the whole process where there is one.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| input | contender | runs | wall s | CPU s | rows/s (wall) | rows per CPU-s | process wall s | process CPU s | process rows per CPU-s | peak RSS MiB | MB out | files |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, in := range f.inputs {
		for _, name := range f.order {
			s, ok := sums[in][name]
			if !ok {
				continue
			}
			proc := "| | | | |"
			if s.hasProcess {
				proc = fmt.Sprintf("| %.2f | %.2f | %s | %.0f |", s.procWall, s.procCPU, millions(s.procPerCPU), s.rss)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.2f | %.2f | %s | %s %s %.1f | %g |\n",
				in, name, s.runs, s.wall, s.cpu, millions(s.perWall), millions(s.perCPU), proc, s.mb, s.files)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| input | floe / duckdb-1-thread, per CPU-s | the same, DuckDB's whole process | floe-1-thread / duckdb-1-thread, per CPU-s | floe / duckdb, per CPU-s | floe / duckdb, wall | floe / iceberg-go, per CPU-s | floe / iceberg-go, wall | targets: ≥ %.1f× duckdb-1-thread, Parquet ≥ %.1f× iceberg-go (per CPU-s) |\n", formatsDuckDBTarget, formatsIcebergGoTarget)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, in := range f.inputs {
		floe, ok := sums[in]["floe"]
		if !ok {
			continue
		}
		cell := func(peer string, ratio func(p formatSummary) float64) string {
			p, ok := sums[in][peer]
			if !ok {
				return "–"
			}
			return fmt.Sprintf("%.2f×", ratio(p))
		}
		var met []string
		if d1, ok := sums[in]["duckdb-1-thread"]; ok {
			met = append(met, metOrNot(floe.perCPU/d1.perCPU >= formatsDuckDBTarget)+" (DuckDB)")
		}
		if ig, ok := sums[in]["iceberg-go"]; ok && strings.HasPrefix(in, "parquet") {
			met = append(met, metOrNot(floe.perCPU/ig.perCPU >= formatsIcebergGoTarget)+" (iceberg-go)")
		}
		one := "–"
		if f1, ok := sums[in]["floe-1-thread"]; ok {
			one = cell("duckdb-1-thread", func(p formatSummary) float64 { return f1.perCPU / p.perCPU })
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", in,
			cell("duckdb-1-thread", func(p formatSummary) float64 { return floe.perCPU / p.perCPU }),
			cell("duckdb-1-thread", func(p formatSummary) float64 { return floe.perCPU / p.procPerCPU }),
			one,
			cell("duckdb", func(p formatSummary) float64 { return floe.perCPU / p.perCPU }),
			cell("duckdb", func(p formatSummary) float64 { return floe.perWall / p.perWall }),
			cell("iceberg-go", func(p formatSummary) float64 { return floe.perCPU / p.perCPU }),
			cell("iceberg-go", func(p formatSummary) float64 { return floe.perWall / p.perWall }),
			strings.Join(met, ", "))
	}
	if len(f.startup) > 0 {
		var wall, cpu, rss []float64
		for _, c := range f.startup {
			wall = append(wall, c.Wall.Seconds())
			cpu = append(cpu, c.CPU.Seconds())
			rss = append(rss, float64(c.PeakRSS)/(1<<20))
		}
		fmt.Fprintf(w, "\nfloe's start-up, the same pipeline over an empty directory (median of %d): %.2f CPU-s, %.2f s wall, %.0f MiB peak RSS\n",
			len(f.startup), median(cpu), median(wall), median(rss))
	}
	for _, n := range f.notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
