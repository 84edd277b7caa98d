package floe

import (
	"context"
	"fmt"
	"slices"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/upsert"
	"github.com/floe-io/floe/internal/write"
)

// writeUpserts writes a batch in mode upsert: it reads the whole batch,
// keeps the last change of each key, writes the winning upserts and
// leaves in p.upserts the deletes the batch's commit stages.
func (p *Pipeline) writeUpserts(ctx context.Context, batchID int64, parts []ingest.Part) (write.Result, error) {
	tbl, err := p.tables.Load(ctx, p.fixed)
	if err != nil {
		return write.Result{}, err
	}
	keys := p.cfg.Sink.IdentifierFields
	if len(keys) == 0 && tbl != nil {
		for _, id := range tbl.Schema().IdentifierFieldIDs {
			name, _ := tbl.Schema().FindColumnName(id)
			keys = append(keys, name)
		}
	}
	if len(keys) == 0 {
		what := "does not exist yet"
		if tbl != nil {
			what = "has no identifier fields"
		}
		return write.Result{}, fmt.Errorf("%w: mode upsert needs a key, and table %s %s; set sink.identifier-fields (--identifier-fields id)", ErrConfig, p.fixed, what)
	}
	intKey := false
	if tbl != nil {
		if err := upsert.CheckTable(tbl, keys); err != nil {
			return write.Result{}, err
		}
		intKey = upsert.IsIntKey(tbl.Schema(), keys)
	} else if formatVersion(&p.cfg.Sink) == 2 {
		var off []string
		for _, f := range p.partition {
			if !slices.Contains(keys, f.Source) {
				off = append(off, f.Source)
			}
		}
		if err := upsert.PartitionError(p.fixed, off); err != nil {
			return write.Result{}, err
		}
	}
	changes, err := upsert.Collect(ctx, parts, p.project, upsert.SpecFor(p.cfg, keys, intKey))
	if err != nil {
		return write.Result{}, err
	}
	rows, err := changes.Upserts(ctx)
	if err != nil {
		changes.Release()
		return write.Result{}, err
	}
	defer upsert.ReleaseParts(rows)
	res := write.Result{}
	if len(rows) > 0 {
		w := p.writer(batchID)
		// The rows were projected as they were read.
		w.Project = nil
		if res, err = w.Write(ctx, rows); err != nil {
			changes.Release()
			return write.Result{}, err
		}
	}
	res.Parts = len(parts)
	p.upserts = &upsert.Deletes{Changes: changes, Keys: keys, Index: p.keys}
	return res, nil
}

// takeUpserts hands over the deletes writeUpserts left, nil outside mode
// upsert.
func (p *Pipeline) takeUpserts() *upsert.Deletes {
	d := p.upserts
	p.upserts = nil
	return d
}

// upsertProgress reports a batch's merge.
func upsertProgress(d *upsert.Deletes) *UpsertProgress {
	p := &UpsertProgress{NumChanges: d.Changes.Rows, NumKeys: int64(d.Changes.Keys()), NumDeletedKeys: d.Changes.Deletes}
	if d.Vectors {
		n := d.Found
		p.NumRemovedRows = &n
	}
	return p
}
