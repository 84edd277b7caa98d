package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
)

// Record input keys of a cluster's commits: the group generation of the
// coordinator that made it, the control-topic offset before which every
// event is resolved, and per partition how many times the record set it
// back to Earliest (State.Resets); the topics' ids are under
// InputTopicIDs.
const (
	inputEpoch   = "epoch"
	inputControl = "control-offset"
	inputResets  = "resets"
)

// ErrFenced marks a coordinator whose group generation is older than the
// one of the table's newest commit: another coordinator has taken over.
var ErrFenced = errors.New("coordinator fenced")

// QueryID is the query id every worker of group commits under: the
// table's record of the cluster is found by the group alone.
func QueryID(group string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("floe-cluster:"+group)).String()
}

// State is where the table's record says the cluster stands.
type State struct {
	// Ends are per partition the next offset to read.
	Ends Offsets
	// IDs are the ids of the topics Ends were read from (none when the
	// record predates them).
	IDs TopicIDs
	// Resets counts per partition the times the record set it back to
	// Earliest; ranges carry the count they were planned under.
	Resets Offsets
}

// Recorded is where the table says the cluster stands: its record, or,
// before its first commit, the newest record of another floe query that
// read the same source into the table (a single process the cluster
// replaces), so that the cluster goes on where that query stopped.
func Recorded(tbl *table.Table, c *commit.Committer) (rec *commit.Record, st State, err error) {
	if tbl == nil {
		return nil, State{Ends: Offsets{}}, nil
	}
	if rec, err = commit.ReadRecord(tbl, c.QueryID); err != nil {
		return nil, State{}, err
	}
	if rec == nil {
		if other, _ := c.OtherQuery(tbl); other != "" {
			prev, err := commit.ReadRecord(tbl, other)
			if err != nil || prev == nil {
				return nil, State{}, err
			}
			st, err = stateOf(prev)
			return nil, st, err
		}
		return nil, State{Ends: Offsets{}}, nil
	}
	st, err = stateOf(rec)
	return rec, st, err
}

func stateOf(rec *commit.Record) (State, error) {
	var st State
	var err error
	if st.Ends, err = decodeOffsets(rec.Offset, "offsets"); err != nil {
		return State{}, err
	}
	if st.IDs, err = ParseTopicIDs(rec.Input); err != nil {
		return State{}, err
	}
	st.Resets, err = decodeOffsets(json.RawMessage(rec.Input[inputResets]), "resets")
	return st, err
}

func decodeOffsets(b json.RawMessage, what string) (Offsets, error) {
	o := Offsets{}
	if len(b) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("the table's record of the cluster holds %s %s, not Kafka offsets: %w", what, b, err)
	}
	return o, nil
}

// Discontinuities holds the table's ends, read from topics of ids,
// against the brokers (cluster.FindDiscontinuities). It fails when the
// query must stop (failOnDataLoss); otherwise it returns the partitions to
// set back to Earliest, and the topics' ids now.
type Discontinuities func(ctx context.Context, ends Offsets, ids TopicIDs) ([]Discontinuity, TopicIDs, error)

// ControlRecord is one record of the control topic.
type ControlRecord struct {
	Offset int64
	Value  []byte
}

// ReadControl returns the control topic's records from offset from up to
// its end now, and the offset after them.
type ReadControl func(ctx context.Context, from int64) ([]ControlRecord, int64, error)

// Coordinator commits the workers' events for one table, one snapshot per
// step.
type Coordinator struct {
	Committer *commit.Committer
	Logger    *slog.Logger
	// Current tells whether this worker is a member of its group's current
	// generation. A coordinator finding a newer generation in the table's
	// record is a zombie, unless it is current: then the group itself was
	// started again (deleted, or expired once empty), its generations
	// counting from 1, and the record's generation is of the group before.
	Current func(ctx context.Context) (bool, error)
	// Discontinuities, when set, holds the record against the brokers
	// before each commit: partitions whose logs no longer go on from the
	// record's ends are set back to Earliest in the commit's record, and
	// the ranges planned on their old logs are never committed.
	Discontinuities Discontinuities
	// Upsert, when set, makes each commit one row delta that also deletes
	// the table's rows of the keys the committed events changed.
	Upsert *Upsert
	// Destinations, set for a template sink, are the tables the events'
	// files go to; the Committer's table is then the cluster's state
	// table, which records each commit before the tables get it.
	Destinations *Destinations

	loaded  bool
	read    int64 // the control-topic offset to read from next
	pending []Pending
}

