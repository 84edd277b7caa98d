package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
)

// writeUpserts writes a batch in mode upsert: it reads the whole batch,
// keeps the last change of each key, writes the winning upserts and
// leaves with them the deletes the batch's commit stages.
func (e *Engine) writeUpserts(ctx context.Context, batchID int64, parts []ingest.Part) (Written, error) {
	tbl, err := e.Tables.Load(ctx, e.Fixed)
	if err != nil {
		return Written{}, err
	}
	keys := e.UpsertKeys(tbl)
	if len(keys) == 0 {
		what := "does not exist yet"
		if tbl != nil {
			what = "has no identifier fields"
		}
		return Written{}, fmt.Errorf("%w: mode upsert needs a key, and table %s %s; set sink.identifier-fields (--identifier-fields id)", ingest.ErrConfig, e.Fixed, what)
	}
	intKey := false
	if tbl != nil {
		if err := upsert.CheckTable(tbl, keys); err != nil {
			return Written{}, err
		}
		intKey = upsert.IsIntKey(tbl.Schema(), keys)
	} else if formatVersion(&e.Config.Sink) == 2 {
		var off []string
		for _, f := range e.partitionFields {
			if !slices.Contains(keys, f.Source) {
				off = append(off, f.Source)
			}
		}
		if err := upsert.PartitionError(e.Fixed, off); err != nil {
			return Written{}, err
		}
	}
	changes, err := upsert.Collect(ctx, parts, e.project, upsert.SpecFor(e.Config, keys, intKey))
	if err != nil {
		return Written{}, err
	}
	deletes := &upsert.Deletes{Changes: changes, Keys: keys, Index: e.keys}
	// A cluster's worker writes against the table as its coordinator last
	// committed it, which may not hold the key's newest row yet.
	lineage := false
	if tbl != nil && tbl.Metadata().Version() >= 3 && !e.clustered {
		lineage, err = deletes.KeepRowIDs(ctx, tbl)
		if err != nil && !errors.Is(err, ingest.ErrConfig) {
			// The query's copy of the table may name files that another
			// writer's compaction replaced and an expiry removed since:
			// look again in the table as it is, as a commit attempt would.
			if tbl, err = e.Tables.Reload(ctx, e.Fixed); err == nil && tbl != nil {
				lineage, err = deletes.KeepRowIDs(ctx, tbl)
			}
		}
		if err != nil {
			changes.Release()
			return Written{}, fmt.Errorf("table %s: look up the rows the batch updates: %w", e.Fixed, err)
		}
	}
	rows, err := changes.Upserts(ctx)
	if err != nil {
		changes.Release()
		return Written{}, err
	}
	defer upsert.ReleaseParts(rows)
	var w Written
	if len(rows) > 0 {
		wr := e.writer(batchID)
		// The rows were projected as they were read.
		wr.Project = nil
		wr.RowIDs = lineage
		if w.Result, err = wr.Write(ctx, rows); err != nil {
			changes.Release()
			return Written{}, err
		}
	}
	w.Parts = len(parts)
	w.upserts = deletes
	return w, nil
}

// UpsertKeys are the key columns of mode upsert: the sink's identifier
// fields, else those of tbl (nil before it exists).
func (e *Engine) UpsertKeys(tbl *table.Table) []string {
	keys := e.Config.Sink.IdentifierFields
	if len(keys) == 0 && tbl != nil {
		for _, id := range tbl.Schema().IdentifierFieldIDs {
			name, _ := tbl.Schema().FindColumnName(id)
			keys = append(keys, name)
		}
	}
	return keys
}

// KeyIndex is the table's key index in mode upsert, nil otherwise.
func (e *Engine) KeyIndex() *upsert.KeyIndex { return e.keys }

// Upserts are the deletes of a batch written in mode upsert, nil
// otherwise; the caller that commits them releases their changes.
func (w Written) Upserts() *upsert.Deletes { return w.upserts }

// upsertOf reports a batch's merge.
func upsertOf(d *upsert.Deletes) *Upsert {
	u := &Upsert{Changes: d.Changes.Rows, Keys: int64(d.Changes.Keys()), DeletedKeys: d.Changes.Deletes}
	if d.Vectors {
		n := d.Found
		u.RemovedRows = &n
	}
	return u
}
