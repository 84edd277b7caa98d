package iceberg

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/scan"
)

// changeReader is the changelog reader for tbl's current schema and
// specs, kept while they do not change.
func (s *Source) changeReader(ctx context.Context, tbl *table.Table) (*scan.ChangeReader, error) {
	md := tbl.Metadata()
	key := fmt.Sprintf("%d/%d", md.CurrentSchema().ID, len(md.PartitionSpecs()))
	s.mu.Lock()
	cr := s.changes
	ok := cr != nil && s.readerAt == key
	s.mu.Unlock()
	if ok {
		return cr, nil
	}
	cr, err := scan.NewChangeReader(ctx, tbl, nil, s.read)
	if err != nil {
		return nil, fmt.Errorf("iceberg source: table %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.changes, s.readerAt = cr, key
	s.mu.Unlock()
	return cr, nil
}

// changesPart is one snapshot's row-level changes. Their _change_ordinal
// is the snapshot's sequence number, which orders a stream's changes
// across its batches as a changelog scan's ordinal orders its range.
type changesPart struct {
	reader *scan.ChangeReader
	tbl    *table.Table // as loaded for the batch: it knows snap
	snap   *table.Snapshot
}

func (p *changesPart) Name() string     { return fmt.Sprintf("changes of snapshot %d", p.snap.SnapshotID) }
func (p *changesPart) SizeBytes() int64 { return -1 }

// Schema is the changelog's: the table's columns read and the three
// change columns.
func (p *changesPart) Schema(context.Context) (*arrow.Schema, error) { return p.reader.Schema(), nil }

// Open reads the snapshot's changes.
func (p *changesPart) Open(ctx context.Context) (array.RecordReader, error) {
	recs, err := p.reader.Changes(ctx, p.tbl, p.snap, int(p.snap.SequenceNumber))
	if err != nil {
		return nil, err
	}
	rr, err := array.NewRecordReader(p.reader.Schema(), recs)
	for _, r := range recs {
		r.Release()
	}
	return rr, err
}
