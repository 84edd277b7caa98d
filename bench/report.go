package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Report gathers results over repeated runs (go test -count) and prints
// them as Markdown tables of medians, ready for docs/benchmarks.md.
type Report struct {
	mu          sync.Mutex
	ingest      ingestRuns
	partitioned ingestRuns
	latency     []latencyRun
	scan        scanRuns
	planning    []Planning
	planSpec    Spec
	compaction  compactionRuns
	upsert      upsertRuns
	kafka       kafkaRuns
	engines     engineRuns
	formats     formatRuns
	batches     []BatchesRun
}

// ingestRuns are the runs of one ingest benchmark, by contender.
type ingestRuns struct {
	dataset Spec
	order   []string
	results map[string][]Result
}

func (in *ingestRuns) add(ds Spec, res Result) {
	if in.results == nil {
		in.results = map[string][]Result{}
	}
	if _, ok := in.results[res.Contender]; !ok {
		in.order = append(in.order, res.Contender)
	}
	in.dataset = ds
	in.results[res.Contender] = append(in.results[res.Contender], res)
}

// summaries are the medians of each contender and the largest run count.
func (in *ingestRuns) summaries() (map[string]summary, int) {
	sums := map[string]summary{}
	runs := 0
	for _, name := range in.order {
		sums[name] = summarise(in.results[name])
		runs = max(runs, sums[name].runs)
	}
	return sums, runs
}

type latencyRun struct {
	dataset Spec
	Latency
}

// AddIngest records one contender's run over ds.
func (r *Report) AddIngest(ds Spec, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ingest.add(ds, res)
}

// AddPartitioned records one contender's run of the partitioned ingest
// (PartitionFields) over ds.
func (r *Report) AddPartitioned(ds Spec, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partitioned.add(ds, res)
}

// AddScan records one contender's run of scan query q over ds.
func (r *Report) AddScan(ds Spec, q ScanQuery, res ScanResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scan.add(ds, q, res)
}

// NoteScan adds a line under the scan tables, such as why a contender
// did not run.
func (r *Report) NoteScan(note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.scan.notes, note) {
		r.scan.notes = append(r.scan.notes, note)
	}
}

// AddLatency records one latency series over ds.
func (r *Report) AddLatency(ds Spec, l Latency) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latency = append(r.latency, latencyRun{dataset: ds, Latency: l})
}

// AddPlanning records one streaming read of a table made from ds.
func (r *Report) AddPlanning(ds Spec, p Planning) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.planSpec = ds
	r.planning = append(r.planning, p)
}

// AddCompaction records one contender's compaction of fx's table.
func (r *Report) AddCompaction(fx *CompactionFixture, res CompactionResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compaction.add(fx, res)
}

// Write prints the tables; it prints nothing when nothing was recorded, so
// that a plain go test run stays quiet.
func (r *Report) Write(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ingest.order) == 0 && len(r.partitioned.order) == 0 && len(r.latency) == 0 && len(r.scan.queries) == 0 && len(r.planning) == 0 && len(r.compaction.order) == 0 && len(r.upsert.runs) == 0 && len(r.kafka.order) == 0 && len(r.engines.inputs) == 0 && len(r.formats.inputs) == 0 && len(r.formats.notes) == 0 && len(r.batches) == 0 {
		return
	}
	fmt.Fprintf(w, "\nmachine: %s/%s, %d CPUs, GOMAXPROCS %d, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	if len(r.ingest.order) > 0 {
		r.writeIngest(w)
	}
	if len(r.partitioned.order) > 0 {
		r.writePartitioned(w)
	}
	if len(r.latency) > 0 {
		r.writeLatency(w)
	}
	if len(r.scan.queries) > 0 {
		r.writeScan(w)
	}
	if len(r.planning) > 0 {
		r.writePlanning(w)
	}
	if len(r.compaction.order) > 0 {
		r.writeCompaction(w)
	}
	if len(r.upsert.runs) > 0 {
		r.writeUpsert(w)
	}
	if len(r.kafka.order) > 0 {
		r.writeKafka(w)
	}
	if len(r.engines.inputs) > 0 {
		r.writeEngines(w)
	}
	if len(r.formats.inputs) > 0 || len(r.formats.notes) > 0 {
		r.writeFormats(w)
	}
	if len(r.batches) > 0 {
		r.writeBatches(w)
	}
}

