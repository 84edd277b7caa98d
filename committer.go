package floe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// Snapshot summary keys that make commits idempotent: every snapshot floe
// commits names its query, batch and source.
const (
	SummaryQueryID = "floe.query-id"
	SummaryBatchID = "floe.batch-id"
	SummarySource  = "floe.source"
)

// Commit retry settings, with Iceberg's names and defaults.
const (
	RetryNumRetriesKey   = "commit.retry.num-retries"
	RetryMinWaitKey      = "commit.retry.min-wait-ms"
	RetryMaxWaitKey      = "commit.retry.max-wait-ms"
	RetryTotalTimeoutKey = "commit.retry.total-timeout-ms"
)

// Committer owns the commit loop of one table. It stages each commit
// against freshly loaded metadata and retries on any failure, for every
// catalog: iceberg-go's SQL, Hadoop and Glue catalogs report a lost race
// without the error its own retry looks for.
type Committer struct {
	Catalog catalog.Catalog
	Ident   table.Identifier
	QueryID string
	Source  string
	Logger  *slog.Logger
}

// CommitRequest is one batch's change to the table.
type CommitRequest struct {
	BatchID int64
	Files   []DataFile
	// Overwrite replaces the table's contents (complete mode).
	Overwrite  bool
	Properties map[string]string
	// Base, when set, is a freshly loaded table for the first attempt, which
	// saves reading the metadata again when nobody else committed since.
	Base *table.Table
}

// CommitResult tells which snapshot holds the batch.
type CommitResult struct {
	SnapshotID int64
	// Existing is true when the batch was found already committed (a run
	// that stopped between the table commit and the commits log).
	Existing bool
	Attempts int
	// Table is the table as the commit left it, for the next batch to start
	// from without reading the metadata again; nil when Existing.
	Table *table.Table
}

// Name is the table's dotted name.
func (c *Committer) Name() string { return joinIdent(c.Ident) }

func joinIdent(id table.Identifier) string {
	s := ""
	for i, p := range id {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}

// Load returns the table, or nil when it does not exist.
func (c *Committer) Load(ctx context.Context) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", c.Name(), err)
	}
	return tbl, nil
}

// Create makes the table from an input schema (every column optional, as
// Spark creates them, identifier fields excepted), creating the namespace
// when needed. A concurrent creator winning the race is fine: its table is
// loaded instead.
func (c *Committer) Create(ctx context.Context, schema *arrow.Schema, opts CreateOptions) (*table.Table, error) {
	sc, err := icebergSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot create table %s from the input schema: %v", ErrSchemaMismatch, c.Name(), err)
	}
	if sc, err = withIdentifiers(sc, opts.IdentifierFields); err != nil {
		return nil, fmt.Errorf("create table %s: %w", c.Name(), err)
	}
	createOpts := []catalog.CreateTableOpt{catalog.WithProperties(opts.properties())}
	if len(opts.PartitionFields) > 0 {
		spec, err := NewPartitionSpec(sc, opts.PartitionFields)
		if err != nil {
			return nil, fmt.Errorf("create table %s: %w", c.Name(), err)
		}
		createOpts = append(createOpts, catalog.WithPartitionSpec(&spec))
	}
	ns := c.Ident[:len(c.Ident)-1]
	if len(ns) > 0 {
		if exists, err := c.Catalog.CheckNamespaceExists(ctx, ns); err != nil {
			return nil, fmt.Errorf("check namespace %s: %w", joinIdent(ns), err)
		} else if !exists {
			if err := c.Catalog.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
				return nil, fmt.Errorf("create namespace %s: %w", joinIdent(ns), err)
			}
		}
	}
	tbl, err := c.Catalog.CreateTable(ctx, c.Ident, sc, createOpts...)
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return c.Catalog.LoadTable(ctx, c.Ident)
	}
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", c.Name(), err)
	}
	return tbl, nil
}

// icebergSchema converts an input schema into a table schema with fresh
// field ids. Types Iceberg lacks are mapped to their nearest kin.
func icebergSchema(s *arrow.Schema) (*iceberg.Schema, error) {
	fields := make([]arrow.Field, len(s.Fields()))
	for i, f := range s.Fields() {
		f.Type = tableType(f.Type)
		f.Metadata = arrow.Metadata{}
		fields[i] = f
	}
	return table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), true)
}

