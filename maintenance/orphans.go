package maintenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// DefaultOrphanOlderThan is Spark's remove_orphan_files default: a file
// younger than this may belong to a commit still in flight.
const DefaultOrphanOlderThan = 3 * 24 * time.Hour

// ErrOrphanOptions is the parent of every invalid OrphanOptions error.
var ErrOrphanOptions = errors.New("invalid remove-orphan-files options")

// OrphanOptions says where RemoveOrphanFiles looks and what it may delete.
// Start from NewOrphanOptions.
type OrphanOptions struct {
	// OlderThan: only files last modified longer ago than this are removed,
	// so that the files of a commit in flight survive.
	OlderThan time.Duration
	// DryRun lists the orphans without deleting them.
	DryRun bool
	// Location to list; empty means the table's location.
	Location string
}

// NewOrphanOptions returns the defaults: files older than 3 days, anywhere
// under the table's location.
func NewOrphanOptions() OrphanOptions { return OrphanOptions{OlderThan: DefaultOrphanOlderThan} }

// Validate reports every problem with the options.
func (o OrphanOptions) Validate() error {
	if o.OlderThan < 0 {
		return fmt.Errorf("%w: older-than %v is negative", ErrOrphanOptions, o.OlderThan)
	}
	return nil
}

// OrphanResult is what RemoveOrphanFiles found and deleted.
type OrphanResult struct {
	Table    string   `json:"table"`
	Location string   `json:"location"`
	DryRun   bool     `json:"dry_run"`
	CutoffMs int64    `json:"cutoff_ms"`
	Count    int      `json:"orphan_files"`
	Bytes    int64    `json:"orphan_bytes"`
	Paths    []string `json:"paths"`
	Deleted  int      `json:"deleted"`
}

// RemoveOrphanFiles deletes the files under the table's location that no
// metadata of the table names: not any snapshot's manifest list, manifests,
// data or delete files, not a statistics file, not a metadata file in the
// metadata log nor version-hint.text. Such files are left by commits that
// failed or were killed. Files younger than OlderThan are never touched.
//
// It uses iceberg-go's PlanOrphanFiles and ExecuteOrphanCleanup, which
// compare file:// URIs and bare paths as the same file.
func RemoveOrphanFiles(ctx context.Context, tbl *table.Table, opts OrphanOptions) (OrphanResult, error) {
	if err := opts.Validate(); err != nil {
		return OrphanResult{}, err
	}
	res := OrphanResult{Table: strings.Join(tbl.Identifier(), "."), Location: opts.Location, DryRun: opts.DryRun, Paths: []string{}}
	if res.Location == "" {
		res.Location = tbl.Location()
	}
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithLocation(res.Location), table.WithFilesOlderThan(opts.OlderThan))
	if err != nil {
		return res, fmt.Errorf("list orphan files of %s under %s: %w", res.Table, res.Location, err)
	}
	res.CutoffMs = plan.Cutoff().UnixMilli()
	for _, f := range plan.OrphanFiles() {
		res.Paths = append(res.Paths, f.Path)
	}
	slices.Sort(res.Paths)
	res.Count, res.Bytes = len(res.Paths), plan.TotalSizeBytes()
	if opts.DryRun || res.Count == 0 {
		return res, nil
	}
	done, err := tbl.ExecuteOrphanCleanup(ctx, plan)
	res.Deleted = len(done.DeletedFiles)
	if err != nil {
		return res, fmt.Errorf("delete orphan files of %s: %w", res.Table, err)
	}
	return res, nil
}
