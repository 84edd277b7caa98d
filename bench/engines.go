package bench

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-io/floe/internal/fixture"
)

// Side by side with the real engines: floe's binary and Spark Structured
// Streaming (spark-submit, local mode, Iceberg's Spark runtime) each run as
// a process of its own over the same input into the same table shape, and
// each process is measured whole: wall time, CPU time (user + system of
// the process and every process it waited for) and peak resident set.

// ProcCost is what one measured process cost.
type ProcCost struct {
	Wall    time.Duration
	CPU     time.Duration
	PeakRSS int64 // bytes
}

// runMeasured runs cmd to completion and returns its cost; a failure
// carries the tail of what it printed.
func runMeasured(cmd *exec.Cmd) (ProcCost, string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	name := strings.Join(cmd.Args[:min(3, len(cmd.Args))], " ")
	rss := peakRSSOf(cmd)
	t0 := time.Now()
	err := cmd.Run()
	c := costOf(cmd.ProcessState, time.Since(t0))
	if r := rss(); r > 0 {
		c.PeakRSS = r
	}
	if err != nil {
		return c, out.String(), fmt.Errorf("%s: %v\n%s", name, err, lastBytes(out.String(), 6000))
	}
	return c, out.String(), nil
}

// costOf is what an ended process cost: wall, and from the kernel's
// accounting its CPU (with what it waited for) and peak resident set,
// which is the larger of the process's and this one's (see peakRSSOf).
func costOf(ps *os.ProcessState, wall time.Duration) ProcCost {
	c := ProcCost{Wall: wall}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		c.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		c.PeakRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return c
}

// timeBin is GNU time, which peakRSSOf runs the measured process under.
const timeBin = "/usr/bin/time"

// peakRSSOf makes cmd run under GNU time, which forks it from a small
// process of its own, and returns what reads its peak resident set once
// it has run (0 without GNU time, or when time did not say). The kernel's
// figure for a process this one starts directly is an upper bound only:
// Linux keeps a process's peak across exec, so the child reports the
// benchmark process's own peak when that is larger. time's CPU is the
// measured process's with time's own millisecond.
func peakRSSOf(cmd *exec.Cmd) func() int64 {
	if _, err := os.Stat(timeBin); err != nil || cmd.Err != nil {
		return func() int64 { return 0 }
	}
	f, err := os.CreateTemp("", "floe-bench-rss-")
	if err != nil {
		return func() int64 { return 0 }
	}
	_ = f.Close()
	cmd.Args = append([]string{timeBin, "-q", "-f", "%M", "-o", f.Name(), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = timeBin
	return func() int64 {
		defer os.Remove(f.Name())
		b, err := os.ReadFile(f.Name())
		if err != nil {
			return 0
		}
		lines := strings.Fields(string(b))
		if len(lines) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			return 0
		}
		return kb * 1024
	}
}

// EngineRun is one contender's measured run of one input.
type EngineRun struct {
	Contender string
	Input     string
	Rows      int64
	ProcCost
}

// RowsPerCPUSec is the run's throughput per CPU-second.
func (r EngineRun) RowsPerCPUSec() float64 { return float64(r.Rows) / r.CPU.Seconds() }

// SparkEngine runs the applications of bench/spark with spark-submit.
type SparkEngine struct {
	eng *fixture.Engines
	dir string
}

// NewSparkEngine finds the installed engines (interop/engines/install.sh)
// and the bench's Spark application.
func NewSparkEngine() (*SparkEngine, error) {
	eng, why := fixture.FindEngines()
	if why != "" {
		return nil, fmt.Errorf("%s: run interop/engines/install.sh", why)
	}
	root, err := fixture.ModuleRoot()
	if err != nil {
		return nil, err
	}
	return &SparkEngine{eng: eng, dir: filepath.Join(root, "bench", "spark")}, nil
}

// command is spark-submit running app (a file of bench/spark) with args.
func (s *SparkEngine) command(ctx context.Context, app string, args ...string) *exec.Cmd {
	full := []string{"--master", "local[2]", "--conf", "spark.ui.enabled=false",
		"--driver-memory", sparkDriverMemory(), "--jars", strings.Join(s.eng.Jars("spark"), ","), filepath.Join(s.dir, app)}
	cmd := exec.CommandContext(ctx, s.eng.SparkSubmit(), append(full, args...)...)
	cmd.Env = append(os.Environ(), "PYSPARK_PYTHON="+s.eng.Python(), "PYSPARK_DRIVER_PYTHON="+s.eng.Python(), "TZ=UTC")
	return cmd
}

// sparkDriverMemory is Spark's heap: spark-submit's default (1g) unless
// FLOE_BENCH_SPARK_MEMORY says otherwise.
func sparkDriverMemory() string {
	if m := os.Getenv("FLOE_BENCH_SPARK_MEMORY"); m != "" {
		return m
	}
	return "1g"
}

// Ingest streams src (format parquet, csv or json) into db.events of a new
// warehouse under work with availableNow.
func (s *SparkEngine) Ingest(ctx context.Context, format, src, work string) (ProcCost, error) {
	wh := filepath.Join(work, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return ProcCost{}, err
	}
	c, _, err := runMeasured(s.command(ctx, "ingest.py", "ingest", format, src, wh, filepath.Join(work, "checkpoint")))
	return c, err
}

// UpsertLoad creates db.t of a new warehouse under work from the base
// files of an upsert dataset.
func (s *SparkEngine) UpsertLoad(ctx context.Context, base, work string) (ProcCost, error) {
	wh := filepath.Join(work, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return ProcCost{}, err
	}
	c, _, err := runMeasured(s.command(ctx, "upsert.py", "load", base, wh))
	return c, err
}

// UpsertMerge streams the change files into db.t, one a batch, with
// foreachBatch and MERGE INTO.
func (s *SparkEngine) UpsertMerge(ctx context.Context, changes, work string) (ProcCost, error) {
	c, _, err := runMeasured(s.command(ctx, "upsert.py", "merge", changes, filepath.Join(work, "warehouse"), filepath.Join(work, "checkpoint-merge")))
	return c, err
}

// Kafka streams topic into db.events of a new warehouse under work with
// Spark's Kafka source, availableNow.
func (s *SparkEngine) Kafka(ctx context.Context, bootstrap, topic, work string) (ProcCost, error) {
	wh := filepath.Join(work, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return ProcCost{}, err
	}
	c, _, err := runMeasured(s.command(ctx, "kafka.py", bootstrap, topic, wh, filepath.Join(work, "checkpoint")))
	return c, err
}

// TableSum is a table's row count, its distinct ids and the sum of Spark's
// hash of its rows.
type TableSum struct {
	Rows int64 `json:"rows"`
	IDs  int64 `json:"ids"`
	Hash int64 `json:"hash"`
}

// Verify reads tables of the warehouse with Spark.
func (s *SparkEngine) Verify(ctx context.Context, warehouse string, tables ...string) (map[string]TableSum, error) {
	_, out, err := runMeasured(s.command(ctx, "ingest.py", append([]string{"verify", warehouse}, tables...)...))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VERIFY "); ok {
			var got map[string]TableSum
			if err := json.Unmarshal([]byte(rest), &got); err != nil {
				return nil, err
			}
			return got, nil
		}
	}
	return nil, fmt.Errorf("spark verify printed no result:\n%s", out)
}

