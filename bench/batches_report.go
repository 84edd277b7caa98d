package bench

import (
	"fmt"
	"io"
	"slices"
)

// AddBatches records one run of the small-batches benchmark.
func (r *Report) AddBatches(run BatchesRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, run)
}

// writeBatches prints, per way of reading the columns, the medians of one
// batch and of small batches, and the ratio of their walls to the target.
func (r *Report) writeBatches(w io.Writer) {
	type key struct{ columns, batches string }
	runs := map[key][]BatchesRun{}
	var columns, batches []string
	for _, x := range r.batches {
		k := key{x.Columns, x.Size}
		runs[k] = append(runs[k], x)
		if !slices.Contains(columns, x.Columns) {
			columns = append(columns, x.Columns)
		}
		if !slices.Contains(batches, x.Size) {
			batches = append(batches, x.Size)
		}
	}
	fmt.Fprintf(w, "\n### Small batches: %d rows of JSON lines, one batch against small ones (medians, contenders alternated)\n\n", r.batches[0].Rows)
	fmt.Fprintln(w, "| columns | batches | runs | batches committed | files | wall s | CPU s | peak RSS MiB | wall vs one batch |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range columns {
		var one float64
		for _, b := range batches {
			rs := runs[key{c, b}]
			if len(rs) == 0 {
				continue
			}
			var wall, cpu, rss, snaps, files []float64
			for _, x := range rs {
				wall = append(wall, x.Wall.Seconds())
				cpu = append(cpu, x.CPU.Seconds())
				rss = append(rss, float64(x.PeakRSS)/(1<<20))
				snaps = append(snaps, float64(x.Batches))
				files = append(files, float64(x.Files))
			}
			ratio := ""
			if one == 0 {
				one = median(wall)
			} else {
				ratio = fmt.Sprintf("%.2f× (target ≤ %.1f×)", median(wall)/one, batchesTarget)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.0f | %.2f | %.2f | %.0f | %s |\n", c, b, len(rs), median(snaps), median(files), median(wall), median(cpu), median(rss), ratio)
		}
	}
}
