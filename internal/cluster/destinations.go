package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
)

// A template sink's cluster writes many tables, and no catalog commits
// several tables at once. A commit therefore has two phases. First the
// chain is recorded in the cluster's state table: the record a fixed
// table's commit carries, plus the control-topic offsets of the events it
// takes (inputEvents), in a snapshot pinned like any other commit, which
// fences a coordinator planning on an older state. Then each table gets its
// files of those events, in name order, with the same record; a table
// whose record already holds the batch is skipped, so this phase can be
// repeated. A coordinator applies the state table's newest batch before it
// records another: after a crash between the phases the next coordinator
// finishes the batch, and no table can receive a later batch before an
// earlier one, which it would then skip.

// inputEvents is the record input key of a template cluster's commit: the
// control-topic offsets of the events it takes, as a JSON array.
const inputEvents = "events"

// trimStateEvery is how many commits pass between trims of the state
// table's snapshots, of which it keeps trimStateKeep.
const (
	trimStateEvery = 50
	trimStateKeep  = 10
)

// errBehind is a state table recording a batch this coordinator has not
// applied to the tables yet.
var errBehind = errors.New("the cluster's state table records a commit its tables may not all hold yet")

// Destinations are the tables of a template sink's cluster.
type Destinations struct {
	Catalog catalog.Catalog
	// QueryID, Source and Branch are the cluster's, as each table records
	// them.
	QueryID, Source, Branch string
	Logger                  *slog.Logger

	// state names the cluster's state table in messages.
	state      string
	committers map[string]*commit.Committer
	// applied is the newest batch of the state table this coordinator
	// knows every table holds; -1 when it has not looked.
	applied int64
}

func (d *Destinations) committer(name string) (*commit.Committer, error) {
	if c, ok := d.committers[name]; ok {
		return c, nil
	}
	ident, err := ingest.ParseIdent(name)
	if err != nil {
		return nil, err
	}
	if d.committers == nil {
		d.committers = map[string]*commit.Committer{}
	}
	c := &commit.Committer{Catalog: d.Catalog, Ident: ident, QueryID: d.QueryID, Source: d.Source, Logger: d.Logger, Branch: d.Branch}
	d.committers[name] = c
	return c, nil
}

// apply commits each table's files of events as batch rec.Batch, with rec
// as the table's record; it returns the tables it committed to and the
// files they took.
func (d *Destinations) apply(ctx context.Context, rec *commit.Record, events []Pending) (map[string]*table.Table, int, error) {
	type output struct {
		uuid, worker string
		files        []ingest.DataFile
	}
	byTable := map[string][]output{}
	for _, p := range events {
		for _, o := range p.Event.Outputs() {
			var files []ingest.DataFile
			for _, f := range p.files {
				if f.Table == o.Table {
					files = append(files, f)
				}
			}
			byTable[o.Table] = append(byTable[o.Table], output{uuid: o.TableUUID, worker: p.Event.Worker, files: files})
		}
	}
	out := map[string]*table.Table{}
	n := 0
	for _, name := range slices.Sorted(maps.Keys(byTable)) {
		c, err := d.committer(name)
		if err != nil {
			return out, n, err
		}
		taken := 0
		res, req, err := c.CommitPlanned(ctx, func(tbl *table.Table) (*commit.Request, error) {
			own, err := commit.ReadRecord(tbl, d.QueryID)
			if err != nil {
				return nil, err
			}
			switch {
			case own != nil && own.Batch > rec.Batch:
				// The state table is written before any table: a table
				// ahead of it means the state table was dropped or
				// replaced, and applying would skip this batch's files.
				return nil, commit.Final(fmt.Errorf("%w: table %s holds cluster commit %d, but the cluster's state table %s is at commit %d: the state table was dropped or replaced, and its record of what the tables hold is lost; restore the state table (floe table register of its newest metadata file), or give the cluster a new group",
					ingest.ErrTableLost, name, own.Batch, d.state, rec.Batch))
			case own != nil && own.Batch == rec.Batch:
				return nil, nil
			}
			if own == nil {
				if other, src := c.OtherQuery(tbl); other != "" {
					return nil, commit.Final(fmt.Errorf("%w: table %s holds batches of floe query %s reading %s: a cluster writing it from the same source would ingest that input again; stop that query, and give the cluster tables of its own (or a single process its checkpoint back)",
						ingest.ErrQueryConflict, name, other, src))
				}
			}
			var files []ingest.DataFile
			for _, o := range byTable[name] {
				if o.uuid != "" && o.uuid != tbl.Metadata().TableUUID().String() {
					d.logger().Warn(fmt.Sprintf("table %s was created again after worker %s wrote files for it; those files are not committed", name, o.worker))
					continue
				}
				files = append(files, o.files...)
			}
			if len(files) == 0 {
				return nil, nil
			}
			taken = len(files)
			r := *rec
			return &commit.Request{BatchID: rec.Batch, Files: files, Record: &r}, nil
		})
		if err != nil {
			return out, n, err
		}
		if req != nil {
			out[name] = res.Table
			n += taken
		}
	}
	return out, n, nil
}

