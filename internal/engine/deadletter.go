package engine

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/checkpoint"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/source"
)

// badRecords gathers the records the batch's parts set aside.
func badRecords(parts []ingest.Part) []ingest.BadRecord {
	var out []ingest.BadRecord
	for _, p := range parts {
		if br, ok := p.(ingest.BadRecorder); ok {
			out = append(out, br.BadRecords()...)
		}
	}
	return out
}

// writeDeadLetters writes the records the batch's parts set aside into
// the dead-letter table, adding its files to w: the batch commits them
// with its rows, the dead-letter table first (commit.Tables.Commit), so
// that a table holding the batch means its dead letters are held too. A
// source that sends dead letters itself (a Kafka dead-letter topic) gets
// them instead, before the table commit.
func (e *Engine) writeDeadLetters(ctx context.Context, entry checkpoint.OffsetEntry, parts []ingest.Part, w *Written) error {
	if e.Config.OnBadRecord != "dead-letter" {
		return nil
	}
	bad := badRecords(parts)
	if len(bad) == 0 {
		return nil
	}
	batchID := entry.BatchID
	if dw, ok := e.Source.(source.DeadLetterWriter); ok && dw.SendsDeadLetters() {
		if err := dw.SendDeadLetters(ctx, e.Checkpoint.Metadata.ID, batchID, entry.TimestampMs, bad); err != nil {
			return err
		}
		w.deadLetters = int64(len(bad))
		return nil
	}
	rec := write.BadRecordRows(bad, batchID, time.Now())
	defer rec.Release()
	name := e.Config.Sink.DeadLetterTable
	wr := &write.Writer{Tables: e.Tables, Name: name, FilePrefix: fmt.Sprintf("%s-%05d-dead", e.Checkpoint.Metadata.ID[:8], batchID)}
	res, err := wr.Write(ctx, []ingest.Part{recordPart{name: "dead letters of batch " + fmt.Sprint(batchID), rec: rec}})
	if err != nil {
		return fmt.Errorf("dead-letter table %s: %w", name, err)
	}
	w.Files = append(w.Files, res.Files...)
	if w.Tables == nil {
		w.Tables = map[string]*table.Table{}
	}
	maps.Copy(w.Tables, res.Tables)
	w.deadLetters = int64(len(bad))
	return nil
}

// recordPart is rows already in memory, as a part the writer reads.
type recordPart struct {
	name string
	rec  arrow.RecordBatch
}

func (p recordPart) Name() string     { return p.name }
func (p recordPart) SizeBytes() int64 { return -1 }
func (p recordPart) Open(context.Context) (array.RecordReader, error) {
	return array.NewRecordReader(p.rec.Schema(), []arrow.RecordBatch{p.rec})
}
