// Package commit owns every commit floe makes to a table: the one retry
// loop they all go through (Retry), the idempotent batch commit of
// ingestion (Committer), a query's destination tables with their creation
// and their schema and partition spec evolution (Tables), and partition
// specs from partition-fields.
package commit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/ingest"
)

// Snapshot summary keys that make commits idempotent: every snapshot floe
// commits names its query, batch and source.
const (
	SummaryQueryID = ingest.SummaryQueryID
	SummaryBatchID = "floe.batch-id"
	SummarySource  = "floe.source"
)

// Committer commits one table's batches: each batch at most once, found in
// the table's ancestry when an earlier attempt or run already committed it.
type Committer struct {
	Catalog catalog.Catalog
	Ident   table.Identifier
	QueryID string
	Source  string
	// SameSource, when set, recognises another description of Source's
	// input in other queries' snapshots (see OtherQuery).
	SameSource func(description string) bool
	Logger     *slog.Logger
	// Branch is the branch the batches commit to ("" is main), Spark's
	// branch write option: a branch that does not exist yet starts from
	// main's current snapshot with the first batch, as Iceberg's own
	// commits start it.
	Branch string
}

// Request is one batch's change to the table.
type Request struct {
	BatchID int64
	Files   []ingest.DataFile
	// Overwrite replaces the table's contents (complete mode).
	Overwrite  bool
	Properties map[string]string
	// Record, when set, is the query's record after this batch: its keys
	// go into the snapshot summary and it replaces the query's record
	// property, in the same commit.
	Record *Record
	// Base, when set, is a freshly loaded table for the first attempt, which
	// saves reading the metadata again when nobody else committed since.
	Base *table.Table
	// Deletes, when set, stage the batch's row-level deletes: the batch
	// commits one row delta of its files and those deletes.
	Deletes Deletes
	// Marker makes a commit without files a snapshot all the same (one
	// that deletes nothing), so that it is pinned as any other commit is:
	// a record alone is no compare-and-swap on every catalog.
	Marker bool
	// SpecChanged, when set, judges a table whose default partition spec
	// is no longer the one the batch's files were written in, because
	// another writer changed it since the batch read the table: an error
	// refuses the commit, nil commits the files in the spec they were
	// written in, which the table still has.
	SpecChanged func(tbl *table.Table) error
}

// Deletes stage a batch's row-level deletes against the table each commit
// attempt sees: the delete files written for it and the ones they
// replace. A failed attempt's files are deleted; the next attempt stages
// again against the table as it then is, so that rows a concurrent commit
// moved are found where they now are.
type Deletes interface {
	Stage(ctx context.Context, txn *table.Transaction, tbl *table.Table) (add, remove []iceberg.DataFile, err error)
}

// Result tells which snapshot holds the batch.
type Result struct {
	SnapshotID int64
	// Existing is true when the batch was found already committed by an
	// earlier run (one that stopped between the table commit and the
	// commits log): the files of the request are not the table's, and the
	// caller removes them. Its SnapshotID is 0 when that snapshot has been
	// expired since. A commit of this call whose answer was lost and that
	// is found in the table is not Existing: its files are the table's.
	Existing bool
	Attempts int
	// Table is the table as the commit left it, or as it was found holding
	// the batch, for the next batch to start from.
	Table *table.Table
}

// Name is the table's dotted name.
func (c *Committer) Name() string { return ingest.JoinIdent(c.Ident) }

// Load returns the table, or nil when it does not exist.
func (c *Committer) Load(ctx context.Context) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, c.loadError(err)
	}
	return tbl, nil
}

// loadError wraps a failure to load the table; a metadata file that is gone
// is Final: waiting does not bring it back.
func (c *Committer) loadError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return Final(fmt.Errorf("%w: table %s: the catalog names a metadata file that is gone (%v); restore the file, or register the newest metadata file of the table's metadata directory with floe table register", ingest.ErrTableUnreadable, c.Name(), err))
	}
	return fmt.Errorf("load table %s: %w", c.Name(), err)
}

