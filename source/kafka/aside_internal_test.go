package kafka

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/ingest"
)

// A record whose Avro value decodes but fails halfway through appending
// (a null in a field that takes none, after a nested record's first field)
// is completed and left out: the rows around it are as appended.
func TestAvroRowSetAside(t *testing.T) {
	s, err := avrorows.Parse(`{"type":"record","name":"R","fields":[
		{"name":"id","type":"long"},
		{"name":"at","type":{"type":"record","name":"At","fields":[{"name":"x","type":"long"},{"name":"y","type":"string"}]}},
		{"name":"name","type":"string"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.Arrow())
	defer b.Release()
	rows := []map[string]any{
		{"id": int64(1), "at": map[string]any{"x": int64(1), "y": "a"}, "name": "one"},
		{"id": int64(2), "at": map[string]any{"x": int64(2), "y": nil}, "name": "two"},
		{"id": int64(3), "at": map[string]any{"x": int64(3), "y": "c"}, "name": nil},
		{"id": int64(4), "at": map[string]any{"x": int64(4), "y": "d"}, "name": "four"},
	}
	var dead []int
	n := 0
	for _, r := range rows {
		if err := s.AppendValue(b, r); err != nil {
			if !completeRow(b, n) {
				t.Fatalf("row %v failed (%v) without appending anything", r, err)
			}
			dead = append(dead, n)
		}
		n++
	}
	rec, err := ingest.WithoutRows(b.NewRecordBatch(), dead)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if got, want := dead, []int{1, 2}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("rows set aside %v, want %v", got, want)
	}
	if rec.NumRows() != 2 {
		t.Fatalf("%d rows, want 2", rec.NumRows())
	}
	for i, want := range []string{`{"at":{"x":1,"y":"a"},"id":1,"name":"one"}`, `{"at":{"x":4,"y":"d"},"id":4,"name":"four"}`} {
		if got := rowJSON(rec, i); got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
	}
}

func rowJSON(rec arrow.RecordBatch, i int) string {
	s := array.RecordToStructArray(rec)
	defer s.Release()
	b, err := json.Marshal(s.GetOneForMarshal(i))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