// Upsert is how a coordinator in mode upsert finds the rows the events'
// keys replace.
type Upsert struct {
	// Keys are the key columns of the table.
	Keys func(tbl *table.Table) []string
	// Index keeps the table's integer keys from commit to commit; nil
	// reads them each time.
	Index *upsert.KeyIndex
}

// Committed is what one step committed.
type Committed struct {
	// Batch is the cluster's commit number, as its record counts them.
	Batch      int64
	SnapshotID int64
	Events     int
	Files      int
	Rows       int64
	// Keys counts the keys the commit's upserts changed and Deleted the
	// rows they removed (mode upsert).
	Keys    int
	Deleted int64
	// Stale counts events dropped as behind the table's ends.
	Stale int
	// Waiting counts events waiting for ranges before them.
	Waiting int
	// LagMs is how long the oldest committed event waited.
	LagMs int64
	// Ends are the table's offsets after the step.
	Ends Offsets
	// SetBack are the partitions the step set back to Earliest.
	SetBack []Discontinuity
	// Table is the table after the step, nil when nothing was committed;
	// Tables are a template sink's tables the step committed to.
	Table  *table.Table
	Tables map[string]*table.Table
}

// Reset forgets the events read, as a worker that stops coordinating
// must: the next coordinator reads them again from the table's record.
func (c *Coordinator) Reset() { c.loaded, c.pending = false, nil }

// Step reads the events published since the last step (on the first, from
// where the table's record says its coordinators stopped) and commits the
// chain, as the coordinator of group generation gen.
func (c *Coordinator) Step(ctx context.Context, gen int32, read ReadControl, now time.Time) (Committed, error) {
	if !c.loaded {
		tbl, err := c.Committer.Load(ctx)
		if err != nil {
			return Committed{}, err
		}
		rec, _, err := Recorded(tbl, c.Committer)
		if err != nil {
			return Committed{}, err
		}
		c.read, c.pending = 0, nil
		if c.Destinations != nil {
			c.Destinations.applied = -1
		}
		if rec != nil {
			if n, err := strconv.ParseInt(rec.Input[inputControl], 10, 64); err == nil {
				c.read = n
			}
		}
		c.loaded = true
	}
	recs, next, err := read(ctx, c.read)
	if err != nil {
		return Committed{}, err
	}
	c.read = next
	for _, r := range recs {
		ev, err := UnmarshalEvent(r.Value)
		if err != nil {
			c.logger().Warn("skipping a control record", "offset", r.Offset, "err", err)
			continue
		}
		if (c.Destinations == nil) != (ev.Table == c.Committer.Name()) {
			continue
		}
		// Read once, here: an event whose files cannot be read would
		// otherwise fail every commit it chains into. Its worker reads its
		// ranges again once they stall.
		files, err := eventFiles(ev)
		if err != nil {
			c.logger().Warn("skipping a control record", "offset", r.Offset, "worker", ev.Worker, "err", err)
			continue
		}
		c.pending = append(c.pending, Pending{Offset: r.Offset, Event: ev, files: files})
	}
	if c.Destinations != nil {
		return c.stepTemplate(ctx, gen, read, now)
	}
	var take, stale, wait []Pending
	var out Committed
	var deletes *upsert.Deletes
	release := func() {
		if deletes != nil {
			deletes.Changes.Release()
			deletes = nil
		}
	}
	defer release()
	res, req, err := c.Committer.CommitPlanned(ctx, func(tbl *table.Table) (*commit.Request, error) {
		release()
		rec, st, err := Recorded(tbl, c.Committer)
		if err != nil {
			return nil, err
		}
		if err := c.fence(ctx, rec, gen); err != nil {
			return nil, err
		}
		if out.SetBack, err = c.setBack(ctx, &st); err != nil {
			return nil, commit.Final(err)
		}
		var live, foreign []Pending
		for _, p := range c.pending {
			if p.Event.TableUUID != "" && p.Event.TableUUID != tbl.Metadata().TableUUID().String() {
				foreign = append(foreign, p)
			} else {
				live = append(live, p)
			}
		}
		take, stale, wait, out.Ends = Chain(st, live, c.Upsert != nil)
		if c.Upsert != nil {
			for unread := c.readKeys(ctx, tbl, take); len(unread) > 0; unread = c.readKeys(ctx, tbl, take) {
				// An event whose key set cannot be read is never committed:
				// its worker reads its ranges again once they stall.
				live = slices.DeleteFunc(live, func(p Pending) bool { return slices.Contains(unread, p.Offset) })
				c.pending = slices.DeleteFunc(c.pending, func(p Pending) bool { return slices.Contains(unread, p.Offset) })
				take, stale, wait, out.Ends = Chain(st, live, true)
			}
			if deletes, err = c.Upsert.deletes(ctx, tbl, take); err != nil {
				return nil, commit.Final(err)
			}
		}
		stale = append(stale, foreign...)
		files := out.tally(take, now)
		req, err := c.request(rec, st, gen, len(files) > 0 || deletes != nil && deletes.Changes.Keys() > 0, &take, &wait, &out)
		if req == nil || err != nil {
			return nil, err
		}
		req.Files = files
		if deletes != nil {
			req.Deletes = deletes
		}
		return req, nil
	})
	if err != nil {
		if errors.Is(err, ErrFenced) {
			c.Reset()
		}
		return Committed{}, err
	}
	c.pending = wait
	out.Stale, out.Waiting = len(stale), len(wait)
	if req != nil && deletes != nil {
		out.Keys, out.Deleted = deletes.Changes.Keys(), deletes.Found
	}
	c.removeKeySets(ctx, res.Table, append(stale, take...))
	if req != nil && len(req.Files) == 0 && req.Deletes == nil {
		// Partitions set back, and nothing else.
		out.Batch, out.Table = req.BatchID, res.Table
		return out, nil
	}
	if req == nil {
		return out, nil
	}
	out.Batch, out.SnapshotID, out.Events, out.Files, out.Table = req.BatchID, res.SnapshotID, len(take), len(req.Files), res.Table
	return out, nil
}

