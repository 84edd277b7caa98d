package commit

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/faults"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
)

// TablesOptions say how a query's destination tables are made and kept.
type TablesOptions struct {
	// QueryID and Source name the query in its snapshots' summaries.
	QueryID, Source string
	// SameSource, when set, tells whether another query's source
	// description names the same input as Source (a directory under
	// another path), for the new-query guard.
	SameSource func(description string) bool
	// Checkpoint names the query's checkpoint in errors.
	Checkpoint string
	// Branch is the branch every destination's batches commit to; "" is
	// main.
	Branch string
	// Overrides are table properties every destination must hold: a table
	// floe creates gets them in CreateOptions.Properties, an existing one
	// that differs is changed before its first write of the run.
	Overrides map[string]string
	// Create makes missing tables from the first rows' schema, with
	// CreateOptions.
	Create        bool
	CreateOptions CreateOptions
	// SpecEvolution evolves an existing table's partition spec to
	// CreateOptions.PartitionFields instead of refusing the difference.
	SpecEvolution bool
	// SchemaEvolution adds the batch's new columns and widens columns
	// before any of its rows are written.
	SchemaEvolution bool
	// DeadLetter is the table of rows a template cannot route; it keeps
	// the input's columns as they are, so it is not evolved to the batch.
	DeadLetter string
	// BadRecords is set when DeadLetter takes the records sources set
	// aside (on-bad-record: dead-letter): columns of floe's own, so it is
	// made without the sink's partitioning and keys, and never emptied.
	BadRecords bool
	// Overwrite replaces a table's contents with each batch (complete
	// mode): Table's, the query's one destination, even with a batch that
	// wrote no rows, which leaves it empty. Properties go into every
	// snapshot summary.
	Overwrite  bool
	Table      string
	Properties map[string]string
	Logger     *slog.Logger
}

// Tables are one query's destination tables, kept as its last commits left
// them: a commit returns the new metadata, so the next batch needs no
// catalog read, and a stale copy (another writer committed since) only
// costs one commit retry. The writer reaches them through Table, one table
// at a time; a batch's commit goes through Commit.
type Tables struct {
	cat  catalog.Catalog
	opts TablesOptions

	tables     map[string]*table.Table
	committers map[string]*Committer
	// refuseOthers is set while a new checkpoint must not write a table
	// that holds another query's output from the same source.
	refuseOthers bool
	// batchSchema is the union of the batch's input schemas, which every
	// table is evolved to once in the batch (evolved).
	batchSchema *arrow.Schema
	evolved     map[string]bool
	// overridden holds the tables whose Overrides were checked this run.
	overridden map[string]bool
}

// NewTables starts a query's set of tables.
func NewTables(cat catalog.Catalog, opts TablesOptions) *Tables {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Tables{cat: cat, opts: opts, tables: map[string]*table.Table{}, committers: map[string]*Committer{}, evolved: map[string]bool{}, overridden: map[string]bool{}}
}

// RefuseOtherQueries makes Load refuse a table that holds another floe
// query's output from the same source: a new checkpoint would ingest that
// input a second time.
func (t *Tables) RefuseOtherQueries(on bool) { t.refuseOthers = on }

// StartBatch begins a batch whose input schemas unite into schema (nil
// when schema evolution is off): each table is evolved to it once, when
// the writer first asks for the table.
func (t *Tables) StartBatch(schema *arrow.Schema) {
	t.batchSchema = schema
	clear(t.evolved)
}

// Cached is the table as this query last saw it, or nil.
func (t *Tables) Cached(name string) *table.Table { return t.tables[name] }

// Adopt takes tables another committer (maintenance) left newer than the
// query's copies.
func (t *Tables) Adopt(tables map[string]*table.Table) { maps.Copy(t.tables, tables) }

// committer returns the committer of one destination table.
func (t *Tables) committer(name string) (*Committer, error) {
	if c, ok := t.committers[name]; ok {
		return c, nil
	}
	ident, err := ingest.ParseIdent(name)
	if err != nil {
		return nil, err
	}
	c := &Committer{Catalog: t.cat, Ident: ident, QueryID: t.opts.QueryID, Source: t.opts.Source, SameSource: t.opts.SameSource, Logger: t.opts.Logger, Branch: t.opts.Branch}
	t.committers[name] = c
	return c, nil
}

// Load returns a destination table, or nil when it does not exist.
func (t *Tables) Load(ctx context.Context, name string) (*table.Table, error) {
	if tbl, ok := t.tables[name]; ok {
		return tbl, nil
	}
	c, err := t.committer(name)
	if err != nil {
		return nil, err
	}
	tbl, err := c.Load(ctx)
	if err != nil || tbl == nil {
		return nil, err
	}
	if t.refuseOthers {
		if err := c.RefuseOtherQuery(tbl, t.opts.Checkpoint); err != nil {
			return nil, err
		}
	}
	t.tables[name] = tbl
	return tbl, nil
}