// FloeProcess runs the floe binary on a pipeline file.
type FloeProcess struct {
	Bin string
	Env []string // added to the benchmark's environment, e.g. GOMAXPROCS=1
}

// command is the binary with args, in f's environment.
func (f FloeProcess) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, f.Bin, args...)
	if len(f.Env) > 0 {
		cmd.Env = append(os.Environ(), f.Env...)
	}
	return cmd
}

// Ingest streams src into db.events of a new warehouse under work with
// available-now, with the table properties of the Spark side; copy false
// turns the copy of Parquet column chunks off.
func (f FloeProcess) Ingest(ctx context.Context, format, src, work string, copyChunks bool) (ProcCost, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "source:\n  type: files\n  path: %s\n  format: %s\n", src, format)
	if format != "parquet" {
		b.WriteString("  schema:\n")
		for _, c := range [][2]string{{"id", "long"}, {"ts", "timestamp"}, {"category", "string"}, {"v", "double"}, {"payload", "string"}} {
			fmt.Fprintf(&b, "    - {name: %s, type: %s}\n", c[0], c[1])
		}
	}
	props := ""
	if !copyChunks {
		props = "    floe.write.copy-parquet-chunks: \"false\"\n"
	}
	return f.run(ctx, work, b.String(), props)
}

// run runs a pipeline of source (its YAML) into db.events of a new
// warehouse under work, available-now, with the table properties of the
// Spark side and the extra ones given (YAML lines).
func (f FloeProcess) run(ctx context.Context, work, source, props string) (ProcCost, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return ProcCost{}, err
	}
	yaml := source + "sink:\n  table: db.events\n  table-properties:\n    write.parquet.compression-codec: zstd\n    write.parquet.compression-level: \"1\"\n" + props +
		fmt.Sprintf("catalog:\n  warehouse: %s\ntrigger: available-now\ncheckpoint: %s\n", filepath.Join(work, "warehouse"), filepath.Join(work, "checkpoint"))
	p := filepath.Join(work, "pipeline.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		return ProcCost{}, err
	}
	c, _, err := runMeasured(f.command(ctx, "run", p))
	return c, err
}