func tableType(t arrow.DataType) arrow.DataType {
	switch t.ID() {
	case arrow.NULL:
		return arrow.BinaryTypes.String // a column only ever null so far
	case arrow.DICTIONARY:
		return tableType(t.(*arrow.DictionaryType).ValueType)
	case arrow.UINT32, arrow.UINT64:
		return arrow.PrimitiveTypes.Int64
	case arrow.FLOAT16:
		return arrow.PrimitiveTypes.Float32
	case arrow.TIMESTAMP:
		ts := t.(*arrow.TimestampType)
		if ts.TimeZone != "" {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		}
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case arrow.DATE64:
		return arrow.FixedWidthTypes.Date32
	case arrow.TIME32:
		return arrow.FixedWidthTypes.Time64us
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		fs := make([]arrow.Field, st.NumFields())
		for i, f := range st.Fields() {
			f.Type = tableType(f.Type)
			f.Metadata = arrow.Metadata{}
			fs[i] = f
		}
		return arrow.StructOf(fs...)
	case arrow.LIST, arrow.LARGE_LIST:
		lt := t.(arrow.ListLikeType)
		return arrow.ListOf(tableType(lt.Elem()))
	case arrow.MAP:
		mt := t.(*arrow.MapType)
		return arrow.MapOf(tableType(mt.KeyType()), tableType(mt.ItemType()))
	}
	return t
}

// FindBatch walks the table's ancestry from the current snapshot back to
// this query's previous batch, looking for batch id. It closes the window
// between a table commit and the commits-log write: a re-run batch that is
// already in the table is not committed twice.
func (c *Committer) FindBatch(tbl *table.Table, batchID int64) *table.Snapshot {
	for s := tbl.CurrentSnapshot(); s != nil; {
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

// OtherQuery returns the id of another floe query that wrote the table from
// the same source, or "" when there is none.
func (c *Committer) OtherQuery(tbl *table.Table) string {
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil {
			continue
		}
		p := s.Summary.Properties
		if q := p[SummaryQueryID]; q != "" && q != c.QueryID && p[SummarySource] == c.Source {
			return q
		}
	}
	return ""
}

// CommitRetry is a table's commit retry policy, from its commit.retry.*
// properties with Iceberg's defaults: 4 retries, waits from 100 ms
// doubling to 60 s, 30 minutes in all.
type CommitRetry struct {
	Retries          int
	MinWait, MaxWait time.Duration
	Deadline         time.Time
}

// CommitRetryOf reads tbl's policy; the deadline starts now.
func CommitRetryOf(tbl *table.Table) CommitRetry {
	get := func(key string, def int64) int64 {
		v := tbl.Properties()[key]
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return n
		}
		return def
	}
	return CommitRetry{
		Retries:  int(get(RetryNumRetriesKey, 4)),
		MinWait:  time.Duration(get(RetryMinWaitKey, 100)) * time.Millisecond,
		MaxWait:  time.Duration(get(RetryMaxWaitKey, 60_000)) * time.Millisecond,
		Deadline: time.Now().Add(time.Duration(get(RetryTotalTimeoutKey, 1_800_000)) * time.Millisecond),
	}
}

func defaultCommitRetry() CommitRetry {
	return CommitRetry{Retries: 4, MinWait: 100 * time.Millisecond, MaxWait: time.Minute, Deadline: time.Now().Add(30 * time.Minute)}
}

// Wait is how long to wait before retrying after the given failed attempt
// (from 1), with jitter; false when the policy allows no more attempts.
func (p CommitRetry) Wait(attempt int) (time.Duration, bool) {
	if attempt > p.Retries || time.Now().After(p.Deadline) {
		return 0, false
	}
	wait := min(p.MinWait<<(attempt-1), p.MaxWait)
	return wait/2 + rand.N(wait/2+1), true
}

