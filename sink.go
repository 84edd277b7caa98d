package floe

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
)

// sink is the pipeline's write side: the table (or table template), how
// tables are created, and the tables as the last commits left them.
type sink struct {
	cfg       *config.Sink
	fixed     []string // identifier of a fixed table; nil with a template
	route     *router
	project   *projection
	partition []PartitionField
	conform   conformOptions

	// tables are the destination tables as this run last saw them: a
	// commit returns the new metadata, so the next batch needs no catalog
	// read; a stale copy (another writer committed since) only costs one
	// commit retry.
	tables     map[string]*table.Table
	committers map[string]*Committer
	// evolved records, per table, the batch whose input schema it was last
	// evolved to.
	evolved map[string]int64
}

func newSink(cfg *config.Sink) (*sink, error) {
	s := &sink{cfg: cfg, tables: map[string]*table.Table{}, committers: map[string]*Committer{}, evolved: map[string]int64{},
		conform: conformOptionsFor(cfg)}
	if cfg.Console() {
		s.project = newProjection(cfg.Keep, cfg.Drop, cfg.Only)
		return s, nil
	}
	if cfg.IsTemplate() {
		t, err := parseTemplate(cfg.Table)
		if err != nil {
			return nil, err
		}
		s.route = &router{tmpl: t, deadLetter: cfg.DeadLetterTable}
		if cfg.DeadLetterTable != "" {
			if _, err := ParseIdent(cfg.DeadLetterTable); err != nil {
				return nil, err
			}
		}
	} else {
		ident, err := ParseIdent(cfg.Table)
		if err != nil {
			return nil, err
		}
		s.fixed = ident
	}
	var err error
	if s.partition, err = ParsePartitionFields(cfg.PartitionFields); err != nil {
		return nil, err
	}
	s.project = newProjection(cfg.Keep, cfg.Drop, cfg.Only)
	return s, nil
}

// committer returns the committer of one destination table.
func (p *Pipeline) committer(name string) (*Committer, error) {
	if c, ok := p.sink.committers[name]; ok {
		return c, nil
	}
	ident, err := ParseIdent(name)
	if err != nil {
		return nil, err
	}
	c := &Committer{Catalog: p.cat, Ident: ident, QueryID: p.checkpoint.Metadata.ID, Source: p.source.Description(), Logger: p.opts.Logger}
	p.sink.committers[name] = c
	return c, nil
}

// loadTable returns a destination table, or nil when it does not exist.
func (p *Pipeline) loadTable(ctx context.Context, name string) (*table.Table, error) {
	if t, ok := p.sink.tables[name]; ok {
		return t, nil
	}
	c, err := p.committer(name)
	if err != nil {
		return nil, err
	}
	tbl, err := c.Load(ctx)
	if err != nil || tbl == nil {
		return nil, err
	}
	if p.newQuery {
		if other := c.OtherQuery(tbl); other != "" {
			return nil, fmt.Errorf("%w: table %s already holds batches of floe query %s reading %s, and checkpoint %s is new: running would ingest the same input again and duplicate rows. Reuse that query's checkpoint, or pass --allow-new-query (allow-new-query: true) if a second copy is intended", ErrQueryConflict, name, other, p.source.Description(), p.checkpoint.Dir)
		}
	}
	p.sink.tables[name] = tbl
	return tbl, nil
}

