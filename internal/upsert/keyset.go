package upsert

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/floe-io/floe/internal/ingest"
)

// A key set is the keys one worker of a cluster changed in one interval,
// each once, in the Arrow IPC stream format: the worker writes its rows
// and its key set, and the coordinator, which commits every worker's rows
// in one row delta, deletes the rows of all the key sets' keys that the
// table holds (Deletes.Stage), as a single process deletes those of its
// batch.

// EncodeKeys encodes a batch's changed keys (Changes.KeyRecords) as a key
// set.
func EncodeKeys(recs []arrow.RecordBatch) ([]byte, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(recs[0].Schema()))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return nil, fmt.Errorf("encode the changed keys: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode the changed keys: %w", err)
	}
	return buf.Bytes(), nil
}

// KeySet is one worker's key set, named for messages by where its keys
// came from.
type KeySet struct {
	Name string
	Data []byte
}

// MergeKeys reads key sets into the changes a commit deletes the rows of:
// every key once. A key in two sets is refused (MovedKeyError): each set's
// changes were ordered on one partition, and two partitions' changes of
// one key have no order between them.
func MergeKeys(ctx context.Context, sets []KeySet, keys []string, intKey bool) (*Changes, error) {
	parts := make([]ingest.Part, 0, len(sets))
	defer func() { ReleaseParts(parts) }()
	for _, s := range sets {
		if len(s.Data) == 0 {
			continue
		}
		r, err := ipc.NewReader(bytes.NewReader(s.Data))
		if err != nil {
			return nil, fmt.Errorf("read the changed keys of %s: %w", s.Name, err)
		}
		mp := &memPart{name: s.Name}
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			mp.recs = append(mp.recs, rec)
		}
		err = r.Err()
		r.Release()
		if len(mp.recs) > 0 {
			parts = append(parts, mp)
		}
		if err != nil {
			mp.release()
			return nil, fmt.Errorf("read the changed keys of %s: %w", s.Name, err)
		}
	}
	return Collect(ctx, parts, nil, Spec{Keys: keys, IntKey: intKey, Distinct: true})
}

// MovedKeyError is a key changed in the key sets of two partitions within
// one commit: its producers did not keep it on one partition.
type MovedKeyError struct {
	Key   string
	Parts [2]string
}

func (e *MovedKeyError) Error() string {
	return fmt.Sprintf("key %s changed in %s and in %s, which a cluster commits together: a key's changes are ordered by the partition they arrive on, and changes on two partitions have no order between them. "+
		"Producers must key messages by the primary key (as Debezium does) and the topic keep its partition count; to merge a topic whose keys move between partitions, run a single worker (drop kafka.group.id)",
		e.Key, e.Parts[0], e.Parts[1])
}

// Is makes a moved key a configuration error: only the pipeline's shape
// can change it.
func (e *MovedKeyError) Is(target error) bool { return target == ingest.ErrConfig }

// keyString renders row i's key, for messages: id=5.
func keyString(names []string, keys []arrow.Array, i int) string {
	vals := make([]string, len(keys))
	for c, a := range keys {
		vals[c] = names[c] + "=" + a.ValueStr(i)
	}
	return strings.Join(vals, ", ")
}
