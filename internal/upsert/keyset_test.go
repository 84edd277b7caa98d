package upsert

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/ingest"
)

// keySet encodes the keys a batch of (id, v, op, seq) rows changes, as a
// cluster's worker does.
func keySet(t *testing.T, name string, rows ...[4]any) KeySet {
	t.Helper()
	c, err := Collect(context.Background(), []ingest.Part{recPart{name: name, recs: []arrow.RecordBatch{changesRec(t, rows...)}}}, nil,
		Spec{Keys: []string{"id"}, OpColumn: "op", Ops: map[string]string{"u": "upsert", "d": "delete"}, IntKey: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	recs, err := c.KeyRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeKeys(recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	return KeySet{Name: name, Data: b}
}

// Key sets of disjoint keys merge into one change per key, deletes
// included; a key in two sets is refused, naming it and both sets.
func TestMergeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := keySet(t, "partition 0", [4]any{1, "a", "u", -1}, [4]any{2, "b", "u", -1}, [4]any{1, "a2", "u", -1})
	b := keySet(t, "partition 1", [4]any{3, "c", "u", -1}, [4]any{4, "", "d", -1})
	c, err := MergeKeys(ctx, []KeySet{a, b, {Name: "empty"}}, []string{"id"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if c.Keys() != 4 || !c.HasInt(1) || !c.HasInt(4) || c.HasInt(5) {
		t.Fatalf("merged %d keys, want 1 to 4", c.Keys())
	}
	moved := keySet(t, "partition 2", [4]any{7, "x", "u", -1}, [4]any{2, "b2", "u", -1})
	_, err = MergeKeys(ctx, []KeySet{a, b, moved}, []string{"id"}, true)
	var me *MovedKeyError
	if !errors.As(err, &me) || !errors.Is(err, ingest.ErrConfig) || me.Key != "id=2" || me.Parts != [2]string{"partition 0", "partition 2"} ||
		!strings.Contains(err.Error(), "key messages by the primary key") {
		t.Fatalf("want key id=2 refused as moved between partition 0 and partition 2, got %v", err)
	}
}