func (d *Destinations) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

// stepTemplate is Step for a template sink: it records the chain in the
// state table, then applies it to the tables.
func (c *Coordinator) stepTemplate(ctx context.Context, gen int32, read ReadControl, now time.Time) (Committed, error) {
	d := c.Destinations
	for {
		var take, stale, wait []Pending
		var out Committed
		var behind *commit.Record
		res, req, err := c.Committer.CommitPlanned(ctx, func(tbl *table.Table) (*commit.Request, error) {
			rec, st, err := Recorded(tbl, c.Committer)
			if err != nil {
				return nil, err
			}
			if rec != nil && rec.Batch != d.applied {
				behind = rec
				return nil, commit.Final(errBehind)
			}
			if err := c.fence(ctx, rec, gen); err != nil {
				return nil, err
			}
			if out.SetBack, err = c.setBack(ctx, &st); err != nil {
				return nil, commit.Final(err)
			}
			take, stale, wait, out.Ends = Chain(st, c.pending, false)
			files := out.tally(take, now)
			req, err := c.request(rec, st, gen, len(files) > 0, &take, &wait, &out)
			if req == nil || err != nil {
				return nil, err
			}
			offsets := make([]int64, len(take))
			for i, p := range take {
				offsets[i] = p.Offset
			}
			b, err := json.Marshal(offsets)
			if err != nil {
				return nil, err
			}
			req.Record.Input[inputEvents] = string(b)
			req.Marker = true
			return req, nil
		})
		if errors.Is(err, errBehind) {
			if err := c.complete(ctx, read, behind); err != nil {
				c.Reset()
				return Committed{}, err
			}
			continue
		}
		if err != nil {
			if errors.Is(err, ErrFenced) {
				c.Reset()
			}
			return Committed{}, err
		}
		c.pending = wait
		out.Stale, out.Waiting = len(stale), len(wait)
		if req == nil {
			return out, nil
		}
		out.Batch = req.BatchID
		if out.Tables, out.Files, err = d.apply(ctx, req.Record, take); err != nil {
			// The next step finishes the batch from the state table.
			c.Reset()
			return Committed{}, err
		}
		d.applied = req.BatchID
		out.Events = len(take)
		if req.BatchID%trimStateEvery == 0 {
			if _, err := commit.TrimSnapshots(ctx, res.Table, trimStateKeep); err != nil {
				c.logger().Warn("could not expire the cluster state table's old snapshots; trying again later", "table", c.Committer.Name(), "err", err)
			}
		}
		return out, nil
	}
}

// complete applies the state table's batch rec to every table that does
// not hold it yet: the events it names are read again from the control
// topic.
func (c *Coordinator) complete(ctx context.Context, read ReadControl, rec *commit.Record) error {
	var offsets []int64
	if s := rec.Input[inputEvents]; s != "" {
		if err := json.Unmarshal([]byte(s), &offsets); err != nil {
			return fmt.Errorf("the cluster state table %s records events %q, not control-topic offsets: %w", c.Committer.Name(), s, err)
		}
	}
	if len(offsets) > 0 {
		want := map[int64]bool{}
		for _, o := range offsets {
			want[o] = true
		}
		recs, _, err := read(ctx, slices.Min(offsets))
		if err != nil {
			return err
		}
		var events []Pending
		for _, r := range recs {
			if !want[r.Offset] {
				continue
			}
			ev, err := UnmarshalEvent(r.Value)
			if err != nil {
				return fmt.Errorf("commit %d of the cluster state table %s: control record %d: %w", rec.Batch, c.Committer.Name(), r.Offset, err)
			}
			files, err := eventFiles(ev)
			if err != nil {
				return fmt.Errorf("commit %d of the cluster state table %s: control record %d: %w", rec.Batch, c.Committer.Name(), r.Offset, err)
			}
			events = append(events, Pending{Offset: r.Offset, Event: ev, files: files})
			delete(want, r.Offset)
		}
		if len(want) > 0 {
			missing := slices.Sorted(maps.Keys(want))
			strs := make([]string, len(missing))
			for i, o := range missing {
				strs[i] = strconv.FormatInt(o, 10)
			}
			return fmt.Errorf("commit %d of the cluster state table %s names events at control-topic offsets %s, which the control topic no longer holds: its tables may not all have that commit's files; restore the control topic's retention, or check the tables against the state table's record",
				rec.Batch, c.Committer.Name(), strings.Join(strs, ", "))
		}
		if _, _, err := c.Destinations.apply(ctx, rec, events); err != nil {
			return err
		}
	}
	c.Destinations.applied = rec.Batch
	return nil
}
