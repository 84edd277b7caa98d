package scan

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// Plan is what a scan would read, against what the snapshot holds:
// how much the filter prunes, and what is left to check on rows.
type Plan struct {
	SnapshotID     int64  `json:"snapshot_id"`
	FilesPlanned   int    `json:"files_planned"`
	FilesTotal     int    `json:"files_total"`
	BytesPlanned   int64  `json:"bytes_planned"`
	BytesTotal     int64  `json:"bytes_total"`
	PushedFilter   string `json:"pushed_filter"`
	ResidualFilter string `json:"residual_filter"`
}

// Explain plans the scan the options describe without reading data.
func Explain(ctx context.Context, tbl *table.Table, o Options) (Plan, error) {
	a, err := o.at(tbl)
	if err != nil {
		return Plan{}, err
	}
	if err := o.check(tbl, a.schema(tbl)); err != nil {
		return Plan{}, err
	}
	bound, err := o.bind(ctx, tbl, a)
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	if s := a.snapshot(tbl); s != nil {
		plan.SnapshotID = s.SnapshotID
	} else {
		return plan, nil
	}
	size := func(tasks []table.FileScanTask) (int, int64) {
		tasks = WholeFiles(tasks)
		var bytes int64
		for _, t := range tasks {
			bytes += t.File.FileSizeBytes()
		}
		return len(tasks), bytes
	}
	sc, err := a.scan(tbl, o.scanOptions(nil, nil)...)
	if err != nil {
		return plan, err
	}
	all, err := sc.PlanFiles(ctx)
	if err != nil {
		return plan, planError(ctx, tbl, a.snapshot(tbl), err)
	}
	plan.FilesTotal, plan.BytesTotal = size(all)
	plan.FilesPlanned, plan.BytesPlanned = plan.FilesTotal, plan.BytesTotal
	if bound == nil {
		return plan, nil
	}
	// The files a scan reads: pruning as the read prunes.
	r, planned, bound, err := planReader(ctx, tbl, o, a, bound, false)
	if err != nil {
		if r == nil {
			return plan, err
		}
		return plan, planError(ctx, tbl, a.snapshot(tbl), err)
	}
	plan.PushedFilter = bound.Pushed.String()
	if bound.Residual != nil {
		plan.ResidualFilter = bound.Residual.String()
	}
	plan.FilesPlanned, plan.BytesPlanned = size(planned)
	return plan, nil
}