// branchHead is the snapshot the committer's branch points at, the one its next
// commit builds on: main's current snapshot while the branch does not
// exist.
func (c *Committer) branchHead(tbl *table.Table) *table.Snapshot {
	if c.Branch != "" && c.Branch != table.MainBranch {
		if r, ok := Ref(tbl, c.Branch); ok {
			return tbl.SnapshotByID(r.SnapshotID)
		}
	}
	return tbl.CurrentSnapshot()
}

// transaction is a transaction on the committer's branch.
func (c *Committer) transaction(tbl *table.Table) *table.Transaction {
	if c.Branch == "" {
		return tbl.NewTransaction()
	}
	return tbl.NewTransactionOnBranch(c.Branch)
}

// FindBatch walks the branch's ancestry from its head back to this query's
// previous batch, looking for batch id. It closes the window between a
// table commit and the commits-log write: a re-run batch that is already in
// the table is not committed twice.
func (c *Committer) FindBatch(tbl *table.Table, batchID int64) *table.Snapshot {
	for s := c.branchHead(tbl); s != nil; {
		if s.Summary != nil && s.Summary.Properties[SummaryQueryID] == c.QueryID {
			b, err := strconv.ParseInt(s.Summary.Properties[SummaryBatchID], 10, 64)
			if err == nil {
				if b == batchID {
					return s
				}
				if b < batchID {
					return nil
				}
			}
		}
		if s.ParentSnapshotID == nil {
			return nil
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return nil
}

// Holds tells whether the table holds the batch: its snapshot from the
// ancestry, or, when that snapshot was expired, the query's record saying
// the batch or a later one was committed (snapshot nil, held true).
func (c *Committer) Holds(tbl *table.Table, batchID int64) (*table.Snapshot, bool, error) {
	if s := c.FindBatch(tbl, batchID); s != nil {
		return s, true, nil
	}
	rec, err := ReadRecord(tbl, c.QueryID)
	if err != nil {
		return nil, false, err
	}
	return nil, rec != nil && rec.Batch >= batchID, nil
}

// OtherQuery returns the id of another floe query that wrote the table from
// the same source, and that query's description of it, or "" when there is
// none. The source is the same when its description is, or when
// SameSource recognises it: the same directory reached through a symbolic
// link is the same input.
func (c *Committer) OtherQuery(tbl *table.Table) (query, source string) {
	same := map[string]bool{c.Source: true}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil {
			continue
		}
		p := s.Summary.Properties
		q, src := p[SummaryQueryID], p[SummarySource]
		if q == "" || q == c.QueryID || src == "" {
			continue
		}
		is, known := same[src]
		if !known {
			// Asked once per description: a table has few sources and
			// many snapshots.
			is = c.SameSource != nil && c.SameSource(src)
			same[src] = is
		}
		if is {
			return q, src
		}
	}
	return "", ""
}

// RefuseOtherQuery is the refusal of a new checkpoint (checkpoint, its
// directory) on the table when OtherQuery finds another query there
// reading the same source, whose input the new one would ingest again;
// nil when there is none.
func (c *Committer) RefuseOtherQuery(tbl *table.Table, checkpoint string) error {
	other, src := c.OtherQuery(tbl)
	if other == "" {
		return nil
	}
	return fmt.Errorf("%w: table %s already holds batches of floe query %s reading %s, and checkpoint %s is new: running would ingest the same input again and duplicate rows. Reuse that query's checkpoint; if it was lost, floe checkpoint rebuild with this pipeline's arguments remakes it from the table; pass --allow-new-query (allow-new-query: true) if a second copy is intended", ingest.ErrQueryConflict, c.Name(), other, src, checkpoint)
}

// RefuseLostCheckpoint is the refusal of a run whose checkpoint directory
// is not there when OtherQuery finds a query on the table reading the same
// source: that is most likely this query, whose checkpoint was lost, and
// the repair is to remake it from the table; nil when there is none.
func (c *Committer) RefuseLostCheckpoint(tbl *table.Table, checkpoint string) error {
	other, src := c.OtherQuery(tbl)
	if other == "" {
		return nil
	}
	upTo := ""
	if r, err := ReadRecord(tbl, other); err == nil && r != nil {
		upTo = fmt.Sprintf(" up to batch %d", r.Batch)
	}
	return lostCheckpoint{fmt.Sprintf("checkpoint %s is not there, and table %s holds the batches%s of query %s reading %s: "+
		"this query's checkpoint was lost, and a new one would ingest the same input again and duplicate rows. "+
		"Run floe checkpoint rebuild with this pipeline's arguments to remake it from the table, then run again "+
		"(docs/format/checkpoint.md, \"A lost checkpoint\"); pass --allow-new-query (allow-new-query: true) only if a second copy is intended",
		checkpoint, c.Name(), upTo, other, src)}
}

// lostCheckpoint is a refusal that is an ErrQueryConflict without its
// wording: the query on the table is this one.
type lostCheckpoint struct{ msg string }

func (e lostCheckpoint) Error() string { return e.msg }
func (e lostCheckpoint) Unwrap() error { return ingest.ErrQueryConflict }

// Commit adds the batch's files in one snapshot, or finds that an earlier
// attempt already did. When it finally fails the files are deleted, unless
// the catalog could not tell whether the commit happened: then they are kept
// and the ancestry check decides on the next run.
func (c *Committer) Commit(ctx context.Context, req Request) (Result, error) {
	props, tableProps, err := c.properties(req)
	if err != nil {
		return Result{}, err
	}
	files := icebergFiles(req.Files)
	// ambiguous is set once any attempt reached the catalog and failed in a
	// way that does not prove the commit was refused (a timeout, a reset
	// connection, a server error): the commit may be in the table, so its
	// files must survive, and the ancestry check decides on the next run.
	ambiguous := false
	// sent is set once an attempt reached the catalog. Every attempt looks
	// for the batch before it sends, so a batch found after one was sent
	// is that attempt's commit, whose answer was lost: its files are the
	// table's now, not leftovers of an earlier run.
	sent := false
	var found *table.Snapshot // the batch, when an earlier attempt or run committed it
	held := false
	snapshot := false // the last attempt made a snapshot
	out, attempts, err := Retry(ctx, c.load, req.Base, func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
		var err error
		if found, held, err = c.Holds(tbl, req.BatchID); err != nil || held {
			return tbl, Final(err)
		}
		out, reached, snap, err := c.attempt(ctx, tbl, req, files, props, tableProps)
		snapshot = snap
		sent = sent || reached
		if err != nil {
			if reached && !IsConflict(err) {
				ambiguous = true
			}
			c.logger().Debug("commit attempt failed", "table", c.Name(), "batch", req.BatchID, "err", err)
		}
		return out, err
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, err
		}
		if !ambiguous {
			c.deleteIfAbsent(ctx, req)
		}
		return Result{}, fmt.Errorf("%w: table %s batch %d after %d attempts: %w", ingest.ErrCommit, c.Name(), req.BatchID, attempts, err)
	}
	if err := catalogs.Intact(c.Catalog); err != nil {
		// The commit went into a catalog database that is gone: the
		// batch must not be recorded as done.
		return Result{}, fmt.Errorf("table %s batch %d: %w", c.Name(), req.BatchID, err)
	}
	res := Result{Existing: held && !sent, Attempts: attempts, Table: out}
	if held && sent {
		c.logger().Info("a commit whose answer was lost is in the table", "table", c.Name(), "batch", req.BatchID, "attempts", attempts)
	}
	switch {
	case found != nil:
		res.SnapshotID = found.SnapshotID
	case !held && snapshot:
		// Files, deletes or an overwrite make a snapshot; a record alone
		// does not.
		if s := c.branchHead(out); s != nil {
			res.SnapshotID = s.SnapshotID
		}
	}
	return res, nil
}

