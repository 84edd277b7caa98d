// Package checkpoint is a query's checkpoint directory (see
// docs/format/checkpoint.md): its format, its lock, the purge of old log
// entries, quarantined input, the status read, and the rebuild of a lost
// or damaged checkpoint from its table's record. Everything goes through
// an FS, so that tests can fail any write or sync.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/source"
)

// Checkpoint is a query's durable record of progress, laid out like Spark's:
//
//	metadata      the query id and what it reads and writes
//	offsets/N     the offset range of batch N, written before the batch runs
//	commits/N     written after batch N's snapshots are committed
//	sources/0/    the source's private state
//
// Every file is written atomically, so a crash leaves each either absent or
// whole.
type Checkpoint struct {
	Dir      string
	Metadata Metadata
	fs       FS
	lock     io.Closer

	// unaccepted is set on a new checkpoint until Accept: its metadata
	// is not written before the run is accepted, so that a run refused
	// at start leaves nothing a later rebuild would take for damage.
	// made tells that Open created the directory, which Close then
	// removes.
	unaccepted, made bool
	// created tells that this run made the checkpoint: Withdraw may
	// then take it back.
	created bool

	// purging is set while a purge runs, up to the newest commit in
	// committed; Close waits on purges.
	purging   atomic.Bool
	committed atomic.Int64
	purges    sync.WaitGroup
}

// Metadata identifies the query a checkpoint belongs to.
type Metadata struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Sink    string    `json:"sink"`
	Source  string    `json:"source"`
}

// OffsetEntry is the content of offsets/N.
type OffsetEntry struct {
	BatchID     int64             `json:"batchId"`
	TimestampMs int64             `json:"timestampMs"`
	Start       source.Offset     `json:"start"`
	End         source.Offset     `json:"end"`
	Conf        map[string]string `json:"conf,omitempty"`
}

// CommitEntry is the content of commits/N.
type CommitEntry struct {
	BatchID     int64 `json:"batchId"`
	TimestampMs int64 `json:"timestampMs"`
	// Snapshots maps each table the batch wrote to the snapshot holding it;
	// empty when the batch had no rows.
	Snapshots map[string]int64 `json:"snapshots,omitempty"`
	Rows      int64            `json:"rows"`
	// MetadataFiles maps each table the batch wrote to its metadata file
	// after the commit: what to register should the catalog lose it.
	MetadataFiles map[string]string `json:"metadataFiles,omitempty"`
	// Input is the source's account of the query's input after the batch
	// (source.Recorder), as the tables record it.
	Input map[string]string `json:"input,omitempty"`
}

// retain is how many batches the logs keep behind the newest commit, as
// Spark's minBatchesToRetain.
const retain = 100

// SourceDir is where the source's state lies in the checkpoint in dir
// (source.Env.StateDir).
func SourceDir(dir string) string { return filepath.Join(dir, "sources", "0") }