// openTable is the writer's way to a destination: the table, created from
// the rows' schema when missing, with its partition spec and schema
// checked against the configuration. Writers call it one table at a time.
func (p *Pipeline) openTable(ctx context.Context, batchID int64, name string, in *arrow.Schema) (*table.Table, error) {
	tbl, err := p.loadTable(ctx, name)
	if err != nil {
		return nil, err
	}
	c, _ := p.committer(name)
	if p.batchSchema != nil && name != p.cfg.Sink.DeadLetterTable {
		in = p.batchSchema
	}
	if tbl == nil {
		if p.cfg.Sink.CreateTable != nil && !*p.cfg.Sink.CreateTable {
			return nil, fmt.Errorf("table %s does not exist; create it first, or enable sink.create-table (--create-table)", name)
		}
		tbl, err = c.Create(ctx, in, CreateOptions{
			Properties:       p.cfg.Sink.TableProperties,
			PartitionFields:  p.sink.partition,
			IdentifierFields: p.cfg.Sink.IdentifierFields,
			FormatVersion:    p.cfg.Sink.FormatVersion,
		})
		if err != nil {
			return nil, err
		}
		p.sink.tables[name] = tbl
		p.sink.evolved[name] = batchID
		return tbl, nil
	}
	if len(p.sink.partition) > 0 && !SpecMatches(tbl.Spec(), tbl.Schema(), p.sink.partition) {
		if !p.cfg.Sink.PartitionSpecEvolution {
			return nil, fmt.Errorf("%w: table %s is partitioned by [%s], but partition-fields ask for [%s]; change partition-fields to match, or set partition-spec-evolution: true to evolve the table's spec (files written so far keep theirs)", ErrConfig, name, DescribeSpec(tbl.Spec(), tbl.Schema()), joinExprs(p.sink.partition))
		}
		if tbl, err = evolveSpec(ctx, c, tbl, p.sink.partition); err != nil {
			return nil, err
		}
		p.sink.tables[name] = tbl
	}
	if p.cfg.Sink.SchemaEvolution == "add-columns" && p.sink.evolved[name] != batchID {
		if tbl, err = evolveSchema(ctx, p.cat, tbl, in); err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		p.sink.tables[name] = tbl
		p.sink.evolved[name] = batchID
	}
	return tbl, nil
}

func joinExprs(fs []PartitionField) string {
	exprs := make([]string, len(fs))
	for i, f := range fs {
		exprs[i] = f.Expr
	}
	return strings.Join(exprs, ", ")
}

// evolveSpec replaces the table's partition spec by fields; the files
// already written keep the spec they were written with.
func evolveSpec(ctx context.Context, c *Committer, tbl *table.Table, fields []PartitionField) (*table.Table, error) {
	for attempt := 1; ; attempt++ {
		txn := tbl.NewTransaction()
		us := txn.UpdateSpec(true)
		spec := tbl.Spec()
		kept := make([]bool, len(fields))
		for _, pf := range spec.Fields() {
			i := slices.IndexFunc(fields, func(f PartitionField) bool {
				src, ok := tbl.Schema().FindFieldByName(f.Source)
				return ok && src.ID == pf.SourceID() && f.Transform.Equals(pf.Transform)
			})
			if i >= 0 {
				kept[i] = true
			} else {
				us.RemoveField(pf.Name)
			}
		}
		for i, f := range fields {
			if !kept[i] {
				us.AddField(f.Source, f.Transform, partitionFieldName(f.Source, f.Transform))
			}
		}
		err := us.Commit()
		if err == nil {
			var out *table.Table
			if out, err = txn.Commit(ctx); err == nil {
				return out, nil
			}
		}
		if attempt >= 4 || !IsCommitConflict(err) {
			return nil, fmt.Errorf("evolve the partition spec of table %s to [%s]: %w", c.Name(), joinExprs(fields), err)
		}
		if tbl, err = c.Catalog.LoadTable(ctx, c.Ident); err != nil {
			return nil, fmt.Errorf("reload table %s: %w", c.Name(), err)
		}
	}
}

// batchTables is one batch's commit: one snapshot per destination table.
type tableCommit struct {
	Table      string `json:"table"`
	SnapshotID int64  `json:"snapshotId"`
	Rows       int64  `json:"numOutputRows"`
	DataFiles  int    `json:"numDataFiles"`
	existing   bool
}