// properties are the snapshot summary and the table properties the
// batch's commit sets: its query, batch and source, and its record.
func (c *Committer) properties(req Request) (props, tableProps iceberg.Properties, err error) {
	props = iceberg.Properties{}
	for k, v := range req.Properties {
		props[k] = v
	}
	props[SummaryQueryID] = c.QueryID
	props[SummaryBatchID] = strconv.FormatInt(req.BatchID, 10)
	props[SummarySource] = c.Source
	if req.Record != nil {
		req.Record.summary(props)
		v, err := req.Record.property()
		if err != nil {
			return nil, nil, err
		}
		tableProps = iceberg.Properties{RecordKey(c.QueryID): v}
	}
	return props, tableProps, nil
}

func icebergFiles(files []ingest.DataFile) []iceberg.DataFile {
	out := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		out[i] = f.File
	}
	return out
}

func (c *Committer) load(ctx context.Context) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	if err != nil {
		return nil, c.loadError(err)
	}
	return tbl, nil
}

// deleteIfAbsent deletes the batch's files after a refused commit, once a
// fresh look at the table confirms the batch is not there.
func (c *Committer) deleteIfAbsent(ctx context.Context, req Request) {
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	if err != nil {
		return
	}
	if _, held, err := c.Holds(tbl, req.BatchID); err != nil || held {
		return
	}
	if fs, err := tbl.FS(ctx); err == nil {
		ingest.RemoveFiles(fs, req.Files)
	}
}