// Open opens and locks the checkpoint in dir, creating it for a new query
// when absent. sink and source describe the pipeline; a checkpoint made
// for another sink or source is refused, since sharing one corrupts both.
// same, when set, recognises another description of the same input
// (source.Aliased).
func Open(fsys FS, dir, sink, source string, same func(string) bool) (*Checkpoint, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	c := &Checkpoint{Dir: abs, fs: fsys}
	_, statErr := fsys.Stat(abs)
	c.made = errors.Is(statErr, fs.ErrNotExist)
	if c.lock, err = lockDir(fsys, abs); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	data, err := fsys.ReadFile(filepath.Join(abs, "metadata"))
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &c.Metadata); err != nil {
			return nil, fmt.Errorf("%w: checkpoint %s: metadata is not valid JSON (%v); restore it or use a new checkpoint directory", ingest.ErrCheckpointMismatch, abs, err)
		}
		if _, err := uuid.Parse(c.Metadata.ID); err != nil {
			return nil, fmt.Errorf("%w: checkpoint %s: metadata holds no valid query id (%q); restore it or use a new checkpoint directory", ingest.ErrCheckpointMismatch, abs, c.Metadata.ID)
		}
		if c.Metadata.Sink != sink {
			return nil, fmt.Errorf("%w: checkpoint %s belongs to query %s writing to %s, not %s; use a separate checkpoint directory for each sink", ingest.ErrCheckpointMismatch, abs, c.Metadata.ID, c.Metadata.Sink, sink)
		}
		if c.Metadata.Source != source && same != nil && same(c.Metadata.Source) {
			// Refused all the same: the source records its input by the
			// name the checkpoint was made with, so under another name
			// every file would be new again.
			return nil, fmt.Errorf("%w: checkpoint %s belongs to query %s reading %s, the same input as %s under another name, and it records its input under the name it was made with; run with that one", ingest.ErrCheckpointMismatch, abs, c.Metadata.ID, c.Metadata.Source, source)
		}
		if c.Metadata.Source != source {
			return nil, fmt.Errorf("%w: checkpoint %s belongs to query %s reading %s, not %s; use a separate checkpoint directory for each source", ingest.ErrCheckpointMismatch, abs, c.Metadata.ID, c.Metadata.Source, source)
		}
		ok = true
		return c, nil
	case errors.Is(err, fs.ErrNotExist):
		if what := progressFiles(fsys, abs); what != "" {
			// A new query id would make every table this query wrote look
			// like another query's, and re-read the source from the start.
			return nil, fmt.Errorf("%w: checkpoint %s has lost its metadata file but still holds %s: it is not a new checkpoint; run floe checkpoint rebuild with this pipeline's arguments to restore it from the table, or restore the file from a backup", ingest.ErrCheckpointMismatch, abs, what)
		}
		c.Metadata = Metadata{ID: uuid.NewString(), Created: time.Now().UTC(), Sink: sink, Source: source}
		c.unaccepted, c.created = true, true
		ok = true
		return c, nil
	default:
		return nil, fmt.Errorf("read checkpoint %s: %w", abs, err)
	}
}

// writeMetadata writes the metadata file of the checkpoint in dir.
func writeMetadata(fsys FS, dir string, m Metadata) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	return fsys.WriteFile(filepath.Join(dir, "metadata"), append(data, '\n'))
}

// progressFiles names what the checkpoint directory dir holds of a query's
// progress (log entries, source state), or "" when it holds none.
func progressFiles(fsys FS, dir string) string {
	var found []string
	for _, d := range []string{"offsets", "commits", filepath.Join("sources", "0")} {
		if entries, err := fsys.ReadDir(filepath.Join(dir, d)); err == nil && len(entries) > 0 {
			found = append(found, fmt.Sprintf("%d entries in %s/", len(entries), d))
		}
	}
	return strings.Join(found, ", ")
}

// Close waits for a purge still running, then releases the checkpoint's
// lock.
func (c *Checkpoint) Close() error {
	c.purges.Wait()
	if c.lock == nil {
		return nil
	}
	err := c.lock.Close()
	c.lock = nil
	switch {
	case c.unaccepted && c.made:
		err = errors.Join(err, c.fs.RemoveAll(c.Dir))
	case c.unaccepted && c.created:
		// The directory was there, empty, before the run: leave it so.
		for _, f := range []string{"metadata", "offsets", "commits", "sources"} {
			err = errors.Join(err, c.fs.RemoveAll(filepath.Join(c.Dir, f)))
		}
	}
	return err
}

// Withdraw takes back a checkpoint this run created when its first batch
// was refused and forgotten before anything was committed (a table the
// catalog lost): Close then leaves the directory as the run found it, so
// that the repair the refusal names finds no checkpoint of a query that
// never ran.
func (c *Checkpoint) Withdraw() error {
	if !c.created {
		return nil
	}
	commit, err := c.LatestCommit()
	if err != nil || commit >= 0 {
		return err
	}
	off, err := c.LatestOffsets()
	if err != nil || off >= 0 {
		return err
	}
	c.unaccepted = true
	return nil
}

// Accept writes a new checkpoint's metadata once its run is accepted: the
// checks every run starts with passed. It does nothing after the first
// time, or for a checkpoint that was there.
func (c *Checkpoint) Accept() error {
	if !c.unaccepted {
		return nil
	}
	if err := writeMetadata(c.fs, c.Dir, c.Metadata); err != nil {
		return fmt.Errorf("create checkpoint %s: %w", c.Dir, err)
	}
	c.unaccepted = false
	return nil
}

// WriteOffsets records batch N's range before it runs.
func (c *Checkpoint) WriteOffsets(e OffsetEntry) error {
	return c.writeEntry("offsets", e.BatchID, e)
}

