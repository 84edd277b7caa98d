package main_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

var (
	chaosSteps = flag.Int("chaos-steps", 30, "steps of TestRandomDamageNeverLosesOrDuplicates (the long run: 250)")
	chaosSeed  = flag.Uint64("chaos-seed", 0, "seed of TestRandomDamageNeverLosesOrDuplicates; 0 picks one and logs it")
)

// Random sequences of ingestion, kill -9, deleted checkpoint files,
// restored checkpoint backups, a deleted catalog database followed by
// floe table register, and maintenance: after every step the table holds
// each landed row at most once, every refusal exits 2 naming its repair,
// and after the repairs the table holds every row exactly once.
func TestRandomDamageNeverLosesOrDuplicates(t *testing.T) {
	t.Parallel()
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -chaos-seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	e := newEnv(t)
	args := e.StreamArgs("db.t")
	landed := 0
	var backups []string
	stats := map[string]int{}

	// atMostOnce checks the table after a step: no id twice, none that was
	// never landed.
	atMostOnce := func(step int, op string) {
		t.Helper()
		for id, n := range e.TableIDs("db.t") {
			if n > 1 || id < 0 || id >= int64(100*landed) {
				t.Fatalf("step %d (%s): id %d appears %d times (%d files landed)", step, op, id, n, landed)
			}
		}
	}
	// repair follows a refusal's advice; it reports false for a result
	// that is not a refusal.
	var repair func(r fixture.Result) bool
	repair = func(r fixture.Result) bool {
		t.Helper()
		if r.Code != 2 {
			return false
		}
		switch {
		case strings.Contains(r.Stderr, "floe table register db.t "):
			meta := strings.Fields(r.Stderr[strings.Index(r.Stderr, "floe table register db.t ")+len("floe table register db.t "):])[0]
			e.OK("table", "register", "db.t", meta)
			stats["refused, table registered"]++
		case strings.Contains(r.Stderr, "floe checkpoint rebuild"):
			// The table itself may be lost too: the rebuild then names
			// the registration first.
			rb := e.Run(append([]string{"checkpoint", "rebuild"}, args[1:]...)...)
			if rb.Code != 0 && (!repair(rb) || e.Run(append([]string{"checkpoint", "rebuild"}, args[1:]...)...).Code != 0) {
				t.Fatalf("checkpoint rebuild: %s", rb)
			}
			stats["refused, checkpoint rebuilt"]++
		default:
			t.Fatalf("a refusal that names no repair: %s", r)
		}
		return true
	}
	// ingest runs the stream until it succeeds, repairing what it refuses.
	ingest := func() {
		t.Helper()
		for range 4 {
			r := e.Run(args...)
			if r.Code == 0 {
				return
			}
			if !repair(r) {
				t.Fatalf("stream failed: %s", r)
			}
		}
		t.Fatal("the stream was still refused after four repairs")
	}

	for step := range *chaosSteps {
		op := "nothing to back up"
		switch rng.IntN(8) {
		case 0, 1:
			op = "ingest"
			e.land(landed)
			landed++
			ingest()
			// A run that exits 0 has ingested every landed row.
			if d := fixture.Exact(e.TableIDs("db.t"), 0, int64(100*landed)); d != "" {
				t.Fatalf("step %d: after an ingest that succeeded: %s", step, d)
			}
		case 2:
			op = "kill -9"
			e.land(landed)
			landed++
			var stderr syncBuffer
			cmd := e.startFloe(&stderr, args...)
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != -1 && code != 0 && code != 2 {
				t.Fatalf("step %d: killed stream exited %d:\n%s", step, code, stderr.String())
			}
		case 3:
			op = "delete a checkpoint file"
			var files []string
			_ = filepath.WalkDir(e.Ckpt, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && d.Name() != ".lock" {
					files = append(files, p)
				}
				return nil
			})
			if len(files) > 0 {
				f := files[rng.IntN(len(files))]
				rel, _ := filepath.Rel(e.Ckpt, f)
				op += " (" + rel + ")"
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		case 4:
			if len(backups) > 0 && rng.IntN(2) == 0 {
				op = "restore a checkpoint backup"
				restoreDir(t, backups[rng.IntN(len(backups))], e.Ckpt)
			} else if _, err := os.Stat(e.Ckpt); err == nil {
				op = "back up the checkpoint"
				b := filepath.Join(e.Dir, fmt.Sprintf("backup-%03d", len(backups)))
				copyDir(t, e.Ckpt, b)
				backups = append(backups, b)
			}
		case 5:
			op = "delete catalog.db, then table register"
			meta := newestMetadataFile(t, filepath.Join(e.Warehouse, "db.db", "t", "metadata"))
			if meta == "" {
				op = "delete catalog.db before the table exists"
			}
			if dbs, _ := filepath.Glob(filepath.Join(e.Warehouse, "catalog.db*")); len(dbs) == 0 {
				op = "no catalog.db to delete"
				break
			}
			removeCatalog(t, e.Warehouse)
			if meta != "" && rng.IntN(2) == 0 {
				// Else the next run is refused and names the file.
				e.OK("table", "register", "db.t", meta)
			}
		case 6:
			op = "expire snapshots"
			if r := e.Run("maintain", "expire-snapshots", "db.t", "--older-than", "0s", "--retain-last", "1"); r.Code != 0 && !noTable(r) {
				t.Fatalf("step %d: %s", step, r)
			}
		case 7:
			op = "compact"
			if r := e.Run("maintain", "rewrite-data-files", "db.t", "--min-input-files", "2"); r.Code != 0 && !noTable(r) {
				t.Fatalf("step %d: %s", step, r)
			}
		}
		stats[strings.SplitN(op, " (", 2)[0]]++
		t.Logf("step %d: %s", step, op)
		atMostOnce(step, op)
	}
	// The final recovery: runs until one succeeds, then the table holds
	// every landed row exactly once.
	ingest()
	if d := fixture.Exact(e.TableIDs("db.t"), 0, int64(100*landed)); d != "" {
		t.Fatalf("after the final recovery: %s", d)
	}
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t.Logf("%-40s %d", k, stats[k])
	}
	t.Logf("%d steps, %d files (%d rows) landed, every row exactly once", *chaosSteps, landed, 100*landed)
}

// noTable tells a maintenance command's refusal of a table (or a whole
// warehouse) that does not exist yet, or whose catalog lost it.
func noTable(r fixture.Result) bool {
	return strings.Contains(r.Stderr, "does not exist") || strings.Contains(r.Stderr, "no warehouse at")
}

// newestMetadataFile finds a table's newest metadata file as a person
// would: the greatest version, the later written of two.
func newestMetadataFile(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestName, bestTime := "", "", time.Time{}
	for _, en := range entries {
		name := en.Name()
		if !strings.HasSuffix(name, ".metadata.json") {
			continue
		}
		info, err := en.Info()
		if err != nil {
			continue
		}
		v := strings.SplitN(name, "-", 2)[0]
		bv := strings.SplitN(bestName, "-", 2)[0]
		if best == "" || v > bv || (v == bv && info.ModTime().After(bestTime)) {
			best, bestName, bestTime = filepath.Join(dir, name), name, info.ModTime()
		}
	}
	return best
}
