package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// ResumeLost applies, before a run opens its checkpoint, the one rule for
// a checkpoint directory that is not there (docs/format/checkpoint.md, "A
// lost checkpoint"), decided by what the source can remake exactly:
//
//   - a source whose offsets alone fix the query's position
//     (source.Resumable: Kafka, the Iceberg source) goes on from the
//     table's record of the query's newest batch: the checkpoint is
//     rebuilt from it and resumed is true, for the run's notice;
//   - any other source (the file source, whose log only floe checkpoint
//     rebuild can remake) is refused, naming that command, when the table
//     holds batches of a query reading the same input;
//   - otherwise the run is a new query, and nothing is done or left
//     behind: its table does not exist yet or records no query reading the
//     source, allow-new-query asks for a second copy, or the checkpoint
//     holds no position of the query's own (a worker of a cluster). A
//     table the catalog lost is refused later, naming floe table register,
//     by the run that would create it again.
//
// Nothing is done either when the checkpoint is there, or when the
// pipeline writes no one table (the console, a template), whose record
// could stand for it. openCatalog opens the pipeline's catalog when the
// rule needs it; the caller closes it.
func ResumeLost(ctx context.Context, fsys FS, cfg *config.Pipeline, openCatalog func() (catalog.Catalog, error), logger *slog.Logger) (out Rebuilt, resumed bool, err error) {
	if cfg.Sink.Console() || cfg.Sink.IsTemplate() || cfg.AllowNewQuery {
		return out, false, nil
	}
	dir, err := filepath.Abs(cfg.Checkpoint)
	if err != nil {
		return out, false, fmt.Errorf("checkpoint %s: %w", cfg.Checkpoint, err)
	}
	if _, err := fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return out, false, nil
	}
	cat, err := openCatalog()
	if err != nil {
		return out, false, err
	}
	src, err := source.New(cfg.Source, source.Env{StateDir: SourceDir(dir), FS: fsys, Properties: cfg.Catalog.Properties, Catalog: cat, Logger: logger})
	if err != nil {
		return out, false, err
	}
	defer src.Close()
	if r, ok := src.(source.Resumable); ok {
		if !r.OwnPosition(cfg.Trigger) {
			return out, false, nil
		}
		return resume(ctx, fsys, dir, cfg, cat, logger)
	}
	ident, err := ingest.ParseIdent(cfg.Sink.Table)
	if err != nil {
		return out, false, err
	}
	c := &commit.Committer{Catalog: cat, Ident: ident, Source: src.Description(), SameSource: source.SameSourceOf(src)}
	tbl, err := c.Load(ctx)
	if err != nil || tbl == nil {
		return out, false, err
	}
	return out, false, c.RefuseLostCheckpoint(tbl, dir)
}

// resume rebuilds the missing checkpoint dir from the table's record. A
// table without the query's record, or not in the catalog, or whose
// record says nothing was committed leaves nothing to resume: the run
// starts a new query as usual, and dir is left as it was, not there.
func resume(ctx context.Context, fsys FS, dir string, cfg *config.Pipeline, cat catalog.Catalog, logger *slog.Logger) (Rebuilt, bool, error) {
	out, err := Rebuild(ctx, fsys, cfg, cat, logger)
	if errors.Is(err, ErrNoRecord) || errors.Is(err, ErrNoTable) || err == nil && out.BatchID < 0 {
		_ = fsys.RemoveAll(dir)
		return Rebuilt{}, false, nil
	}
	return out, err == nil, err
}
