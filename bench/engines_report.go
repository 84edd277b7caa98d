package bench

import (
	"fmt"
	"io"
	"strings"
)

// engineRuns are the side-by-side runs, by input then contender.
type engineRuns struct {
	inputs []string
	runs   map[string]map[string][]EngineRun
}

// AddEngine records one side-by-side run.
func (r *Report) AddEngine(run EngineRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &r.engines
	if e.runs == nil {
		e.runs = map[string]map[string][]EngineRun{}
	}
	if _, ok := e.runs[run.Input]; !ok {
		e.inputs = append(e.inputs, run.Input)
		e.runs[run.Input] = map[string][]EngineRun{}
	}
	e.runs[run.Input][run.Contender] = append(e.runs[run.Input][run.Contender], run)
}

// writeEngines prints the side-by-side table: per input and contender
// (floe, Spark, Kafka Connect's sink), medians of wall, CPU and peak RSS,
// rows per CPU-second, and floe's ratios to Spark.
func (r *Report) writeEngines(w io.Writer) {
	fmt.Fprintln(w, "\n### Side by side with Spark Structured Streaming (availableNow, local[2])")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| input | contender | runs | rows | wall s | CPU s | rows per CPU-s | peak RSS MiB | floe's rows/CPU-s ÷ Spark's | floe's peak RSS ÷ Spark's |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	type med struct{ wall, cpu, rss, perCPU float64 }
	summarise := func(rs []EngineRun) med {
		var wall, cpu, rss, per []float64
		for _, x := range rs {
			wall = append(wall, x.Wall.Seconds())
			cpu = append(cpu, x.CPU.Seconds())
			rss = append(rss, float64(x.PeakRSS)/(1<<20))
			per = append(per, x.RowsPerCPUSec())
		}
		return med{median(wall), median(cpu), median(rss), median(per)}
	}
	for _, in := range r.engines.inputs {
		byName := r.engines.runs[in]
		spark, hasSpark := byName["spark"]
		if !hasSpark && strings.HasPrefix(in, "parquet") {
			// Spark does the same work for every Parquet input.
			spark, hasSpark = r.engines.runs["parquet"]["spark"]
		}
		var sm med
		if hasSpark {
			sm = summarise(spark)
		}
		for _, name := range []string{"floe", "spark", "connect"} {
			rs, ok := byName[name]
			if !ok {
				continue
			}
			m := summarise(rs)
			ratio, rssRatio := "", ""
			if name == "floe" && hasSpark {
				if rs[0].Rows > 0 {
					ratio = fmt.Sprintf("%.1f×", m.perCPU/sm.perCPU)
				}
				rssRatio = fmt.Sprintf("%.2f", m.rss/sm.rss)
			}
			perCPU := "—"
			if rs[0].Rows > 0 {
				perCPU = fmt.Sprintf("%.0f", m.perCPU)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %.2f | %.2f | %s | %.0f | %s | %s |\n", in, name, len(rs), rs[0].Rows, m.wall, m.cpu, perCPU, m.rss, ratio, rssRatio)
		}
	}
}
