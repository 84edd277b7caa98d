package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	_ "github.com/floe-io/floe/source/iceberg" // registers the "iceberg" source
)

// SnapshotTable ingests ds into the bench table under work with one
// snapshot per input file, the table a streaming read of many small
// appends starts from. It returns the warehouse.
func SnapshotTable(ctx context.Context, ds Dataset, work string) (string, error) {
	cfg, err := floeConfig(ds, work, 1)
	if err != nil {
		return "", err
	}
	cat, _, err := runFloe(ctx, cfg, nil)
	if err != nil {
		return "", fmt.Errorf("floe: %w", err)
	}
	closeCatalog(cat)
	return cfg.Catalog.Warehouse, nil
}

// Planning is one streaming read of the bench table: each batch's
// planning time (DurationMs.LatestOffset: finding the files of the next
// batch, the time between the previous batch's commit and this batch's
// writes), and the run's wall time.
type Planning struct {
	Name    string
	Times   []time.Duration
	Rows    int64
	Batches int
	Wall    time.Duration
}

// StreamPlanning streams the bench table of warehouse into the new table
// out, filesPerBatch files per batch, with asynchronous planning on or off.
func StreamPlanning(ctx context.Context, warehouse, work, out string, async bool, filesPerBatch int) (Planning, error) {
	cfg := &config.Pipeline{}
	cfg.SetDefaults()
	cfg.Trigger = config.Trigger{Kind: config.TriggerAvailableNow}
	cfg.Catalog.Warehouse = warehouse
	cfg.Checkpoint = filepath.Join(work, "checkpoint")
	cfg.Source = config.Source{Type: "iceberg", Table: strings.Join(benchTable, "."), Options: map[string]string{
		"streaming-max-files-per-micro-batch": strconv.Itoa(filesPerBatch),
		"async-micro-batch-planning-enabled":  strconv.FormatBool(async),
	}}
	pl := Planning{Name: "synchronous planning"}
	if async {
		pl.Name = "async-micro-batch-planning-enabled"
	}
	cfg.Sink.Table = out
	if err := cfg.Validate(); err != nil {
		return pl, err
	}
	t0 := time.Now()
	cat, sum, err := runFloe(ctx, cfg, func(p floe.Progress) {
		pl.Times = append(pl.Times, time.Duration(p.DurationMs.LatestOffset)*time.Millisecond)
	})
	pl.Wall = time.Since(t0)
	if err != nil {
		return pl, fmt.Errorf("floe: %w", err)
	}
	closeCatalog(cat)
	pl.Rows, pl.Batches = sum.Rows, sum.Batches
	return pl, nil
}

// Mean is the mean planning time.
func (p Planning) Mean() time.Duration {
	if len(p.Times) == 0 {
		return 0
	}
	var s time.Duration
	for _, t := range p.Times {
		s += t
	}
	return s / time.Duration(len(p.Times))
}

// Median is the median planning time.
func (p Planning) Median() time.Duration { return Latency{Times: p.Times}.Median(0, len(p.Times)) }
