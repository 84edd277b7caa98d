package commit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// Summary keys of the batch record (docs/format/checkpoint.md): the end
// offset the batch read up to, and the source's own account of what the
// query has covered, each source key under SummaryInputPrefix.
const (
	SummaryOffset      = "floe.offset"
	SummaryInputPrefix = "floe.input."
	recordPrefix       = "floe.query."
)

// Record is what the table knows of a query after one of its batches: the
// batch, what the query reads, the offset it read up to, and the source's
// account of its input so far. Each batch's snapshot summary carries it,
// and the table property RecordKey(query) holds the newest, which
// survives the expiry of the snapshots: the table, not the checkpoint, is
// the authority on what a query has committed.
type Record struct {
	Batch  int64             `json:"batch"`
	Source string            `json:"source"`
	Offset json.RawMessage   `json:"offset"`
	Input  map[string]string `json:"input,omitempty"`
	// Branch is the branch the query commits to; "" is main.
	Branch string `json:"branch,omitempty"`
}

// RecordKey is the table property holding query's newest record.
func RecordKey(queryID string) string { return recordPrefix + queryID }

// ReadRecord returns query's newest record in the table, or nil when the
// query has not committed to it since tables carried records.
func ReadRecord(tbl *table.Table, queryID string) (*Record, error) {
	v, ok := tbl.Properties()[RecordKey(queryID)]
	if !ok {
		return nil, nil
	}
	var r Record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, fmt.Errorf("table %s: property %s is not a floe record (%v); restore it from the newest snapshot summary of query %s", strings.Join(tbl.Identifier(), "."), RecordKey(queryID), err, queryID)
	}
	return &r, nil
}

// RecordsOf lists every query's newest record in a table's properties, by
// query id.
func RecordsOf(props map[string]string) map[string]Record {
	out := map[string]Record{}
	for k, v := range props {
		id, ok := strings.CutPrefix(k, recordPrefix)
		if !ok {
			continue
		}
		var r Record
		if json.Unmarshal([]byte(v), &r) == nil {
			out[id] = r
		}
	}
	return out
}

// summary adds the record's keys to a snapshot summary.
func (r *Record) summary(props map[string]string) {
	props[SummaryOffset] = string(r.Offset)
	for k, v := range r.Input {
		props[SummaryInputPrefix+k] = v
	}
}

// property is the record as the table property holds it.
func (r *Record) property() (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}
