package floe

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
)

// Maintainer runs table maintenance between a pipeline's batches. Package
// maintenance provides one and registers it; a program that imports it
// gets the maintenance: block of its pipelines carried out.
type Maintainer interface {
	// AfterBatch is called once a batch's commit is durable, before the
	// next batch is planned. It reports its own failures (maintenance
	// never stops ingestion), returns when done or when ctx ends, and
	// returns the tables it committed to, as they now are, which the
	// pipeline's next commit starts from.
	AfterBatch(ctx context.Context, b BatchCommitted) map[string]*table.Table
}

// MaintenanceRun is one maintenance task run on one table between batches.
type MaintenanceRun struct {
	Table, Task string
	Duration    time.Duration
	Err         error
}

// runReporter is a Maintainer that tells of each task run
// (Options.OnMaintenance).
type runReporter interface {
	ReportRuns(func(MaintenanceRun))
}

// BatchCommitted describes a committed batch to a Maintainer.
type BatchCommitted struct {
	BatchID int64
	// QueryID is the committing query's id (floe.query-id).
	QueryID string
	// Tables maps each table the batch wrote to the table as the commit
	// left it, or to nil when the pipeline does not hold it.
	Tables map[string]*table.Table
}

// MaintainerFactory builds the maintainer of one pipeline.
type MaintainerFactory func(cfg config.Maintenance, cat catalog.Catalog, log *slog.Logger) Maintainer

var (
	maintainerMu      sync.Mutex
	maintainerFactory MaintainerFactory
)

// RegisterMaintainer sets the factory pipelines build their maintainer
// with; package maintenance calls it from init.
func RegisterMaintainer(f MaintainerFactory) {
	maintainerMu.Lock()
	defer maintainerMu.Unlock()
	maintainerFactory = f
}

func newMaintainer(cfg config.Maintenance, cat catalog.Catalog, log *slog.Logger) Maintainer {
	maintainerMu.Lock()
	f := maintainerFactory
	maintainerMu.Unlock()
	if f == nil {
		log.Warn("the pipeline's maintenance is on, but this program does not include package maintenance; " +
			"import github.com/floe-io/floe/maintenance, or set maintenance.enabled: false")
		return nil
	}
	return f(cfg, cat, log)
}