// attempt stages the batch's snapshot on tbl and commits it; sent reports
// that the commit reached the catalog, snapshot that it makes a snapshot.
func (c *Committer) attempt(ctx context.Context, tbl *table.Table, req Request, files []iceberg.DataFile, props, tableProps iceberg.Properties) (out *table.Table, sent, snapshot bool, err error) {
	if c.Branch != "" {
		if r, ok := Ref(tbl, c.Branch); ok && r.SnapshotRefType != table.BranchRef {
			return nil, false, false, Final(fmt.Errorf("%w: sink.branch %s of table %s is a tag, which cannot be written; give a branch", ingest.ErrConfig, c.Branch, c.Name()))
		}
	}
	txn := c.transaction(tbl)
	if len(files) > 0 {
		if err := c.specFence(tbl, txn, req, files); err != nil {
			return nil, false, false, err
		}
	}
	if err := txn.SetProperties(tableProps); err != nil {
		return nil, false, false, err
	}
	if req.Deletes != nil {
		return c.rowDelta(ctx, tbl, txn, req, files, props)
	}
	if len(files) == 0 && !req.Overwrite {
		// A batch without rows makes no snapshot; only its record changes.
		out, err = txn.Commit(ctx)
		return out, true, false, err
	}
	out, sent, err = c.stage(ctx, tbl, txn, req, files, props)
	return out, sent, true, err
}

// specFence asks req.SpecChanged about a table whose default spec is not
// the one files were written in, and pins the default spec the attempt
// saw: a spec change committed before this attempt's commit sends it back
// to Retry, which loads the table and asks again, instead of the files
// landing unnoticed in a table a pipeline's partition-fields no longer
// describe.
func (c *Committer) specFence(tbl *table.Table, txn *table.Transaction, req Request, files []iceberg.DataFile) error {
	if req.SpecChanged != nil {
		for _, f := range files {
			if int(f.SpecID()) != tbl.Metadata().DefaultPartitionSpec() {
				if err := req.SpecChanged(tbl); err != nil {
					return Final(err)
				}
				break
			}
		}
	}
	return txn.AssertDefaultShape()
}

