package iceberg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/source"
)

// Flink's names for where a new query starts. Every start is inclusive:
// the start snapshot's own appends are read.
const (
	OptStartingStrategy       = "starting-strategy"
	OptStartSnapshotID        = "start-snapshot-id"
	OptStartSnapshotTimestamp = "start-snapshot-timestamp"

	fromEarliestSnapshot  = "INCREMENTAL_FROM_EARLIEST_SNAPSHOT"
	fromLatestSnapshot    = "INCREMENTAL_FROM_LATEST_SNAPSHOT"
	fromSnapshotID        = "INCREMENTAL_FROM_SNAPSHOT_ID"
	fromSnapshotTimestamp = "INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP"
)

// startingStrategies are the values starting-strategy takes.
var startingStrategies = []string{fromEarliestSnapshot, fromLatestSnapshot, fromSnapshotID, fromSnapshotTimestamp}

// latestFile holds the snapshot a query starting at the latest snapshot
// resolved that to, so that a batch re-run after a crash starts where it
// first did, whatever was committed since.
const latestFile = "latest-snapshot"

// start is where a query with no position yet begins.
type start struct {
	strategy string
	// snapshotID is start-snapshot-id; fromTimestamp is epoch ms, 0 for
	// none (stream-from-timestamp or start-snapshot-timestamp).
	snapshotID    int64
	fromTimestamp int64
}

// parseStart reads the start options, refusing combinations that name two
// different starts.
func parseStart(opts map[string]string) (start, error) {
	var st start
	num := func(k string) (int64, bool, error) {
		v, ok := opts[k]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%w: source.options.%s: %q is not a non-negative whole number", source.ErrConfig, k, v)
		}
		return n, true, nil
	}
	id, hasID, err := num(OptStartSnapshotID)
	if err != nil {
		return st, err
	}
	ts, hasTS, err := num(OptStreamFromTimestamp)
	if err != nil {
		return st, err
	}
	flinkTS, hasFlinkTS, err := num(OptStartSnapshotTimestamp)
	if err != nil {
		return st, err
	}
	if hasTS && hasFlinkTS {
		return st, fmt.Errorf("%w: source.options.%s and %s are both set; they are the same start (Spark's and Flink's name), give one", source.ErrConfig, OptStreamFromTimestamp, OptStartSnapshotTimestamp)
	}
	if hasFlinkTS {
		ts, hasTS = flinkTS, true
	}
	st.snapshotID, st.fromTimestamp = id, ts
	strategy := strings.ToUpper(strings.TrimSpace(opts[OptStartingStrategy]))
	switch strategy {
	case "":
		// The option that gives a start picks the strategy, as in Spark,
		// which has no starting-strategy.
		switch {
		case hasID && hasTS:
			return st, fmt.Errorf("%w: source.options.%s and a start timestamp are both set; give one of them", source.ErrConfig, OptStartSnapshotID)
		case hasID:
			strategy = fromSnapshotID
		case hasTS:
			strategy = fromSnapshotTimestamp
		default:
			strategy = fromEarliestSnapshot
		}
	case fromEarliestSnapshot, fromLatestSnapshot:
		if hasID || hasTS {
			return st, fmt.Errorf("%w: source.options.%s is %s, which takes no start snapshot or timestamp; remove %s, or set %s to %s or %s",
				source.ErrConfig, OptStartingStrategy, strategy, startKey(hasID), OptStartingStrategy, fromSnapshotID, fromSnapshotTimestamp)
		}
	case fromSnapshotID:
		if !hasID || hasTS {
			return st, fmt.Errorf("%w: source.options.%s %s starts at source.options.%s alone (floe table snapshots TABLE lists the ids); set it, and no start timestamp",
				source.ErrConfig, OptStartingStrategy, strategy, OptStartSnapshotID)
		}
	case fromSnapshotTimestamp:
		if !hasTS || hasID {
			return st, fmt.Errorf("%w: source.options.%s %s starts at source.options.%s (or %s) alone, in epoch milliseconds; set it, and no %s",
				source.ErrConfig, OptStartingStrategy, strategy, OptStartSnapshotTimestamp, OptStreamFromTimestamp, OptStartSnapshotID)
		}
	case "TABLE_SCAN_THEN_INCREMENTAL":
		return st, fmt.Errorf("%w: source.options.%s %s is not supported: the iceberg source reads appended files, not the table as of a snapshot; "+
			"use %s to read every append", source.ErrConfig, OptStartingStrategy, strategy, fromEarliestSnapshot)
	default:
		return st, fmt.Errorf("%w: source.options.%s: %q is not one of %s", source.ErrConfig, OptStartingStrategy, opts[OptStartingStrategy], strings.Join(startingStrategies, ", "))
	}
	st.strategy = strategy
	return st, nil
}

func startKey(hasID bool) string {
	if hasID {
		return OptStartSnapshotID
	}
	return "the start timestamp"
}

// firstSnapshot is the snapshot a query with no position starts at
// (inclusive), or noSnapshot to start at the oldest one (or at the first
// committed at or after s.start.fromTimestamp). end is the newest snapshot
// the query may read now, nil when there is none.
func (s *Source) firstSnapshot(end *table.Snapshot) (int64, error) {
	switch s.start.strategy {
	case fromSnapshotID:
		return s.start.snapshotID, nil
	case fromLatestSnapshot:
		return s.latestSnapshot(end)
	}
	return noSnapshot, nil
}

// latestSnapshot resolves the latest snapshot once per query: end when the
// query first planned (noSnapshot for a table with none, whose every
// snapshot is then new), kept in the source's state.
func (s *Source) latestSnapshot(end *table.Snapshot) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest != nil {
		return *s.latest, nil
	}
	path := filepath.Join(s.stateDir, latestFile)
	if s.stateDir != "" {
		b, err := s.stateFS.ReadFile(path)
		if err == nil {
			id, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: iceberg source: %s holds %q, not a snapshot id (start a new checkpoint)", source.ErrCannotContinue, path, b)
			}
			s.latest = &id
			return id, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("iceberg source: read %s: %w", path, err)
		}
	}
	id := int64(noSnapshot)
	if end != nil {
		id = end.SnapshotID
	}
	if s.stateDir != "" {
		if err := s.stateFS.MkdirAll(s.stateDir); err != nil {
			return 0, fmt.Errorf("iceberg source: %w", err)
		}
		if err := s.stateFS.WriteFile(path, []byte(strconv.FormatInt(id, 10))); err != nil {
			return 0, fmt.Errorf("iceberg source: write %s: %w", path, err)
		}
	}
	s.latest = &id
	return id, nil
}

// missingStart explains a start snapshot that the history ending at end
// does not hold.
func (s *Source) missingStart(tbl *table.Table, id int64, end *table.Snapshot) error {
	what := fmt.Sprintf("source.options.%s %d", OptStartSnapshotID, id)
	if s.start.strategy == fromLatestSnapshot {
		what = fmt.Sprintf("snapshot %d, the table's latest when the query started,", id)
	}
	if end == nil || tbl.SnapshotByID(id) == nil {
		return fmt.Errorf("%w: iceberg source: %s is not a snapshot of table %s (expired, or of another table); `floe table snapshots %s` lists them",
			source.ErrConfig, what, s.name, s.name)
	}
	return fmt.Errorf("%w: iceberg source: %s is not an ancestor of snapshot %d, the current one of table %s (the table was rolled back, or it is on another branch); "+
		"start at a snapshot of the current history, which `floe table snapshots %s` lists", source.ErrConfig, what, end.SnapshotID, s.name, s.name)
}
