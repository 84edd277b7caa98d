package jsonrows_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/jsonrows"
)

// A bad line set aside leaves the rows exactly as if it had not been
// there, wherever in the row it failed: in a column floe reads itself, in
// one arrow-go reads (int32), inside a nested object or an array.
func TestReaderSetAside(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "at", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	}, nil)
	good := []string{
		`{"id": 1, "small": 5, "name": "a", "tags": ["p", "q"], "at": {"x": 1, "y": "u"}}`,
		`{"id": 2, "name": "b"}`,
		`{"id": 3, "small": -7, "tags": [], "at": {"y": "v"}}`,
		`{"id": 4, "small": 9, "name": "d", "tags": ["r"], "at": {"x": 4}}`,
	}
	bad := []string{
		`{"id": 10, "small": 3000000000, "name": "over int32"}`,
		`{"id": 11, "small": 1, "name": "x", "tags": ["s", 5, "t"]}`,
		`{"id": 12, "small": 2, "tags": ["w"], "at": {"x": "not a number", "y": "z"}}`,
		`{"id": 13, "name": "cut`,
		`not json at all`,
		`{"id": "fourteen"}`,
	}
	var lines []string
	for i, g := range good {
		lines = append(lines, g)
		if i < len(bad) {
			lines = append(lines, bad[i])
		}
	}
	lines = append(lines, bad[len(good):]...)
	lines = append(lines, `{"id": 5, "small": 1, "name": "e", "tags": ["z"], "at": {"x": 5, "y": "w"}}`)
	good = append(good, lines[len(lines)-1])

	r := jsonrows.NewReader(strings.NewReader(strings.Join(lines, "\n")), nil, schema, nil, nil)
	var aside []int
	r.SetAside(func(line int, raw []byte, err error) {
		if want := lines[line-1]; string(raw) != want {
			t.Errorf("line %d set aside as %q, want %q", line, raw, want)
		}
		aside = append(aside, line)
	}, nil)
	got := readRows(t, r)
	want := readRows(t, jsonrows.NewReader(strings.NewReader(strings.Join(good, "\n")), nil, schema, nil, nil))
	if got != want {
		t.Fatalf("rows with the bad lines set aside:\n%s\nwant:\n%s", got, want)
	}
	if len(aside) != len(bad) {
		t.Fatalf("set aside lines %v, want the %d bad ones", aside, len(bad))
	}
	for _, l := range aside {
		if !strings.Contains(strings.Join(bad, "\n"), lines[l-1]) {
			t.Errorf("line %d (%s) set aside, but it is good", l, lines[l-1])
		}
	}
}

func readRows(t *testing.T, r *jsonrows.Reader) string {
	t.Helper()
	defer r.Release()
	var buf bytes.Buffer
	for r.Next() {
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			for j, c := range rec.Columns() {
				if j > 0 {
					buf.WriteString(" | ")
				}
				buf.WriteString(c.ValueStr(i))
			}
			buf.WriteString("\n")
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var _ array.RecordReader = r
	return buf.String()
}
