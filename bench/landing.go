package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// LandingLayout is how a landing directory's files are laid out: all in
// one directory, or by date, 1,000 files a directory.
type LandingLayout string

const (
	LandingFlat  LandingLayout = "flat"
	LandingDated LandingLayout = "dated"
)

// LandingPlanning is what planning the batches of a landing directory
// cost: after every file but the last batch's is committed, the time to
// plan a batch of new files and to record it, the state the checkpoint
// keeps, and a bare listing of the directory for scale.
type LandingPlanning struct {
	Layout LandingLayout
	Files  int
	// Plan is LatestOffset for a batch of Batch new files after Files
	// committed; Record is BatchInput and Commit of that batch (the
	// table's account of the input and the log's clean-up).
	Batch        int
	Plan, Record time.Duration
	// StateBytes is the size of the source's state in the checkpoint.
	StateBytes int64
	// Listing is one filepath.WalkDir of the landing directory with a
	// Stat of each file: the least a full listing costs.
	Listing time.Duration
}

// Land writes files [first, first+n) of a landing directory dir in
// layout, tiny CSV files, each with a distinct modification time (their
// arrival order).
func Land(dir string, layout LandingLayout, first, n int, base time.Time) error {
	for i := first; i < first+n; i++ {
		sub := dir
		if layout == LandingDated {
			sub = filepath.Join(dir, fmt.Sprintf("day=%04d", i/1000))
		}
		if i == first || layout == LandingDated && i%1000 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		p := filepath.Join(sub, fmt.Sprintf("part-%07d.csv", i))
		if err := os.WriteFile(p, fmt.Appendf(nil, "id\n%d\n", i), 0o644); err != nil {
			return err
		}
		t := base.Add(time.Duration(i) * time.Millisecond)
		if err := os.Chtimes(p, t, t); err != nil {
			return err
		}
	}
	return nil
}

// PlanLanding commits every file of a landing directory of n files in
// batches of catchUp files, as a stream with max-files-per-trigger would,
// then lands batch more and measures planning and recording that batch.
func PlanLanding(ctx context.Context, work string, layout LandingLayout, n, catchUp, batch int) (LandingPlanning, error) {
	out := LandingPlanning{Layout: layout, Files: n, Batch: batch}
	landing, state := filepath.Join(work, "landing"), filepath.Join(work, "state")
	base := time.Now().Add(-24 * time.Hour)
	if err := Land(landing, layout, 0, n, base); err != nil {
		return out, err
	}
	cfg := config.Source{Type: "files", Path: landing, Format: "csv", Recursive: layout == LandingDated,
		MaxFilesPerTrigger: catchUp, MaxFileAge: config.Duration(7 * 24 * time.Hour)}
	src, err := files.New(cfg, state)
	if err != nil {
		return out, err
	}
	defer src.Close()
	start := src.InitialOffset()
	var input map[string]string
	limit := source.ReadLimit{MaxFiles: catchUp}
	step := func() (bool, time.Duration, time.Duration, error) {
		t := time.Now()
		end, err := src.LatestOffset(ctx, start, limit)
		if err != nil || string(end) == string(start) {
			return false, 0, 0, err
		}
		plan := time.Since(t)
		t = time.Now()
		if input, err = src.BatchInput(input, start, end); err != nil {
			return false, 0, 0, err
		}
		if err := src.Commit(ctx, end); err != nil {
			return false, 0, 0, err
		}
		start = end
		return true, plan, time.Since(t), nil
	}
	for {
		ran, _, _, err := step()
		if err != nil {
			return out, err
		}
		if !ran {
			break
		}
	}
	if err := Land(landing, layout, n, batch, base); err != nil {
		return out, err
	}
	limit.MaxFiles = batch
	ran, plan, record, err := step()
	if err != nil || !ran {
		return out, fmt.Errorf("the batch of %d new files was not planned: %v", batch, err)
	}
	out.Plan, out.Record = plan, record
	err = filepath.WalkDir(state, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			out.StateBytes += info.Size()
		}
		return err
	})
	if err != nil {
		return out, err
	}
	t := time.Now()
	err = filepath.WalkDir(landing, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = d.Info()
		return err
	})
	out.Listing = time.Since(t)
	return out, err
}