// tally counts the rows of the events taken and the age of the oldest,
// and returns their files.
func (out *Committed) tally(take []Pending, now time.Time) []ingest.DataFile {
	var files []ingest.DataFile
	out.Rows, out.LagMs = 0, 0
	for _, p := range take {
		files = append(files, p.files...)
		out.Rows += p.Event.Rows
		out.LagMs = max(out.LagMs, now.UnixMilli()-p.Event.WrittenMs)
	}
	return files
}

// request is the commit of the events taken, moving the record rec (nil
// before the first) of state st to out.Ends, by the coordinator of
// generation gen; nil when there is nothing to commit. Taken events
// without content (rows, or deletes) wait for a commit that has some, as
// only a snapshot is pinned: a commit of the record alone could overwrite
// a newer record. Partitions set back are committed alone, since no range
// of their new logs can join before: a commit racing this one sets them
// back alike. The record resolves every control record before the first
// event that waits.
func (c *Coordinator) request(rec *commit.Record, st State, gen int32, content bool, take, wait *[]Pending, out *Committed) (*commit.Request, error) {
	if !content {
		*take, *wait = nil, append(*take, *wait...)
		if len(out.SetBack) == 0 {
			return nil, nil
		}
		out.Ends = st.Ends
	}
	resolved := c.read
	for _, p := range *wait {
		resolved = min(resolved, p.Offset)
	}
	ends := out.Ends
	offsets, err := json.Marshal(ends)
	if err != nil {
		return nil, err
	}
	batch := int64(0)
	if rec != nil {
		batch = rec.Batch + 1
	}
	input := map[string]string{inputEpoch: strconv.Itoa(int(gen)), inputControl: strconv.FormatInt(resolved, 10)}
	if st.IDs != nil {
		input[InputTopicIDs] = st.IDs.Of(ends).String()
	}
	if len(st.Resets) > 0 {
		b, err := json.Marshal(st.Resets)
		if err != nil {
			return nil, err
		}
		input[inputResets] = string(b)
	}
	return &commit.Request{BatchID: batch, Record: &commit.Record{
		Batch: batch, Source: c.Committer.Source, Offset: offsets, Branch: c.Committer.Branch, Input: input,
	}}, nil
}

