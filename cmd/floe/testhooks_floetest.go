//go:build floetest

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/faults"
)

// CrashAfterTableCommitsEnv makes a test build exit at once, as a kill
// would, right after that many table commits of the run: the checkpoint
// has not recorded the batch, and the other tables of the batch are not
// committed yet.
const CrashAfterTableCommitsEnv = "FLOE_TEST_CRASH_AFTER_TABLE_COMMITS"

// CrashInCatalogCommitEnv makes a test build exit at once, as a kill
// would, in place of that catalog commit of the run (counting from 1): the
// commit's data files, manifests and manifest list are written, but the
// catalog never sees the new metadata, so they are orphans.
const CrashInCatalogCommitEnv = "FLOE_TEST_CRASH_IN_CATALOG_COMMIT"

// CrashAfterCatalogCommitEnv makes a test build exit at once, as a kill
// would, when that catalog commit of the run (counting from 1) has been
// made by the catalog, before its answer reaches the committer: the table
// holds the batch, and floe never learnt it.
const CrashAfterCatalogCommitEnv = "FLOE_TEST_CRASH_AFTER_CATALOG_COMMIT"

// PauseInCatalogCommitEnv names a directory: a test build pauses in place
// of its first catalog commit (a pipeline's or a maintain command's), with the commit's data files and manifests
// written, creates DIR/paused and goes on with the commit once DIR/resume
// exists. A test steps in while a commit is in flight.
const PauseInCatalogCommitEnv = "FLOE_TEST_PAUSE_IN_CATALOG_COMMIT"

func init() {
	testMaintainCatalog = func(cat catalog.Catalog) catalog.Catalog {
		if dir := os.Getenv(PauseInCatalogCommitEnv); dir != "" {
			return &crashingCatalog{Catalog: cat, pauseDir: dir}
		}
		return cat
	}
	testHooks = func(cfg *config.Pipeline, o *floe.Options) {
		if n, err := strconv.Atoi(os.Getenv(CrashAfterTableCommitsEnv)); err == nil && n > 0 {
			commits := 0
			faults.AfterTableCommit = func(string, int64, int64) error {
				if commits++; commits == n {
					os.Exit(137)
				}
				return nil
			}
		}
		crashAt, _ := strconv.Atoi(os.Getenv(CrashInCatalogCommitEnv))
		crashAfter, _ := strconv.Atoi(os.Getenv(CrashAfterCatalogCommitEnv))
		pauseDir := os.Getenv(PauseInCatalogCommitEnv)
		if crashAt > 0 || crashAfter > 0 || pauseDir != "" {
			// The pipeline does not close a catalog it is given; the process
			// ends soon after anyway.
			cat, err := floe.OpenCatalog(context.Background(), cfg.Catalog)
			if err != nil {
				fmt.Fprintln(os.Stderr, "test hook: open catalog:", err)
				os.Exit(1)
			}
			o.Catalog = &crashingCatalog{Catalog: cat, crashAt: crashAt, crashAfter: crashAfter, pauseDir: pauseDir}
		}
	}
}

// crashingCatalog exits in place of its crashAt-th CommitTable, or right
// after its crashAfter-th, or pauses before its first one. Tables are
// bound to it on load and create, because a table's transactions commit
// through the catalog that made it, not through the pipeline's.
type crashingCatalog struct {
	catalog.Catalog
	commits, crashAt, crashAfter int
	pauseDir                     string
}

// pause waits for pauseDir/resume, after saying it is paused.
func (c *crashingCatalog) pause() {
	if err := os.WriteFile(filepath.Join(c.pauseDir, "paused"), nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "test hook:", err)
		os.Exit(1)
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(c.pauseDir, "resume")); err == nil {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "test hook: no resume within 2 minutes")
	os.Exit(1)
}

func (c *crashingCatalog) bind(tbl *table.Table, err error) (*table.Table, error) {
	if err != nil || tbl == nil {
		return tbl, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c *crashingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	return c.bind(c.Catalog.LoadTable(ctx, ident))
}

func (c *crashingCatalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	return c.bind(c.Catalog.CreateTable(ctx, ident, sc, opts...))
}

func (c *crashingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if c.commits++; c.commits == c.crashAt {
		os.Exit(137)
	}
	if c.commits == 1 && c.pauseDir != "" {
		c.pause()
	}
	meta, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, updates)
	if c.commits == c.crashAfter {
		os.Exit(137)
	}
	return meta, loc, err
}
