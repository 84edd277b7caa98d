package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
)

// StreamRun is one contender's processing-time stream of one file a batch
// with its maintenance: the process's cost, and per batch the whole
// batch (triggerExecution) and its table commit.
type StreamRun struct {
	Contender string
	ProcCost
	Batch  Latency
	Commit Latency
	// Maintenance is the time the maintenance procedures took and how many
	// ran (Spark's, run by its driver beside the stream); floe's runs
	// inside its batches.
	Maintenance      time.Duration
	MaintenanceCalls int
	// Snapshots and Files are what the table holds at the end: snapshots
	// retained and data files in the current snapshot.
	Snapshots, Files int
}

// ReadShape fills Snapshots and Files from the table db.events of the
// warehouse under work (floe's SQLite catalog, which Spark's JDBC
// catalog shares).
func (r *StreamRun) ReadShape(ctx context.Context, work string) error {
	cat, err := floe.OpenCatalog(ctx, compactionCatalog(filepath.Join(work, "warehouse")))
	if err != nil {
		return err
	}
	defer closeCatalog(cat)
	ident := table.Identifier{"db", "events"}
	res, err := tableResultOf(ctx, r.Contender, cat, ident, Cost{})
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	r.Files, r.Snapshots = res.Files, len(tbl.Metadata().Snapshots())
	return nil
}

// streamInterval is both contenders' processing-time trigger: a batch as
// soon as the one before has ended (floe needs an interval above zero).
const streamInterval = "1ms"

// Stream streams src into db.events of a new warehouse under work, one
// file a batch with a processing-time trigger and floe's default
// maintenance, and stops it with SIGTERM once batches batches committed.
// The batch time is the progress's triggerExecution, the commit time its
// commit phase (the table commit and the commits-log entry).
func (f FloeProcess) Stream(ctx context.Context, src, work string, batches int) (StreamRun, error) {
	cmd := exec.CommandContext(ctx, f.Bin, "stream", "--warehouse", filepath.Join(work, "warehouse"),
		"-p", "table-default.write.parquet.compression-codec=zstd", "-p", "table-default.write.parquet.compression-level=1",
		"--source", src, "--format", "parquet", "--table", "db.events", "--max-files-per-trigger", "1",
		"--trigger", "processing-time="+streamInterval, "--progress", "json", "--checkpoint", filepath.Join(work, "checkpoint"))
	run := StreamRun{Contender: "floe", Batch: Latency{Name: "batch"}, Commit: Latency{Name: "commit"}}
	var tail strings.Builder
	onLine := func(line string) bool {
		var p struct {
			BatchID      int64 `json:"batchId"`
			NumInputRows int64 `json:"numInputRows"`
			DurationMs   struct {
				Commit           int64 `json:"commit"`
				TriggerExecution int64 `json:"triggerExecution"`
			} `json:"durationMs"`
		}
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &p) != nil || p.NumInputRows == 0 {
			tail.WriteString(line + "\n")
			return false
		}
		run.Batch.Times = append(run.Batch.Times, time.Duration(p.DurationMs.TriggerExecution)*time.Millisecond)
		run.Commit.Times = append(run.Commit.Times, time.Duration(p.DurationMs.Commit)*time.Millisecond)
		return len(run.Batch.Times) == batches
	}
	c, err := runLines(cmd, onLine)
	run.ProcCost = c
	if err != nil {
		return run, fmt.Errorf("floe stream: %v\n%s", err, lastBytes(tail.String(), 6000))
	}
	if len(run.Batch.Times) < batches {
		return run, fmt.Errorf("floe stream ended after %d batches, want %d:\n%s", len(run.Batch.Times), batches, lastBytes(tail.String(), 6000))
	}
	return run, nil
}

// Stream runs bench/spark/stream.py: the same stream by Spark Structured
// Streaming with Iceberg's maintenance procedures run beside it on floe's
// default cadence. The batch time is Spark's triggerExecution, the commit
// time Iceberg's own timing of the streaming append's commit.
func (s *SparkEngine) Stream(ctx context.Context, src, work string, batches int) (StreamRun, error) {
	wh := filepath.Join(work, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return StreamRun{}, err
	}
	cmd := s.command(ctx, "stream.py", src, wh, filepath.Join(work, "checkpoint"), strconv.Itoa(batches))
	// Warnings only, and the line of Iceberg's that times each commit.
	cmd.Args = append(cmd.Args[:1], append([]string{"--driver-java-options",
		"-Dlog4j2.configurationFile=file:" + filepath.Join(s.dir, "log4j2-stream.properties")}, cmd.Args[1:]...)...)
	run := StreamRun{Contender: "spark", Batch: Latency{Name: "batch"}, Commit: Latency{Name: "commit"}}
	var tail strings.Builder
	appending := false
	var perr error
	onLine := func(line string) bool {
		switch {
		case strings.Contains(line, "Committing streaming append"):
			appending = true
		case appending && strings.Contains(line, "Committed in "):
			appending = false
			var ms int64
			if _, err := fmt.Sscanf(line[strings.Index(line, "Committed in ")+len("Committed in "):], "%d ms", &ms); err == nil {
				run.Commit.Times = append(run.Commit.Times, time.Duration(ms)*time.Millisecond)
			}
		case strings.HasPrefix(line, "PROGRESS "):
			var ps []struct {
				DurationMs struct {
					TriggerExecution int64 `json:"triggerExecution"`
				} `json:"durationMs"`
			}
			if perr = json.Unmarshal([]byte(line[len("PROGRESS "):]), &ps); perr == nil {
				for _, p := range ps {
					run.Batch.Times = append(run.Batch.Times, time.Duration(p.DurationMs.TriggerExecution)*time.Millisecond)
				}
			}
		case strings.HasPrefix(line, "MAINTENANCE "):
			var ms []struct {
				Seconds float64 `json:"seconds"`
			}
			if perr = json.Unmarshal([]byte(line[len("MAINTENANCE "):]), &ms); perr == nil {
				for _, m := range ms {
					run.Maintenance += time.Duration(m.Seconds * float64(time.Second))
				}
				run.MaintenanceCalls = len(ms)
			}
		default:
			tail.WriteString(line + "\n")
		}
		return false
	}
	c, err := runLines(cmd, onLine)
	run.ProcCost = c
	if err == nil {
		err = perr
	}
	if err != nil {
		return run, fmt.Errorf("spark stream: %v\n%s", err, lastBytes(tail.String(), 6000))
	}
	// The run stops between polls: a batch or two past the last wanted.
	if len(run.Batch.Times) < batches || len(run.Commit.Times) < batches {
		return run, fmt.Errorf("spark stream: %d batches and %d commits, want %d:\n%s", len(run.Batch.Times), len(run.Commit.Times), batches, lastBytes(tail.String(), 6000))
	}
	run.Batch.Times, run.Commit.Times = run.Batch.Times[:batches], run.Commit.Times[:batches]
	return run, nil
}

// runLines runs cmd to completion, handing each line of its output
// (stdout and stderr) to onLine as it comes, and returns its cost. Once
// onLine answers true the process gets a SIGTERM: floe's graceful stop.
func runLines(cmd *exec.Cmd, onLine func(string) bool) (ProcCost, error) {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return ProcCost{}, err
	}
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		stopped := false
		for sc.Scan() {
			if onLine(sc.Text()) && !stopped {
				stopped = true
				cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Wait()
	c := costOf(cmd.ProcessState, time.Since(t0))
	pw.Close()
	<-done
	return c, err
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