// eventFiles reads the data files of all of an event's outputs.
func eventFiles(ev Event) ([]ingest.DataFile, error) {
	var files []ingest.DataFile
	for _, o := range ev.Outputs() {
		fs, err := o.Files(ev.Worker)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
}

// readKeys reads the key sets of events kept in files, once; it returns
// the control offsets of the events whose key set could not be read.
func (c *Coordinator) readKeys(ctx context.Context, tbl *table.Table, take []Pending) (unread []int64) {
	for i := range take {
		p := &take[i]
		if p.keys != nil || p.Event.KeySetFile == "" {
			continue
		}
		keys, err := readKeySet(ctx, tbl, p.Event.KeySetFile)
		if err != nil {
			c.logger().Warn("skipping a control record", "offset", p.Offset, "worker", p.Event.Worker, "err", err)
			unread = append(unread, p.Offset)
			continue
		}
		p.keys = keys
		// The pending copy keeps it for the next attempt.
		for j := range c.pending {
			if c.pending[j].Offset == p.Offset {
				c.pending[j].keys = keys
			}
		}
	}
	return unread
}

// deletes are the deletes of the rows the events' keys replace; nil when
// no event is taken.
func (u *Upsert) deletes(ctx context.Context, tbl *table.Table, take []Pending) (*upsert.Deletes, error) {
	if len(take) == 0 {
		return nil, nil
	}
	keys := u.Keys(tbl)
	sets := make([]upsert.KeySet, 0, len(take))
	for _, p := range take {
		data := p.Event.KeySet
		if p.Event.KeySetFile != "" {
			data = p.keys
		}
		sets = append(sets, upsert.KeySet{Name: p.Event.describe(), Data: data})
	}
	changes, err := upsert.MergeKeys(ctx, sets, keys, upsert.IsIntKey(tbl.Schema(), keys))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ingest.JoinIdent(tbl.Identifier()), err)
	}
	return &upsert.Deletes{Changes: changes, Keys: keys, Index: u.Index}, nil
}

// removeKeySets deletes the key set files of events committed or stale,
// which no commit reads again; one a crash leaves behind is an orphan
// file of the table.
func (c *Coordinator) removeKeySets(ctx context.Context, tbl *table.Table, done []Pending) {
	if tbl == nil {
		return
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	for _, p := range done {
		if p.Event.KeySetFile != "" {
			_ = fs.Remove(p.Event.KeySetFile)
		}
	}
}

// setBack holds st against the brokers (Discontinuities): partitions whose
// logs no longer go on from its ends are set back to Earliest, their reset
// count moved on, and the ids become those of the topics now. It returns
// the partitions it set back.
func (c *Coordinator) setBack(ctx context.Context, st *State) ([]Discontinuity, error) {
	if c.Discontinuities == nil {
		return nil, nil
	}
	found, now, err := c.Discontinuities(ctx, st.Ends, st.IDs)
	if err != nil {
		return nil, err
	}
	if st.Resets == nil {
		st.Resets = Offsets{}
	}
	for _, d := range found {
		st.Ends.Set(d.TopicPartition, Earliest)
		r, _ := st.Resets.Get(d.TopicPartition)
		st.Resets.Set(d.TopicPartition, r+1)
	}
	// Every offset left goes on in its topic's log now (or is Earliest,
	// which goes on in any): the ids are those of the topics now.
	st.IDs = now.Merge(st.IDs)
	return found, nil
}

// fence refuses a coordinator of a generation older than the record's,
// unless the group was started again since (Current).
func (c *Coordinator) fence(ctx context.Context, rec *commit.Record, gen int32) error {
	if rec == nil {
		return nil
	}
	e, err := strconv.ParseInt(rec.Input[inputEpoch], 10, 32)
	if err != nil || int32(e) <= gen {
		return nil
	}
	if c.Current != nil {
		current, err := c.Current(ctx)
		if err != nil {
			return err
		}
		if current {
			c.logger().Warn("the table's newest cluster commit was made in a later generation of an earlier group of the same name; going on", "recorded", e, "generation", gen)
			return nil
		}
	}
	return fmt.Errorf("%w: the table's newest cluster commit was made in group generation %d, this worker coordinates generation %d and is no longer in the group", ErrFenced, e, gen)
}

func (c *Coordinator) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}