// Reload loads a destination table again, for a caller whose copy may be
// behind another writer's commits (a compaction whose replaced files were
// expired since); nil when it does not exist.
func (t *Tables) Reload(ctx context.Context, name string) (*table.Table, error) {
	delete(t.tables, name)
	return t.Load(ctx, name)
}

// Holds tells whether table name holds the batch, with its snapshot unless
// that was expired since (Committer.Holds): a re-run batch that the
// stopped run committed is found before anything is read.
func (t *Tables) Holds(ctx context.Context, name string, batchID int64) (*table.Snapshot, bool, error) {
	tbl, err := t.Load(ctx, name)
	if err != nil || tbl == nil {
		return nil, false, err
	}
	c, err := t.committer(name)
	if err != nil {
		return nil, false, err
	}
	return c.Holds(tbl, batchID)
}

// Table is the writer's way to a destination: the table, created from the
// rows' schema when missing, with its partition spec and schema made to
// accept the batch before the first row is written.
func (t *Tables) Table(ctx context.Context, name string, in *arrow.Schema) (*table.Table, error) {
	tbl, err := t.Load(ctx, name)
	if err != nil {
		return nil, err
	}
	if t.batchSchema != nil && name != t.opts.DeadLetter {
		in = t.batchSchema
	}
	c, err := t.committer(name)
	if err != nil {
		return nil, err
	}
	plain := t.opts.BadRecords && name == t.opts.DeadLetter
	if tbl == nil {
		if !t.opts.Create {
			return nil, fmt.Errorf("table %s does not exist; create it first, or enable sink.create-table (--create-table)", name)
		}
		opts := t.opts.CreateOptions
		if plain {
			opts.PartitionFields, opts.IdentifierFields = nil, nil
		}
		if tbl, err = c.Create(ctx, in, opts); err != nil {
			return nil, err
		}
		t.tables[name] = tbl
		t.evolved[name] = true
		t.overridden[name] = true
		return tbl, nil
	}
	if len(t.opts.Overrides) > 0 && !t.overridden[name] {
		var changed []string
		if tbl, changed, err = Override(ctx, t.cat, tbl, t.opts.Overrides); err != nil {
			return nil, err
		}
		for _, k := range changed {
			t.opts.Logger.Warn(fmt.Sprintf("table %s: property %s set to %q, as table-override.%s asks", name, k, t.opts.Overrides[k], k))
		}
		t.tables[name] = tbl
		t.overridden[name] = true
	}
	if fields := t.opts.CreateOptions.PartitionFields; len(fields) > 0 && !plain && !partition.SpecMatches(tbl.Spec(), tbl.Schema(), fields) {
		if !t.opts.SpecEvolution {
			return nil, t.specMismatch(name, tbl)
		}
		if tbl, err = EvolveSpec(ctx, t.cat, tbl, fields); err != nil {
			return nil, err
		}
		t.tables[name] = tbl
	}
	if t.opts.SchemaEvolution && !t.evolved[name] {
		if tbl, err = EvolveSchema(ctx, t.cat, tbl, in, t.opts.CreateOptions.Defaults); err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		t.tables[name] = tbl
		t.evolved[name] = true
	}
	return tbl, nil
}

// CheckSpec refuses partition-fields that differ from the spec of table
// name, when it exists and partition-spec-evolution is off, as its first
// batch would: a run with no new input must not pass over them in silence.
func (t *Tables) CheckSpec(ctx context.Context, name string) error {
	fields := t.opts.CreateOptions.PartitionFields
	if len(fields) == 0 || t.opts.SpecEvolution {
		return nil
	}
	tbl, err := t.Load(ctx, name)
	if err != nil || tbl == nil || partition.SpecMatches(tbl.Spec(), tbl.Schema(), fields) {
		return err
	}
	return t.specMismatch(name, tbl)
}

// specChanged refuses a batch whose files were written before another
// writer changed the spec of table name, when partition-fields ask for a
// spec the table no longer has and partition-spec-evolution is off, as a
// restart of the pipeline would be refused; the batch's input is read
// again by the run that names the table's spec. Without partition-fields,
// or with evolution on, the files commit in the spec they were written
// in, and the next batch writes the table's spec of then.
func (t *Tables) specChanged(name string, tbl *table.Table) error {
	fields := t.opts.CreateOptions.PartitionFields
	if len(fields) == 0 || t.opts.SpecEvolution || partition.SpecMatches(tbl.Spec(), tbl.Schema(), fields) {
		return nil
	}
	return t.specMismatch(name, tbl)
}

func (t *Tables) specMismatch(name string, tbl *table.Table) error {
	return fmt.Errorf("%w: table %s is partitioned by [%s], but partition-fields ask for [%s]; change partition-fields to match, or set partition-spec-evolution: true to evolve the table's spec (files written so far keep theirs)",
		ingest.ErrConfig, name, partition.DescribeSpec(tbl.Spec(), tbl.Schema()), partition.JoinExprs(t.opts.CreateOptions.PartitionFields))
}