// rowDelta commits the batch's files and the deletes req.Deletes stage in
// one row delta; a batch that neither adds nor deletes a row commits its
// record alone. The delete files of an attempt the catalog refused are
// removed.
func (c *Committer) rowDelta(ctx context.Context, tbl *table.Table, txn *table.Transaction, req Request, files []iceberg.DataFile, props iceberg.Properties) (out *table.Table, sent, snapshot bool, err error) {
	add, remove, err := req.Deletes.Stage(ctx, txn, tbl)
	if err != nil {
		if errors.Is(err, ingest.ErrConfig) {
			err = Final(err)
		}
		return nil, false, false, err
	}
	if len(files) == 0 && len(add) == 0 {
		out, err = txn.Commit(ctx)
		return out, true, false, err
	}
	drop := func() {
		if fs, ferr := tbl.FS(ctx); ferr == nil {
			for _, f := range add {
				_ = fs.Remove(f.FilePath())
			}
		}
	}
	if len(add) > 0 {
		// The deletes were found against this table: a commit landing
		// first must send the batch back to Stage, not have iceberg-go
		// replay it on top (it would keep positions in files that
		// commit rewrote, or a second deletion vector for one file).
		if err := txn.AssertRefSnapshotID(""); err != nil {
			drop()
			return nil, false, true, err
		}
	}
	if err := txn.NewRowDelta(props).AddRows(files...).AddDeletes(add...).RemoveDeletes(remove...).Commit(ctx); err != nil {
		drop()
		return nil, false, true, err
	}
	out, err = txn.Commit(ctx)
	if err != nil && IsConflict(err) {
		drop()
	}
	return out, true, true, err
}

// stage stages an append or an overwrite of the batch's files and
// commits it.
func (c *Committer) stage(ctx context.Context, tbl *table.Table, txn *table.Transaction, req Request, files []iceberg.DataFile, props iceberg.Properties) (out *table.Table, sent bool, err error) {
	if req.Overwrite && tbl.Metadata().Version() >= 3 {
		return nil, false, Final(fmt.Errorf("%w: complete mode does not write format-version 3 tables yet; use format-version 2 or mode append", ingest.ErrConfig))
	}
	if req.Overwrite && len(files) == 0 {
		// An empty batch leaves the table empty, as Spark's complete mode
		// does; Delete makes a snapshot even when there is nothing to
		// remove, so that the batch is found in the table like any other.
		if err := txn.Delete(ctx, iceberg.AlwaysTrue{}, props); err != nil {
			return nil, false, err
		}
	} else if req.Overwrite && c.branchHead(tbl) != nil {
		existing, err := liveDataFiles(ctx, tbl, c.branchHead(tbl))
		if err != nil {
			return nil, false, err
		}
		if err := txn.ReplaceDataFilesWithDataFiles(ctx, existing, files, props, table.WithoutDuplicateCheck()); err != nil {
			return nil, false, err
		}
	} else if tbl.Metadata().Version() >= 3 {
		// A v3 append through AddDataFiles needs each file's first row id
		// set by the writer; a row delta assigns them by inheritance, which
		// stays right when a retry lands on a newer snapshot.
		if err := txn.NewRowDelta(props).AddRows(files...).Commit(ctx); err != nil {
			return nil, false, err
		}
	} else if err := txn.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck()); err != nil {
		return nil, false, err
	}
	out, err = txn.Commit(ctx)
	return out, true, err
}

// liveDataFiles lists the data files of snapshot s.
func liveDataFiles(ctx context.Context, tbl *table.Table, s *table.Snapshot) ([]iceberg.DataFile, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := s.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifests of table %s: %w", ingest.JoinIdent(tbl.Identifier()), err)
	}
	var out []iceberg.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			out = append(out, e.DataFile())
		}
	}
	return out, nil
}

func (c *Committer) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// AddedRows is the number of rows a snapshot added, from its summary; 0
// when the summary does not say.
func AddedRows(s *table.Snapshot) int64 {
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
	return n
}
