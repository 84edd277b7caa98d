package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go/table"

	floe "github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// The small-batches benchmark: the BatchesFiles files of events10 as JSON
// lines (10M rows, 13.9 MB a file), streamed in one batch and in batches
// of at most SmallBatchBytes, which is how a processing-time stream
// catching up reads them.
const (
	BatchesFiles    = 100
	SmallBatchBytes = 22_000_000
	// batchesTarget is the most the small batches' wall may be of the one
	// batch's.
	batchesTarget = 1.3
)

// BatchesRun is one run of the small-batches benchmark.
type BatchesRun struct {
	Columns string // "declared" or "inferred"
	Size    string // "one batch" or "22 MB batches"
	ProcCost
	Batches int // committed, as the checkpoint records them
	Files   int
	RowsSum
}

// BatchesContender is one way of streaming the benchmark's files: with
// the events' columns declared or inferred, in one batch or small ones.
type BatchesContender struct {
	Declared bool
	MaxBytes int64 // 0: one batch
}

// Name is how the contender appears in the report.
func (c BatchesContender) Name() string { return c.columns() + ", " + c.batches() }

func (c BatchesContender) columns() string {
	if c.Declared {
		return "declared"
	}
	return "inferred"
}

func (c BatchesContender) batches() string {
	if c.MaxBytes == 0 {
		return "one batch"
	}
	if c.MaxBytes%1_000_000 == 0 {
		return fmt.Sprintf("%d MB batches", c.MaxBytes/1_000_000)
	}
	return fmt.Sprintf("%d-byte batches", c.MaxBytes)
}

// BatchesContenders are the four ways: declared and inferred columns, each
// in one batch and in batches of maxBytes.
func BatchesContenders(maxBytes int64) []BatchesContender {
	return []BatchesContender{{true, 0}, {true, maxBytes}, {false, 0}, {false, maxBytes}}
}

// Batches streams the JSON lines under src with the binary into db.events
// of a new warehouse under work, available-now, as c says, with automatic
// compaction off, and reads back the table's rows and files and the
// batches committed.
func (f FloeProcess) Batches(ctx context.Context, c BatchesContender, src, work string) (BatchesRun, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "source:\n  type: files\n  path: %s\n  format: json\n", src)
	if c.MaxBytes > 0 {
		fmt.Fprintf(&b, "  max-bytes-per-trigger: %d\n", c.MaxBytes)
	}
	if c.Declared {
		b.WriteString("  schema:\n")
		for _, col := range [][2]string{{"id", "long"}, {"ts", "timestamp"}, {"category", "string"}, {"v", "double"}, {"payload", "string"}} {
			fmt.Fprintf(&b, "    - {name: %s, type: %s}\n", col[0], col[1])
		}
	}
	// The 50th commit would compact the small files, rewriting the
	// table: BenchmarkCompaction's work, not the batches'.
	b.WriteString("maintenance:\n  rewrite-data-files:\n    enabled: false\n")
	run := BatchesRun{Columns: c.columns(), Size: c.batches()}
	var err error
	if run.ProcCost, err = f.run(ctx, work, b.String(), ""); err != nil {
		return run, err
	}
	commits, err := os.ReadDir(filepath.Join(work, "checkpoint", "commits"))
	if err != nil {
		return run, err
	}
	run.Batches = len(commits)
	cat, err := floe.OpenCatalog(ctx, config.Catalog{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return run, err
	}
	defer closeCatalog(cat)
	paths, _, err := dataFiles(ctx, cat, table.Identifier{"db", "events"})
	if err != nil {
		return run, err
	}
	run.Files = len(paths)
	run.Rows, run.Sum, err = checksumFiles(ctx, paths)
	return run, err
}