// Commit adds the batch's files in one snapshot, or finds that an earlier
// attempt already did. When it finally fails the files are deleted, unless
// the catalog could not tell whether the commit happened: then they are kept
// and the ancestry check decides on the next run.
func (c *Committer) Commit(ctx context.Context, req CommitRequest) (CommitResult, error) {
	props := iceberg.Properties{}
	for k, v := range req.Properties {
		props[k] = v
	}
	props[SummaryQueryID] = c.QueryID
	props[SummaryBatchID] = strconv.FormatInt(req.BatchID, 10)
	props[SummarySource] = c.Source
	files := make([]iceberg.DataFile, len(req.Files))
	for i, f := range req.Files {
		files[i] = f.File
	}

	var pol *CommitRetry
	base := req.Base
	// ambiguous is set once any attempt reached the catalog and failed in a
	// way that does not prove the commit was refused (a timeout, a reset
	// connection, a server error): the commit may be in the table, so its
	// files must survive, and the ancestry check decides on the next run.
	ambiguous := false
	for attempt := 1; ; attempt++ {
		snap, err := c.attempt(ctx, base, req, files, props)
		base = nil
		if err == nil {
			return CommitResult{SnapshotID: snap.SnapshotID, Existing: snap.existing, Attempts: attempt, Table: snap.table}, nil
		}
		if snap.committing && !IsCommitConflict(err) {
			ambiguous = true
		}
		if ctx.Err() != nil {
			return CommitResult{}, ctx.Err()
		}
		if pol == nil {
			p := defaultCommitRetry()
			if snap.table != nil {
				p = CommitRetryOf(snap.table)
			}
			pol = &p
		}
		wait, again := pol.Wait(attempt)
		if !again {
			if !ambiguous {
				c.deleteIfAbsent(ctx, req)
			}
			return CommitResult{}, fmt.Errorf("%w: table %s batch %d after %d attempts: %w", ErrCommit, c.Name(), req.BatchID, attempt, err)
		}
		c.logger().Debug("commit conflict, retrying", "table", c.Name(), "batch", req.BatchID, "attempt", attempt, "wait", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return CommitResult{}, ctx.Err()
		}
	}
}

// IsCommitConflict tells a commit the catalog definitely rejected (a lost
// race, a failed requirement), which a retry on fresh metadata may win,
// from one whose outcome is unknown.
func IsCommitConflict(err error) bool {
	if errors.Is(err, rest.ErrCommitStateUnknown) {
		return false
	}
	if errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	// iceberg-go's SQL, Hadoop and Glue catalogs report a lost race as a
	// failed requirement, not wrapped in ErrCommitFailed.
	msg := err.Error()
	return strings.Contains(msg, "requirement failed") || strings.Contains(msg, "has changed")
}

// deleteIfAbsent deletes the batch's files after a refused commit, once a
// fresh look at the table confirms the batch is not there.
func (c *Committer) deleteIfAbsent(ctx context.Context, req CommitRequest) {
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	if err != nil || c.FindBatch(tbl, req.BatchID) != nil {
		return
	}
	if fs, err := tbl.FS(ctx); err == nil {
		deleteFiles(fs, req.Files)
	}
}

type committed struct {
	SnapshotID int64
	existing   bool
	// table is the table the attempt started from, or the one the commit
	// produced; committing is set once the commit was sent to the catalog.
	table      *table.Table
	committing bool
}

func (c *Committer) attempt(ctx context.Context, tbl *table.Table, req CommitRequest, files []iceberg.DataFile, props iceberg.Properties) (committed, error) {
	if tbl == nil {
		var err error
		if tbl, err = c.Catalog.LoadTable(ctx, c.Ident); err != nil {
			return committed{}, fmt.Errorf("load table: %w", err)
		}
	}
	if s := c.FindBatch(tbl, req.BatchID); s != nil {
		return committed{SnapshotID: s.SnapshotID, existing: true, table: tbl}, nil
	}
	txn := tbl.NewTransaction()
	if req.Overwrite && tbl.Metadata().Version() >= 3 {
		return committed{table: tbl}, fmt.Errorf("%w: complete mode does not write format-version 3 tables yet; use format-version 2 or mode append", ErrConfig)
	}
	if req.Overwrite && tbl.CurrentSnapshot() != nil {
		existing, err := liveDataFiles(ctx, tbl)
		if err != nil {
			return committed{table: tbl}, err
		}
		if err := txn.ReplaceDataFilesWithDataFiles(ctx, existing, files, props, table.WithoutDuplicateCheck()); err != nil {
			return committed{table: tbl}, err
		}
	} else if tbl.Metadata().Version() >= 3 {
		// A v3 append through AddDataFiles needs each file's first row id
		// set by the writer; a row delta assigns them by inheritance, which
		// stays right when a retry lands on a newer snapshot.
		if err := txn.NewRowDelta(props).AddRows(files...).Commit(ctx); err != nil {
			return committed{table: tbl}, err
		}
	} else if err := txn.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck()); err != nil {
		return committed{table: tbl}, err
	}
	out, err := txn.Commit(ctx)
	if err != nil {
		return committed{table: tbl, committing: true}, err
	}
	return committed{SnapshotID: out.CurrentSnapshot().SnapshotID, table: out}, nil
}

// liveDataFiles lists the data files of the current snapshot.
func liveDataFiles(ctx context.Context, tbl *table.Table) ([]iceberg.DataFile, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifests of table %s: %w", joinIdent(tbl.Identifier()), err)
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