// Kafka streams topic into db.events of a new warehouse under work, the
// JSON messages parsed into the columns of the Spark side, available-now.
func (f FloeProcess) Kafka(ctx context.Context, bootstrap, topic, work string) (ProcCost, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "source:\n  type: kafka\n  format: json\n  options:\n    kafka.bootstrap.servers: %q\n    subscribe: %s\n  schema:\n", bootstrap, topic)
	for _, c := range kafkaSchema {
		fmt.Fprintf(&b, "    - {name: %s, type: %s}\n", c.Name, c.Type)
	}
	return f.run(ctx, work, b.String(), "")
}

// UpsertLoad appends the base files of an upsert dataset to db.t (format
// v2, key id) of a new warehouse under work.
func (f FloeProcess) UpsertLoad(ctx context.Context, base, work string) (ProcCost, error) {
	return f.stream(ctx, work, "--source", base, "--format", "parquet", "--table", "db.t", "--format-version", "2",
		"--identifier-fields", "id", "--checkpoint", filepath.Join(work, "checkpoint-load"))
}

// UpsertMerge upserts the change files into db.t, one a batch.
func (f FloeProcess) UpsertMerge(ctx context.Context, changes, work string) (ProcCost, error) {
	return f.stream(ctx, work, "--source", changes, "--format", "parquet", "--table", "db.t", "--mode", "upsert",
		"--identifier-fields", "id", "--op-column", "op", "--max-files-per-trigger", "1",
		"--checkpoint", filepath.Join(work, "checkpoint-merge"))
}

func (f FloeProcess) stream(ctx context.Context, work string, args ...string) (ProcCost, error) {
	full := append([]string{"stream", "--warehouse", filepath.Join(work, "warehouse"),
		"-p", "table-default.write.parquet.compression-codec=zstd", "-p", "table-default.write.parquet.compression-level=1"}, args...)
	c, _, err := runMeasured(f.command(ctx, full...))
	return c, err
}

// EnsureText writes the first files of ds as CSV (with a header) or JSON
// lines, once, under the data root, and returns their directory and rows.
func EnsureText(ds Dataset, format string, files int) (string, int64, error) {
	return ensureDerived(ds, format, files, textWriter(format))
}

// textWriter writes files as CSV or JSON lines into a directory.
func textWriter(format string) func(dir string, src []string) (int64, error) {
	return func(dir string, src []string) (int64, error) {
		var rows int64
		for i, in := range src {
			ext := map[string]string{"csv": ".csv", "json": ".jsonl"}[format]
			n, err := writeText(in, filepath.Join(dir, fmt.Sprintf("part-%05d%s", i, ext)), format)
			if err != nil {
				return 0, err
			}
			rows += n
		}
		return rows, nil
	}
}

// writeText writes one Parquet file of the dataset's schema as text.
func writeText(in, out, format string) (int64, error) {
	rdr, err := file.OpenParquetFile(in, false)
	if err != nil {
		return 0, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	f, err := os.Create(out + ".tmp")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	cw := csv.NewWriter(w)
	if format == "csv" {
		if err := cw.Write([]string{"id", "ts", "category", "v", "payload"}); err != nil {
			return 0, err
		}
	}
	var n int64
	for rr.Next() {
		rec := rr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		tss := rec.Column(1).(*array.Timestamp)
		cats := rec.Column(2).(*array.String)
		vs := rec.Column(3).(*array.Float64)
		pays := rec.Column(4).(*array.String)
		for i := range int(rec.NumRows()) {
			ts := time.UnixMicro(int64(tss.Value(i))).UTC().Format("2006-01-02T15:04:05.000000")
			v := strconv.FormatFloat(vs.Value(i), 'g', -1, 64)
			if format == "csv" {
				err = cw.Write([]string{strconv.FormatInt(ids.Value(i), 10), ts, cats.Value(i), v, pays.Value(i)})
			} else {
				_, err = fmt.Fprintf(w, `{"id":%d,"ts":%q,"category":%q,"v":%s,"payload":%q}`+"\n", ids.Value(i), ts, cats.Value(i), v, pays.Value(i))
			}
			if err != nil {
				return 0, err
			}
		}
		n += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return 0, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return n, os.Rename(out+".tmp", out)
}