// writePlanning prints the streaming-read planning table: per mode, the
// planning time per batch over every batch of every run, and the median
// run wall time.
func (r *Report) writePlanning(w io.Writer) {
	var names []string
	byName := map[string][]Planning{}
	for _, p := range r.planning {
		if _, ok := byName[p.Name]; !ok {
			names = append(names, p.Name)
		}
		byName[p.Name] = append(byName[p.Name], p)
	}
	first := r.planning[0]
	fmt.Fprintf(w, "\n### Streaming read of %s: %d snapshots, %d batches per run\n\n", r.planSpec.Name, r.planSpec.Files, first.Batches)
	fmt.Fprintln(w, "| planning | runs | mean planning ms per batch | median ms | p90 ms | run wall s (median) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	means := map[string]float64{}
	for _, name := range names {
		var merged Latency
		var walls []float64
		for _, p := range byName[name] {
			merged.Times = append(merged.Times, p.Times...)
			walls = append(walls, p.Wall.Seconds())
		}
		means[name] = msf(Planning{Times: merged.Times}.Mean())
		fmt.Fprintf(w, "| %s | %d | %.2f | %.0f | %.0f | %.2f |\n", name, len(byName[name]), means[name],
			msf(merged.Median(0, len(merged.Times))), msf(merged.Percentile(0.9)), median(walls))
	}
	if len(names) == 2 && means[names[1]] > 0 {
		fmt.Fprintf(w, "\n%s / %s mean planning time: %.1f×\n", names[0], names[1], means[names[0]]/means[names[1]])
	}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// summary holds the medians of one contender's runs; each figure is the
// median of that figure over the runs, taken independently.
type summary struct {
	runs                      int
	wall, cpu                 float64
	rowsPerSec, rowsPerCPUSec float64
	megabytes                 float64
	// files and meanFileBytes are medians too, as a writer's file count
	// may vary from run to run.
	files, meanFileBytes float64
	partitions           int
	minRows, maxRows     int64
}

func summarise(rs []Result) summary {
	s := summary{runs: len(rs), minRows: rs[0].Rows, maxRows: rs[0].Rows, partitions: rs[0].Partitions}
	var wall, cpu, rps, rpc, mb, files, mean []float64
	for _, r := range rs {
		wall = append(wall, r.Wall.Seconds())
		cpu = append(cpu, r.CPU.Seconds())
		rps = append(rps, r.RowsPerSec())
		rpc = append(rpc, r.RowsPerCPUSec())
		mb = append(mb, float64(r.Bytes)/1e6)
		files = append(files, float64(r.Files))
		mean = append(mean, r.MeanFileBytes())
		s.minRows, s.maxRows = min(s.minRows, r.Rows), max(s.maxRows, r.Rows)
	}
	s.wall, s.cpu, s.rowsPerSec, s.rowsPerCPUSec, s.megabytes = median(wall), median(cpu), median(rps), median(rpc), median(mb)
	s.files, s.meanFileBytes = median(files), median(mean)
	return s
}

// rowsCounted is the row count, or its range when runs differ.
func (s summary) rowsCounted() string {
	if s.minRows != s.maxRows {
		return fmt.Sprintf("%d–%d", s.minRows, s.maxRows)
	}
	return fmt.Sprint(s.minRows)
}

func (r *Report) writeIngest(w io.Writer) {
	ds := r.ingest.dataset
	sums, runs := r.ingest.summaries()
	fmt.Fprintf(w, "\n### Ingest: %s, %d rows in %d files (median of %d runs)\n\n", ds.Name, ds.Rows(), ds.Files, runs)
	fmt.Fprintln(w, "| contender | runs | wall s | CPU s | rows/s (wall) | rows per CPU-s | MB | files | rows counted |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, name := range r.ingest.order {
		s := sums[name]
		label := name
		switch name {
		case "decode":
			label = "decode (read input only; MB = input)"
		case "cp":
			label = "cp (copy the input files; MB and rows = input)"
		case "floe":
			label = "floe (column chunks copied)"
		case "floe-reencode":
			label = "floe-reencode (every value decoded and encoded)"
		case "floe-arrow":
			label = "floe-arrow (floe-reencode with the arrow-go encoder)"
		case "iceberg-go":
			label = "iceberg-go (one Append of every file)"
		case "iceberg-go-per-file":
			label = "iceberg-go-per-file (one Append, so one snapshot, a file)"
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %s | %s | %.1f | %g | %s |\n",
			label, s.runs, s.wall, s.cpu, millions(s.rowsPerSec), millions(s.rowsPerCPUSec), s.megabytes, s.files, s.rowsCounted())
	}
	fmt.Fprintln(w, "\n| ratio | rows/s (wall) | rows per CPU-s | MB |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, pair := range [][2]string{{"floe", "iceberg-go"}, {"floe", "cp"}, {"floe-reencode", "iceberg-go"},
		{"floe-reencode", "iceberg-go-per-file"}, {"floe-reencode", "raw"}, {"floe-reencode", "floe-arrow"}} {
		a, ok := sums[pair[0]]
		o, ok2 := sums[pair[1]]
		if !ok || !ok2 {
			continue
		}
		fmt.Fprintf(w, "| %s / %s | %.2f× | %.2f× | %.2f× |\n", pair[0], pair[1],
			a.rowsPerSec/o.rowsPerSec, a.rowsPerCPUSec/o.rowsPerCPUSec, a.megabytes/o.megabytes)
	}
}

func (r *Report) writePartitioned(w io.Writer) {
	ds := r.partitioned.dataset
	sums, runs := r.partitioned.summaries()
	fmt.Fprintf(w, "\n### Partitioned ingest: %s, %d rows in %d files, partitioned by %s (median of %d runs)\n\n",
		ds.Name, ds.Rows(), ds.Files, strings.Join(PartitionFields, ", "), runs)
	fmt.Fprintln(w, "| contender | runs | wall s | CPU s | rows/s (wall) | rows per CPU-s | data files | mean file bytes | partitions | MB | rows counted |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, name := range r.partitioned.order {
		s := sums[name]
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %s | %s | %g | %.0f | %d | %.1f | %s |\n",
			name, s.runs, s.wall, s.cpu, millions(s.rowsPerSec), millions(s.rowsPerCPUSec), s.files, s.meanFileBytes, s.partitions, s.megabytes, s.rowsCounted())
	}
	floe, ok := sums["floe"]
	if !ok {
		return
	}
	fmt.Fprintln(w, "\n| ratio | rows/s (wall) | rows per CPU-s | CPU s | data files | mean file bytes | target ≥ 1.0× rows/s, no more files |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, name := range r.partitioned.order {
		peer := sums[name]
		if name == "floe" {
			continue
		}
		met := "met"
		if floe.rowsPerSec < peer.rowsPerSec || floe.files > peer.files {
			met = "not met"
		}
		fmt.Fprintf(w, "| floe / %s | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %s |\n", name,
			floe.rowsPerSec/peer.rowsPerSec, floe.rowsPerCPUSec/peer.rowsPerCPUSec, floe.cpu/peer.cpu, floe.files/peer.files, floe.meanFileBytes/peer.meanFileBytes, met)
	}
}

// The two windows of the commit-latency comparison, as batch indexes: the
// first 50 batches and the last 50 of 500.
const (
	earlyFrom, earlyTo = 0, 50
	lateFrom, lateTo   = 450, 500
)

func (r *Report) writeLatency(w io.Writer) {
	fmt.Fprintln(w, "\n### Commit latency: one snapshot per input file")
	fmt.Fprintln(w, "\n| what | dataset | batches | snapshots | rows | p50 ms, batches 1–50 | p50 ms, batches 451–500 | ratio |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, l := range r.latency {
		early := l.Median(earlyFrom, earlyTo)
		late := l.Median(lateFrom, lateTo)
		ratio := "–"
		if early > 0 && late > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(late)/float64(early))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s | %s | %s |\n", l.Name, l.dataset.Name, len(l.Times), l.Snapshots, l.Rows, ms(early), ms(late), ratio)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func millions(x float64) string { return fmt.Sprintf("%.2fM", x/1e6) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// scanRuns are the runs of the scan benchmark, by query then contender.
type scanRuns struct {
	dataset   Spec
	queries   []ScanQuery
	order     []string // contenders, in the order first seen
	results   map[string]map[string][]ScanResult
	dataFiles int
	notes     []string
}

func (sr *scanRuns) add(ds Spec, q ScanQuery, res ScanResult) {
	if sr.results == nil {
		sr.results = map[string]map[string][]ScanResult{}
	}
	if _, ok := sr.results[q.Name]; !ok {
		sr.queries = append(sr.queries, q)
		sr.results[q.Name] = map[string][]ScanResult{}
	}
	if !slices.Contains(sr.order, res.Contender) {
		sr.order = append(sr.order, res.Contender)
		// Runs come in a shuffled order; the tables list the Go readers
		// as ScanContenders does, DuckDB last.
		rank := func(name string) int {
			if i := slices.IndexFunc(ScanContenders, func(c ScanContender) bool { return c.Name == name }); i >= 0 {
				return i
			}
			return len(ScanContenders)
		}
		slices.SortStableFunc(sr.order, func(a, b string) int { return rank(a) - rank(b) })
	}
	sr.dataFiles = res.TableFiles
	sr.dataset = ds
	sr.results[q.Name][res.Contender] = append(sr.results[q.Name][res.Contender], res)
}

// scanSummary holds the medians of one contender's runs of one query.
type scanSummary struct {
	runs                 int
	wall, cpu, rowsPerS  float64
	files                float64
	processWall, procCPU float64
	rows                 int64
}

func summariseScan(rs []ScanResult) scanSummary {
	s := scanSummary{runs: len(rs), rows: rs[0].Rows}
	var wall, cpu, rps, files, pw, pc []float64
	for _, r := range rs {
		wall = append(wall, r.Wall.Seconds())
		cpu = append(cpu, r.CPU.Seconds())
		rps = append(rps, r.TableRowsPerSec())
		files = append(files, float64(r.Files))
		pw = append(pw, r.Process.Wall.Seconds())
		pc = append(pc, r.Process.CPU.Seconds())
	}
	s.wall, s.cpu, s.rowsPerS, s.files = median(wall), median(cpu), median(rps), median(files)
	s.processWall, s.procCPU = median(pw), median(pc)
	return s
}

// scanTarget is the least ratio of floe's rows/s to the peer's that the
// scan benchmark asks for, 0 for none.
func scanTarget(query, peer string) float64 {
	switch {
	case peer == "iceberg-go":
		return 1
	case peer == "duckdb" && query == "full":
		return 0.5
	}
	return 0
}

func (r *Report) writeScan(w io.Writer) {
	sr := &r.scan
	ds := sr.dataset
	sums := map[string]map[string]scanSummary{}
	runs := 0
	for _, q := range sr.queries {
		sums[q.Name] = map[string]scanSummary{}
		for name, rs := range sr.results[q.Name] {
			s := summariseScan(rs)
			sums[q.Name][name] = s
			runs = max(runs, s.runs)
		}
	}
	fmt.Fprintf(w, "\n### Scan: %s, %d rows in %d data files, partitioned by %s (median of %d runs)\n\n",
		ds.Name, ds.Rows(), sr.dataFiles, strings.Join(PartitionFields, ", "), runs)
	for _, q := range sr.queries {
		pred := "whole table"
		if q.Filter != "" {
			pred = "`" + q.Filter + "`"
		}
		fmt.Fprintf(w, "- %s: count(*), sum(v) over %s\n", q.Name, pred)
	}
	fmt.Fprintln(w, "\n| query | contender | runs | wall ms | CPU ms | table rows/s (wall) | files planned | rows matched |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, q := range sr.queries {
		for _, name := range sr.order {
			s, ok := sums[q.Name][name]
			if !ok {
				continue
			}
			files := fmt.Sprintf("%g", s.files)
			if name == "duckdb" {
				files += " (all given)"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.1f | %.1f | %s | %s | %d |\n",
				q.Name, name, s.runs, s.wall*1e3, s.cpu*1e3, millions(s.rowsPerS), files, s.rows)
		}
	}
	fmt.Fprintln(w, "\n| query | ratio | rows/s (wall) | CPU | target (rows/s): ≥ 1.0× iceberg-go, full scan ≥ 0.5× DuckDB |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | --- |")
	for _, q := range sr.queries {
		floe, ok := sums[q.Name]["floe"]
		if !ok {
			continue
		}
		for _, name := range sr.order {
			peer, ok := sums[q.Name][name]
			if name == "floe" || !ok {
				continue
			}
			target, least := "–", scanTarget(q.Name, name)
			if least > 0 {
				target = "met"
				if floe.rowsPerS < least*peer.rowsPerS {
					target = "not met"
				}
			}
			fmt.Fprintf(w, "| %s | floe / %s | %.2f× | %.2f× | %s |\n", q.Name, name, floe.rowsPerS/peer.rowsPerS, floe.cpu/peer.cpu, target)
		}
	}
	var procs []string
	for _, q := range sr.queries {
		if s, ok := sums[q.Name]["duckdb"]; ok {
			procs = append(procs, fmt.Sprintf("%s %.0f ms wall, %.0f CPU-ms", q.Name, s.processWall*1e3, s.procCPU*1e3))
		}
	}
	if len(procs) > 0 {
		fmt.Fprintf(w, "\nDuckDB's wall and CPU are the query's alone; its whole node process (start-up, database open, query): %s.\n", strings.Join(procs, "; "))
	}
	for _, n := range sr.notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// compactionRuns are the runs of the compaction benchmark, by contender.
type compactionRuns struct {
	fx      *CompactionFixture
	order   []string
	results map[string][]CompactionResult
}

func (cr *compactionRuns) add(fx *CompactionFixture, res CompactionResult) {
	if cr.results == nil {
		cr.results = map[string][]CompactionResult{}
	}
	if _, ok := cr.results[res.Contender]; !ok {
		cr.order = append(cr.order, res.Contender)
	}
	cr.fx = fx
	cr.results[res.Contender] = append(cr.results[res.Contender], res)
}

// compactionSummary holds the medians of one contender's runs.
type compactionSummary struct {
	runs                    int
	wall, cpu, mbps, mbpcpu float64
	outFiles, outMB         float64
}

func summariseCompaction(rs []CompactionResult) compactionSummary {
	var wall, cpu, mbps, mbpcpu, files, mb []float64
	for _, r := range rs {
		wall = append(wall, r.Wall.Seconds())
		cpu = append(cpu, r.CPU.Seconds())
		mbps = append(mbps, r.MBPerSec())
		mbpcpu = append(mbpcpu, r.MBPerCPUSec())
		files = append(files, float64(r.OutputFiles))
		mb = append(mb, float64(r.OutputBytes)/1e6)
	}
	return compactionSummary{runs: len(rs), wall: median(wall), cpu: median(cpu), mbps: median(mbps), mbpcpu: median(mbpcpu),
		outFiles: median(files), outMB: median(mb)}
}

func (r *Report) writeCompaction(w io.Writer) {
	cr := &r.compaction
	fx := cr.fx
	sums := map[string]compactionSummary{}
	runs := 0
	for _, name := range cr.order {
		sums[name] = summariseCompaction(cr.results[name])
		runs = max(runs, sums[name].runs)
	}
	fmt.Fprintf(w, "\n### Compaction: %s, %d rows in %d data files of %.1f MB, one per snapshot, %d manifests (%d merged) (median of %d runs)\n\n",
		fx.Dataset.Name, fx.Rows, len(fx.Files), float64(fx.Bytes)/1e6, fx.Manifests, fx.MergedManifests, runs)
	fmt.Fprintln(w, "| contender | runs | wall s | CPU s | input MB/s (wall) | input MB per CPU-s | output files | output MB | rows checked |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, name := range cr.order {
		s := sums[name]
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.1f | %.1f | %g | %.1f | %d |\n",
			name, s.runs, s.wall, s.cpu, s.mbps, s.mbpcpu, s.outFiles, s.outMB, fx.Rows)
	}
	// floe against every other contender; its other variants against the
	// raw ones.
	fmt.Fprintln(w, "\n| ratio | MB/s (wall) | MB per CPU-s | output MB |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, f := range cr.order {
		if !strings.HasPrefix(f, "floe") {
			continue
		}
		for _, o := range cr.order {
			if o == f || f != "floe" && strings.HasPrefix(o, "floe") {
				continue
			}
			a, b := sums[f], sums[o]
			fmt.Fprintf(w, "| %s / %s | %.2f× | %.2f× | %.2f× |\n", f, o, a.mbps/b.mbps, a.mbpcpu/b.mbpcpu, a.outMB/b.outMB)
		}
	}
}

// upsertRuns are the upsert benchmark's results, in the order measured.
type upsertRuns struct {
	spec        UpsertSpec
	runs        []UpsertRun
	appends     []UpsertRun
	scans       []UpsertScan
	compactions []UpsertCompaction
}

// AddUpsert records one contender's run of the upsert batches over s.
func (r *Report) AddUpsert(s UpsertSpec, run UpsertRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upsert.spec = s
	r.upsert.runs = append(r.upsert.runs, run)
}

// AddUpsertAppend records floe's append of the same change files.
func (r *Report) AddUpsertAppend(run UpsertRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upsert.appends = append(r.upsert.appends, run)
}

// AddUpsertScan records a full scan of a table of the upsert benchmark.
func (r *Report) AddUpsertScan(s UpsertScan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upsert.scans = append(r.upsert.scans, s)
}

// AddUpsertCompaction records a compaction of an upsert benchmark table.
func (r *Report) AddUpsertCompaction(c UpsertCompaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upsert.compactions = append(r.upsert.compactions, c)
}

// upsertTarget is how many times faster than iceberg-go floe's median
// upsert batch should be.
const upsertTarget = 3.0

func (r *Report) writeUpsert(w io.Writer) {
	u := &r.upsert
	s := u.spec
	fmt.Fprintf(w, "\n### Upsert: %d rows keyed by id, %d batches of %d changes (80%% updates, 10%% inserts, 10%% deletes)\n\n", s.Rows, s.Batches, s.Changes)
	fmt.Fprintln(w, "| contender | format-version | batches | median ms | p90 ms | mean ms | changes/s (median) | run wall s | run CPU s | delete files at the end | data files | snapshots |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
	medians := map[string]time.Duration{}
	for _, run := range u.runs {
		l := run.Latency()
		med := l.Median(0, len(l.Times))
		medians[fmt.Sprintf("%s v%d", run.Contender, run.FormatVersion)] = med
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %.0f | %.2f | %.2f | %s | %d | %d |\n", run.Contender, run.FormatVersion, len(l.Times),
			ms(med), ms(l.Percentile(0.9)), ms(mean(l.Times)), float64(run.Changes)/med.Seconds(), run.Wall.Seconds(), run.CPU.Seconds(),
			run.Files.DeleteKinds(), run.Files.Data, run.Files.Snapshots)
	}
	fmt.Fprintf(w, "\n| format-version | iceberg-go median / floe median | target ≥ %.0f× |\n| ---: | ---: | --- |\n", upsertTarget)
	for _, v := range []int{3, 2} {
		f, okF := medians[fmt.Sprintf("floe v%d", v)]
		g, okG := medians[fmt.Sprintf("iceberg-go v%d", v)]
		if !okF || !okG || f <= 0 {
			continue
		}
		met := "met"
		if float64(g)/float64(f) < upsertTarget {
			met = "not met"
		}
		fmt.Fprintf(w, "| %d | %.2f× | %s |\n", v, float64(g)/float64(f), met)
	}
	for _, a := range u.appends {
		l := a.Latency()
		med := l.Median(0, len(l.Times))
		fmt.Fprintf(w, "\nfloe append of the same %d change files (mode append, one batch per file, new table): median %s ms, p90 %s ms per batch, %.0f rows/s (median batch).",
			len(l.Times), ms(med), ms(l.Percentile(0.9)), float64(a.Changes)/med.Seconds())
		for _, run := range u.runs {
			if run.Contender != "floe" {
				continue
			}
			up := run.Latency().Median(0, len(run.Times))
			fmt.Fprintf(w, " floe upsert v%d: %.0f changes/s, %.2f× the append's rate.", run.FormatVersion, float64(run.Changes)/up.Seconds(), med.Seconds()/up.Seconds())
		}
		fmt.Fprintln(w)
	}
	if len(u.compactions) > 0 {
		fmt.Fprintln(w, "\n| compaction (maintenance.RewriteDataFiles, defaults) | wall s | CPU s | data files rewritten | data files added | delete files removed |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
		for _, c := range u.compactions {
			fmt.Fprintf(w, "| %s | %.2f | %.2f | %d | %d | %d |\n", c.Table, c.Wall.Seconds(), c.CPU.Seconds(), c.Result.RewrittenDataFiles, c.Result.AddedDataFiles, c.Result.RemovedDeleteFiles)
		}
	}
	if len(u.scans) > 0 {
		fmt.Fprintln(w, "\n| full scan (scan.Table, every column, count + checksum) | rows | data files | delete files | wall ms | CPU ms | rows/s (wall) |")
		fmt.Fprintln(w, "| --- | ---: | ---: | --- | ---: | ---: | ---: |")
		for _, sc := range u.scans {
			fmt.Fprintf(w, "| %s | %d | %d | %s | %.0f | %.0f | %s |\n", sc.Table, sc.Rows, sc.Files.Data, sc.Files.DeleteKinds(),
				msf(sc.Wall), msf(sc.CPU), millions(float64(sc.Rows)/sc.Wall.Seconds()))
		}
	}
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// kafkaRuns are the Kafka benchmark's runs, by contender.
type kafkaRuns struct {
	spec    KafkaSpec
	bytes   int64
	order   []string
	results map[string][]KafkaResult
}

// AddKafka records one contender's read of topic k.
func (r *Report) AddKafka(k *KafkaTopic, res KafkaResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kr := &r.kafka
	if kr.results == nil {
		kr.results = map[string][]KafkaResult{}
	}
	if _, ok := kr.results[res.Contender]; !ok {
		kr.order = append(kr.order, res.Contender)
	}
	kr.spec, kr.bytes = k.KafkaSpec, k.Bytes
	kr.results[res.Contender] = append(kr.results[res.Contender], res)
}

// kafkaTarget is the least multiple of the arrow-go consumer's messages
// per CPU-second floe should reach: the consumer decodes the same JSON
// into Arrow records, the part of floe's work a Go program cannot skip.
const kafkaTarget = 1.5

// publishedKafka are other tools' Kafka-to-Iceberg rates as published,
// not measured here: other machines, clusters and message shapes.
var publishedKafka = []struct {
	name string
	rate float64
}{
	{"Kafka Connect Iceberg sink", 85_000},
	{"Redpanda Connect", 61_000},
}

func (r *Report) writeKafka(w io.Writer) {
	kr := &r.kafka
	type kafkaSummary struct {
		runs                int
		wall, cpu, mps, mpc float64
		mb, files           float64
		minMsgs, maxMsgs    int64
	}
	sums := map[string]kafkaSummary{}
	runs := 0
	for _, name := range kr.order {
		rs := kr.results[name]
		s := kafkaSummary{runs: len(rs), minMsgs: rs[0].Messages, maxMsgs: rs[0].Messages}
		var wall, cpu, mps, mpc, mb, files []float64
		for _, x := range rs {
			wall = append(wall, x.Wall.Seconds())
			cpu = append(cpu, x.CPU.Seconds())
			mps = append(mps, x.MessagesPerSec())
			mpc = append(mpc, x.MessagesPerCPUSec())
			mb = append(mb, float64(x.Bytes)/1e6)
			files = append(files, float64(x.Files))
			s.minMsgs, s.maxMsgs = min(s.minMsgs, x.Messages), max(s.maxMsgs, x.Messages)
		}
		s.wall, s.cpu, s.mps, s.mpc, s.mb, s.files = median(wall), median(cpu), median(mps), median(mpc), median(mb), median(files)
		sums[name] = s
		runs = max(runs, s.runs)
	}
	fmt.Fprintf(w, "\n### Kafka ingest: %d JSON messages (%.0f bytes each on average) in %d partitions (median of %d runs)\n\n",
		kr.spec.Messages, float64(kr.bytes)/float64(kr.spec.Messages), kr.spec.Partitions, runs)
	fmt.Fprintln(w, "| contender | runs | wall s | CPU s | messages/s (wall) | messages per CPU-s | MB of values | data files | messages counted |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, name := range kr.order {
		s := sums[name]
		counted := fmt.Sprint(s.minMsgs)
		if s.minMsgs != s.maxMsgs {
			counted = fmt.Sprintf("%d–%d", s.minMsgs, s.maxMsgs)
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.0f | %.0f | %.1f | %g | %s |\n",
			name, s.runs, s.wall, s.cpu, s.mps, s.mpc, s.mb, s.files, counted)
	}
	bare, hasBare := sums["franz-go consume"]
	arrowc, hasArrow := sums["arrow-go consumer"]
	if hasBare || hasArrow {
		fmt.Fprintf(w, "\n| ratio | messages/s (wall) | messages per CPU-s | target ≥ %.1f× the arrow-go consumer's messages per CPU-s |\n| --- | ---: | ---: | --- |\n", kafkaTarget)
		for _, name := range kr.order {
			if !strings.HasPrefix(name, "floe") {
				continue
			}
			f := sums[name]
			if hasBare {
				fmt.Fprintf(w, "| %s / franz-go consume | %.2f× | %.2f× | |\n", name, f.mps/bare.mps, f.mpc/bare.mpc)
			}
			if hasArrow {
				fmt.Fprintf(w, "| %s / arrow-go consumer | %.2f× | %.2f× | %s |\n", name, f.mps/arrowc.mps, f.mpc/arrowc.mpc, metOrNot(f.mpc/arrowc.mpc >= kafkaTarget))
			}
		}
	}
	fmt.Fprintln(w, "\nPublished figures quoted in the project's reference notes, not measured here (other machines, clusters and messages):")
	for _, p := range publishedKafka {
		fmt.Fprintf(w, "- %s: ~%.0fk messages/s (published)\n", p.name, p.rate/1e3)
	}
}
