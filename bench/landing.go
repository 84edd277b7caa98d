package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
// keeps, the memory its log takes, and a bare listing of the directory
// for scale.
type LandingPlanning struct {
	Layout LandingLayout
	Files  int
	// Plan is LatestOffset for a batch of Batch new files after Files
	// committed; Record is BatchInput and Commit of that batch (the
	// table's account of the input and the log's clean-up).
	Batch        int
	Plan, Record time.Duration
	// RecordMax is the slowest recording of the LaterBatches batches of
	// Batch new files that follow, among which the log compacts once.
	LaterBatches int
	RecordMax    time.Duration
	// StateBytes is the size of the source's state in the checkpoint.
	StateBytes int64
	// LogHeap is the heap the source takes once opened over that state
	// (live bytes after a collection, less those before it opened).
	LogHeap int64
	// Listing is one filepath.WalkDir of the landing directory with a
	// Stat of each file: the least a full listing costs.
	Listing time.Duration
	// Mode is how the measured batch listed: "full" or "incremental".
	Mode string
}

// landingBase is the modification time of a landing directory's first
// file; the others follow a millisecond apart.
var landingBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// EnsureLanding returns a landing directory of n files in layout under
// root, generating it unless a complete one is there: a million files
// take minutes to write.
func EnsureLanding(root string, layout LandingLayout, n int) (string, error) {
	dir := filepath.Join(root, fmt.Sprintf("landing-%s-%d", layout, n))
	marker := dir + ".complete"
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := Land(dir, layout, 0, n, landingBase); err != nil {
		return "", err
	}
	return dir, os.WriteFile(marker, []byte(strconv.Itoa(n)+"\n"), 0o644)
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

// PlanLanding commits every file of landing, a directory of n files
// made by EnsureLanding, in batches of catchUp files, as a stream with
// max-files-per-trigger would, with its state under work; then it lands
// batch more and measures planning and recording that batch, and the
// slowest recording of compaction-interval more such batches. The files
// it lands are removed at the end.
func PlanLanding(ctx context.Context, work, landing string, layout LandingLayout, n, catchUp, batch int) (LandingPlanning, error) {
	const later = 9 // with the measured batch, the log's 10 between compactions
	out := LandingPlanning{Layout: layout, Files: n, Batch: batch, LaterBatches: later}
	state := filepath.Join(work, "state")
	defer removeLanded(landing, layout, n, batch*(1+later))
	cfg := config.Source{Type: "files", Path: landing, Format: "csv", Recursive: layout == LandingDated,
		MaxFilesPerTrigger: catchUp, MaxFileAge: config.Duration(7 * 24 * time.Hour)}
	src, err := files.New(cfg, state)
	if err != nil {
		return out, err
	}
	defer src.Close()
	st := &stepper{src: src, start: src.InitialOffset(), limit: source.ReadLimit{MaxFiles: catchUp}}
	if err := st.catchUp(ctx); err != nil {
		return out, err
	}
	if err := Land(landing, layout, n, batch, landingBase); err != nil {
		return out, err
	}
	st.limit.MaxFiles = batch
	ran, plan, record, err := st.step(ctx)
	if err != nil || !ran {
		return out, fmt.Errorf("the batch of %d new files was not planned: %v", batch, err)
	}
	out.Plan, out.Record = plan, record
	_, metrics := src.Metrics(nil)
	out.Mode = metrics["listing"]
	for i := 1; i <= later; i++ {
		if err := Land(landing, layout, n+i*batch, batch, landingBase); err != nil {
			return out, err
		}
		ran, _, record, err := st.step(ctx)
		if err != nil || !ran {
			return out, fmt.Errorf("later batch %d of %d new files was not planned: %v", i, batch, err)
		}
		out.RecordMax = max(out.RecordMax, record)
	}
	if out.StateBytes, err = dirBytes(state); err != nil {
		return out, err
	}
	if out.LogHeap, err = openedHeap(cfg, state); err != nil {
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

// openedHeap is the live heap a source opened over state takes.
func openedHeap(cfg config.Source, state string) (int64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	src, err := files.New(cfg, state)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(src)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), src.Close()
}

// removeLanded removes the files PlanLanding landed after the first n, so
// that a kept landing directory holds n files again.
func removeLanded(dir string, layout LandingLayout, n, landed int) {
	for i := n; i < n+landed; i++ {
		sub := dir
		if layout == LandingDated {
			sub = filepath.Join(dir, fmt.Sprintf("day=%04d", i/1000))
		}
		os.Remove(filepath.Join(sub, fmt.Sprintf("part-%07d.csv", i)))
		if layout == LandingDated && i%1000 == 0 && i >= n {
			defer os.Remove(sub) // once emptied; a directory of the first n stays
		}
	}
}

// stepper runs a file source's batches as a stream does, measuring each.
type stepper struct {
	src   *files.Files
	start source.Offset
	input map[string]string
	limit source.ReadLimit
}

// step plans, records and commits the next batch: false when there was
// none; the times are planning (LatestOffset) and recording (BatchInput
// and Commit).
func (st *stepper) step(ctx context.Context) (ran bool, plan, record time.Duration, err error) {
	t := time.Now()
	end, err := st.src.LatestOffset(ctx, st.start, st.limit)
	if err != nil || string(end) == string(st.start) {
		return false, 0, 0, err
	}
	plan = time.Since(t)
	t = time.Now()
	if st.input, err = st.src.BatchInput(st.input, st.start, end); err != nil {
		return false, 0, 0, err
	}
	if err := st.src.Commit(ctx, end); err != nil {
		return false, 0, 0, err
	}
	st.start = end
	return true, plan, time.Since(t), nil
}

// catchUp steps until no batch is left.
func (st *stepper) catchUp(ctx context.Context) error {
	for {
		ran, _, _, err := st.step(ctx)
		if err != nil || !ran {
			return err
		}
	}
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}
