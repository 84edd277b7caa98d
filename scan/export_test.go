package scan

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// ExplainFiles plans the scan o describes as Explain does and returns the
// paths of the data files it plans, for tests that check no file holding
// a matching row is pruned.
func ExplainFiles(ctx context.Context, tbl *table.Table, o Options) ([]string, error) {
	a, err := o.at(tbl)
	if err != nil {
		return nil, err
	}
	bound, err := o.bind(ctx, tbl, a)
	if err != nil {
		return nil, err
	}
	var tasks []table.FileScanTask
	if bound == nil {
		var sc *table.Scan
		if sc, err = a.scan(tbl, o.scanOptions(nil, nil)...); err == nil {
			tasks, err = sc.PlanFiles(ctx)
		}
	} else {
		_, tasks, _, err = planReader(ctx, tbl, o, a, bound, false)
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, t := range WholeFiles(tasks) {
		paths = append(paths, t.File.FilePath())
	}
	return paths, nil
}