// commitTables commits the batch's files, one table at a time in name
// order. A table that already holds the batch (a re-run after a crash
// between two tables' commits) is skipped and the files just written for
// it are deleted.
func (p *Pipeline) commitTables(ctx context.Context, batchID int64, res WriteResult) ([]tableCommit, error) {
	byTable := map[string][]DataFile{}
	for _, f := range res.Files {
		byTable[f.Table] = append(byTable[f.Table], f)
	}
	var out []tableCommit
	names := slices.Sorted(maps.Keys(byTable))
	// On failure, the files of the tables not reached are deleted: a re-run
	// writes the batch anew under other names.
	abandon := func(rest []string) {
		for _, name := range rest {
			if tbl := res.Tables[name]; tbl != nil {
				if fs, err := tbl.FS(ctx); err == nil {
					deleteFiles(fs, byTable[name])
				}
			}
		}
	}
	for i, name := range names {
		files := byTable[name]
		c, err := p.committer(name)
		if err != nil {
			abandon(names[i:])
			return out, err
		}
		cr, err := c.Commit(ctx, CommitRequest{BatchID: batchID, Files: files,
			Overwrite: p.cfg.Sink.Mode == "complete", Properties: p.cfg.Sink.SnapshotProperties, Base: res.Tables[name]})
		if err != nil {
			abandon(names[i+1:])
			return out, err
		}
		tc := tableCommit{Table: name, SnapshotID: cr.SnapshotID, DataFiles: len(files), existing: cr.Existing}
		for _, f := range files {
			tc.Rows += f.Rows
		}
		if cr.Existing {
			if tbl, err := c.Load(ctx); err == nil && tbl != nil {
				if fs, err := tbl.FS(ctx); err == nil {
					deleteFiles(fs, files)
				}
				p.sink.tables[name] = tbl
				if s := tbl.SnapshotByID(cr.SnapshotID); s != nil && s.Summary != nil {
					tc.Rows, _ = strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
				}
			}
		} else {
			p.sink.tables[name] = cr.Table
		}
		out = append(out, tc)
		if p.opts.AfterTableCommit != nil {
			if err := p.opts.AfterTableCommit(name, batchID, cr.SnapshotID); err != nil {
				abandon(names[i+1:])
				return out, err
			}
		}
	}
	return out, nil
}

// CreateOptions are what a table floe creates gets besides its schema.
type CreateOptions struct {
	Properties       map[string]string
	PartitionFields  []PartitionField
	IdentifierFields []string
	// FormatVersion defaults to 2.
	FormatVersion int
}

func (o CreateOptions) properties() iceberg.Properties {
	v := o.FormatVersion
	if v == 0 {
		v = 2
	}
	tp := iceberg.Properties{"format-version": strconv.Itoa(v)}
	maps.Copy(tp, metadataRetention)
	maps.Copy(tp, o.Properties)
	return tp
}

// metadataRetention bounds the metadata files of the tables floe creates:
// every commit writes a new metadata file, one per batch for a stream, and
// without these Iceberg keeps them all. Old metadata files serve only
// readers that pinned an old metadata location; 25 of them cover minutes
// of a fast trigger. Table properties given in the pipeline override them.
var metadataRetention = iceberg.Properties{
	"write.metadata.delete-after-commit.enabled": "true",
	"write.metadata.previous-versions-max":       "25",
}

// withIdentifiers marks the identifier fields, which must be required
// top-level primitive columns.
func withIdentifiers(sc *iceberg.Schema, names []string) (*iceberg.Schema, error) {
	if len(names) == 0 {
		return sc, nil
	}
	fields := slices.Clone(sc.Fields())
	var ids []int
	for _, n := range names {
		i := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return f.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("%w: identifier field %q is not a top-level column of the input (it has %s)", ErrConfig, n, icebergFieldNames(fields))
		}
		if _, ok := fields[i].Type.(iceberg.PrimitiveType); !ok {
			return nil, fmt.Errorf("%w: identifier field %q is %s; identifier fields must be primitive columns", ErrConfig, n, fields[i].Type)
		}
		fields[i].Required = true
		ids = append(ids, fields[i].ID)
	}
	return iceberg.NewSchemaWithIdentifiers(sc.ID, ids, fields...), nil
}

func icebergFieldNames(fs []iceberg.NestedField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