// RemoveOffsets forgets a batch that failed before committing anything, so
// that a bad input leaves the checkpoint as it was.
func (c *Checkpoint) RemoveOffsets(batchID int64) error {
	err := c.fs.Remove(filepath.Join(c.Dir, "offsets", strconv.FormatInt(batchID, 10)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove offsets %d: %w", batchID, err)
	}
	return c.fs.SyncDir(filepath.Join(c.Dir, "offsets"))
}

// WriteCommit records that batch N is durable in the sink.
func (c *Checkpoint) WriteCommit(e CommitEntry) error {
	if err := c.writeEntry("commits", e.BatchID, e); err != nil {
		return err
	}
	// Off the batch's path, as Spark's asyncLogPurge: listing and deleting
	// would otherwise make every batch after the hundredth slower than the
	// first ones. One purge runs at a time, and goes again when commits
	// arrived while it ran.
	c.committed.Store(e.BatchID)
	if c.purging.CompareAndSwap(false, true) {
		c.purges.Add(1)
		go func() {
			defer c.purges.Done()
			for {
				latest := c.committed.Load()
				c.purge(latest)
				c.purging.Store(false)
				if c.committed.Load() == latest || !c.purging.CompareAndSwap(false, true) {
					return
				}
			}
		}()
	}
	return nil
}

// Offsets reads offsets/N.
func (c *Checkpoint) Offsets(batchID int64) (OffsetEntry, error) {
	var e OffsetEntry
	return e, c.readEntry("offsets", batchID, &e)
}

// Commit reads commits/N.
func (c *Checkpoint) Commit(batchID int64) (CommitEntry, error) {
	var e CommitEntry
	return e, c.readEntry("commits", batchID, &e)
}

// LatestOffsets returns the highest batch id in the offsets log, or -1.
func (c *Checkpoint) LatestOffsets() (int64, error) { return c.latest("offsets") }

// LatestCommit returns the highest batch id in the commits log, or -1.
func (c *Checkpoint) LatestCommit() (int64, error) { return c.latest("commits") }

// CommittedTables returns, for each table the retained commits name, the
// newest commit entry that wrote to it or to its record.
func (c *Checkpoint) CommittedTables() (map[string]CommitEntry, error) {
	ids, err := c.batchIDs("commits")
	if err != nil {
		return nil, err
	}
	out := map[string]CommitEntry{}
	for _, id := range slices.Backward(ids) {
		e, err := c.Commit(id)
		if err != nil {
			return nil, err
		}
		for name := range e.MetadataFiles {
			if _, ok := out[name]; !ok {
				out[name] = e
			}
		}
		for name := range e.Snapshots {
			if _, ok := out[name]; !ok {
				out[name] = e
			}
		}
	}
	return out, nil
}

// batchIDs lists the ids present in a log ("offsets" or "commits").
func (c *Checkpoint) batchIDs(log string) ([]int64, error) {
	entries, err := c.fs.ReadDir(filepath.Join(c.Dir, log))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s log: %w", log, err)
	}
	var ids []int64
	for _, e := range entries {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && !e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (c *Checkpoint) latest(log string) (int64, error) {
	ids, err := c.batchIDs(log)
	if err != nil || len(ids) == 0 {
		return -1, err
	}
	return ids[len(ids)-1], nil
}

func (c *Checkpoint) writeEntry(log string, id int64, v any) error {
	if err := c.Accept(); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	path := filepath.Join(c.Dir, log, strconv.FormatInt(id, 10))
	if err := c.fs.WriteFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write %s %d: %w", log, id, err)
	}
	return nil
}

func (c *Checkpoint) readEntry(log string, id int64, v any) error {
	path := filepath.Join(c.Dir, log, strconv.FormatInt(id, 10))
	data, err := c.fs.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s %d: %w", log, id, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %s is not valid JSON (%v); run floe checkpoint rebuild with this pipeline's arguments to remake the checkpoint from its table, or restore it from a backup", ingest.ErrCheckpointMismatch, path, err)
	}
	return nil
}

// purge keeps the logs bounded: entries far behind the latest commit are
// never read again.
func (c *Checkpoint) purge(latest int64) {
	for _, log := range []string{"offsets", "commits"} {
		ids, err := c.batchIDs(log)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if id <= latest-retain {
				_ = c.fs.Remove(filepath.Join(c.Dir, log, strconv.FormatInt(id, 10)))
			}
		}
	}
}