// Record commits only the query's record to table name, for a batch that
// wrote no rows to it: its input is covered all the same. A table that
// does not exist yet has nothing to record in (""). It returns the
// table's metadata file after the commit.
func (t *Tables) Record(ctx context.Context, name string, rec *Record) (string, error) {
	tbl, err := t.Load(ctx, name)
	if err != nil || tbl == nil {
		return "", err
	}
	c, err := t.committer(name)
	if err != nil {
		return "", err
	}
	cr, err := c.Commit(ctx, Request{BatchID: rec.Batch, Record: rec, Base: tbl})
	if err != nil {
		return "", err
	}
	t.tables[name] = cr.Table
	return cr.Table.MetadataLocation(), nil
}

// TableCommit is one table's part of a batch's commit.
type TableCommit struct {
	Table      string
	SnapshotID int64
	Rows       int64
	DataFiles  int
	// Existing is set when the table already held the batch.
	Existing bool
	// Retries counts the commit's attempts after the first: conflicts
	// with other writers and transient catalog failures.
	Retries int
	// MetadataFile is the table's metadata file after the commit: where to
	// register the table again should its catalog lose it.
	MetadataFile string
}

// Commit commits the batch's files, one snapshot per table in name order;
// bases are the tables as the files were written for them, and rec, when
// set, the query's record after the batch, which each table gets. In
// complete mode the query's table is committed even without files, and an
// existing table is emptied (a missing one stays missing). A table that
// already holds the batch (a re-run after a crash between two tables'
// commits) is skipped and the files just written for it are deleted. On
// failure the files of the tables not reached are deleted: a re-run writes
// the batch anew under other names.
func (t *Tables) Commit(ctx context.Context, batchID int64, files []ingest.DataFile, bases map[string]*table.Table, rec *Record, deletes Deletes) ([]TableCommit, error) {
	byTable := map[string][]ingest.DataFile{}
	for _, f := range files {
		byTable[f.Table] = append(byTable[f.Table], f)
	}
	// The query's table takes the batch even without files of its own
	// when it is emptied, has rows deleted, or must record a batch whose
	// records all went to the dead-letter table.
	if (t.opts.Overwrite || deletes != nil || t.opts.BadRecords && rec != nil) && t.opts.Table != "" {
		if _, ok := byTable[t.opts.Table]; !ok {
			tbl, err := t.Load(ctx, t.opts.Table)
			if err != nil {
				return nil, err
			}
			if tbl != nil {
				byTable[t.opts.Table] = nil
				bases = maps.Clone(bases)
				if bases == nil {
					bases = map[string]*table.Table{}
				}
				bases[t.opts.Table] = tbl
			}
		}
	}
	names := slices.Sorted(maps.Keys(byTable))
	if i := slices.Index(names, t.opts.DeadLetter); i > 0 {
		// Dead letters first: a re-run batch is looked up in the query's
		// table before anything is read, so a table that holds the batch
		// must mean its dead letters are held too.
		names = append(append([]string{t.opts.DeadLetter}, names[:i]...), names[i+1:]...)
	}
	abandon := func(rest []string) {
		for _, name := range rest {
			if tbl := bases[name]; tbl != nil {
				if fs, err := tbl.FS(ctx); err == nil {
					ingest.RemoveFiles(fs, byTable[name])
				}
			}
		}
	}
	var out []TableCommit
	for i, name := range names {
		files := byTable[name]
		c, err := t.committer(name)
		if err != nil {
			abandon(names[i:])
			return out, err
		}
		req := Request{BatchID: batchID, Files: files, Overwrite: t.opts.Overwrite, Properties: t.opts.Properties, Record: rec, Base: bases[name], Deletes: deletes}
		if t.opts.BadRecords && name == t.opts.DeadLetter {
			req.Overwrite, req.Deletes = false, nil
		} else {
			req.SpecChanged = func(tbl *table.Table) error { return t.specChanged(name, tbl) }
		}
		cr, err := c.Commit(ctx, req)
		if err != nil {
			abandon(names[i+1:])
			return out, err
		}
		tc := TableCommit{Table: name, SnapshotID: cr.SnapshotID, DataFiles: len(files), Existing: cr.Existing, Retries: max(cr.Attempts-1, 0), MetadataFile: cr.Table.MetadataLocation()}
		for _, f := range files {
			tc.Rows += f.Rows
		}
		t.tables[name] = cr.Table
		if cr.Existing {
			if fs, err := cr.Table.FS(ctx); err == nil {
				ingest.RemoveFiles(fs, files)
			}
			tc.Rows = AddedRows(cr.Table.SnapshotByID(cr.SnapshotID))
		}
		out = append(out, tc)
		if faults.AfterTableCommit != nil {
			if err := faults.AfterTableCommit(name, batchID, cr.SnapshotID); err != nil {
				abandon(names[i+1:])
				return out, err
			}
		}
	}
	return out, nil
}
