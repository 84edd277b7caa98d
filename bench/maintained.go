package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/faults"
)

// Commit2000 is 2,000 files of 100 rows: the stream of the "week three"
// scenario, one snapshot per batch.
var Commit2000 = Spec{Name: "commit2000", Files: 2000, RowsPerFile: 100, Seed: 2000}

// Maintained is a run of one batch per input file, with the commit phase
// of each batch (Latency, as the progress reports it, in whole
// milliseconds), the table commit alone timed to the microsecond, and the
// most snapshots the table held after a commit.
type Maintained struct {
	Latency
	TableCommit   Latency
	PeakSnapshots int
	Wall          time.Duration
}

// MaintainedLatency streams ds one file per batch, with the default
// maintenance policy when maintain is set and with none otherwise.
func MaintainedLatency(ctx context.Context, ds Dataset, work string, maintain bool) (Maintained, error) {
	cfg, err := floeConfig(ds, work, 1)
	if err != nil {
		return Maintained{}, err
	}
	m := Maintained{Latency: Latency{Name: "no maintenance"}}
	if maintain {
		cfg.Maintenance.Enabled = nil // the default policy
		cfg.SetDefaults()
		m.Name = "default maintenance policy"
	}
	cat, err := floe.OpenCatalog(ctx, cfg.Catalog)
	if err != nil {
		return m, err
	}
	defer closeCatalog(cat)
	// The table commit runs between the for-each-batch hook and the
	// after-commit hook; the progress's commit phase also holds the
	// checkpoint write, but only in whole milliseconds.
	var began time.Time
	forEach := func(context.Context, int64, []floe.DataFile) error {
		began = time.Now()
		return nil
	}
	afterCommit := func(string, int64, int64) error {
		m.TableCommit.Times = append(m.TableCommit.Times, time.Since(began))
		return nil
	}
	faults.AfterTableCommit = afterCommit
	defer func() { faults.AfterTableCommit = nil }()
	p, err := floe.Open(ctx, cfg, floe.Options{Catalog: cat, Logger: quiet, ForEachBatch: forEach, OnProgress: func(pr floe.Progress) {
		m.Times = append(m.Times, time.Duration(pr.DurationMs.Commit)*time.Millisecond)
		if tbl, err := cat.LoadTable(ctx, benchTable); err == nil {
			m.PeakSnapshots = max(m.PeakSnapshots, len(tbl.Metadata().Snapshots()))
		}
	}})
	if err != nil {
		return m, err
	}
	t0 := time.Now()
	_, err = p.Run(ctx)
	m.Wall = time.Since(t0)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return m, fmt.Errorf("floe: %w", err)
	}
	err = countTable(ctx, cat, &m.Latency)
	return m, err
}
