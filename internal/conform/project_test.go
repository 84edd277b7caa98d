package conform

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/floe-io/floe/internal/ingest"
)

// recordJSON builds a record from JSON rows, for small readable fixtures.
func recordJSON(t *testing.T, s *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// recordRows prints a record as JSON rows, to compare with a fixture.
func recordRows(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	var b strings.Builder
	if err := array.RecordToJSON(rec, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func fieldNames(s *arrow.Schema) string {
	return fieldList(s.Fields())
}

var projInput = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "meta", Type: arrow.StructOf(
		arrow.Field{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "zone", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

const projRows = `[
{"id": 1, "name": "a", "meta": {"region": "eu", "zone": "z1"}, "n": 10},
{"id": 2, "name": "b", "meta": null, "n": 20},
{"id": 3, "name": null, "meta": {"region": null, "zone": "z3"}, "n": null}
]`

func TestProjectionNone(t *testing.T) {
	t.Parallel()
	if p := NewProjection(nil, nil, ""); p != nil {
		t.Fatalf("newProjection with nothing to do = %+v, want nil", p)
	}
}

func TestProjectionKeep(t *testing.T) {
	t.Parallel()
	rec := recordJSON(t, projInput, projRows)
	defer rec.Release()
	for _, tc := range []struct {
		name   string
		keep   []string
		fields string
		rows   string
	}{
		{"input order", []string{"n", "id"}, "id, n",
			`{"id":1,"n":10}` + "\n" + `{"id":2,"n":20}` + "\n" + `{"id":3,"n":null}`},
		{"nested", []string{"n", "meta.region", "id"}, "id, meta, n",
			`{"id":1,"meta":{"region":"eu"},"n":10}` + "\n" + `{"id":2,"meta":null,"n":20}` + "\n" + `{"id":3,"meta":{"region":null},"n":null}`},
		{"whole struct wins", []string{"meta.zone", "meta"}, "meta",
			`{"meta":{"region":"eu","zone":"z1"}}` + "\n" + `{"meta":null}` + "\n" + `{"meta":{"region":null,"zone":"z3"}}`},
		{"case-insensitive", []string{"ID", "Meta.Zone"}, "id, meta",
			`{"id":1,"meta":{"zone":"z1"}}` + "\n" + `{"id":2,"meta":null}` + "\n" + `{"id":3,"meta":{"zone":"z3"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProjection(tc.keep, nil, "")
			s, err := p.Schema(projInput)
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldNames(s); got != tc.fields {
				t.Fatalf("fields %s, want %s", got, tc.fields)
			}
			out, err := p.Apply(rec)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if !out.Schema().Equal(s) {
				t.Fatalf("record schema %s, want %s", out.Schema(), s)
			}
			if got := strings.TrimSpace(recordRows(t, out)); got != tc.rows {
				t.Fatalf("rows\n%s\nwant\n%s", got, tc.rows)
			}
		})
	}
}

func TestProjectionKeepZeroCopy(t *testing.T) {
	t.Parallel()
	rec := recordJSON(t, projInput, projRows)
	defer rec.Release()
	out, err := NewProjection([]string{"id", "meta.zone"}, nil, "").Apply(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.Column(0).Data().Buffers()[1] != rec.Column(0).Data().Buffers()[1] {
		t.Error("kept column id was copied")
	}
	in := rec.Column(2).Data()
	got := out.Column(1).Data()
	if got.Buffers()[0] != in.Buffers()[0] || got.Children()[0] != in.Children()[1] {
		t.Error("narrowed struct meta was not rebuilt from the input's buffers and children")
	}
}

func TestProjectionDrop(t *testing.T) {
	t.Parallel()
	rec := recordJSON(t, projInput, projRows)
	defer rec.Release()
	p := NewProjection(nil, []string{"name", "meta.zone"}, "")
	out, err := p.Apply(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := fieldNames(out.Schema()); got != "id, meta, n" {
		t.Fatalf("fields %s", got)
	}
	want := `{"id":1,"meta":{"region":"eu"},"n":10}` + "\n" + `{"id":2,"meta":null,"n":20}` + "\n" + `{"id":3,"meta":{"region":null},"n":null}`
	if got := strings.TrimSpace(recordRows(t, out)); got != want {
		t.Fatalf("rows\n%s\nwant\n%s", got, want)
	}
}

// A null struct gives a row of null fields, and the fields become nullable.
func TestProjectionOnly(t *testing.T) {
	t.Parallel()
	in := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.BinaryTypes.String},
		{Name: "payload", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "inner", Type: arrow.StructOf(
				arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
			), Nullable: true},
		), Nullable: true},
	}, nil)
	rec := recordJSON(t, in, `[
{"key": "k1", "payload": {"a": 1, "inner": {"b": "x"}}},
{"key": "k2", "payload": null},
{"key": "k3", "payload": {"a": 3, "inner": null}},
{"key": "k4", "payload": {"a": 4, "inner": {"b": "y"}}}
]`)
	defer rec.Release()

	p := NewProjection(nil, nil, "payload")
	s, err := p.Schema(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldNames(s); got != "a, inner" || !s.Field(0).Nullable {
		t.Fatalf("schema %s: want a (nullable), inner", s)
	}
	out, err := p.Apply(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	want := `{"a":1,"inner":{"b":"x"}}` + "\n" + `{"a":null,"inner":null}` + "\n" + `{"a":3,"inner":null}` + "\n" + `{"a":4,"inner":{"b":"y"}}`
	if got := strings.TrimSpace(recordRows(t, out)); got != want {
		t.Fatalf("rows\n%s\nwant\n%s", got, want)
	}

	// Nested only, on a slice: validity is combined along the path and
	// offsets are respected.
	sliced := rec.NewSlice(1, 4)
	defer sliced.Release()
	out2, err := NewProjection(nil, nil, "payload.inner").Apply(sliced)
	if err != nil {
		t.Fatal(err)
	}
	defer out2.Release()
	want = `{"b":null}` + "\n" + `{"b":null}` + "\n" + `{"b":"y"}`
	if got := strings.TrimSpace(recordRows(t, out2)); got != want {
		t.Fatalf("nested only on a slice\n%s\nwant\n%s", got, want)
	}
	if out2.Column(0).NullN() != 2 {
		t.Fatalf("nested only: %d nulls, want 2", out2.Column(0).NullN())
	}
}

func TestProjectionSlicedNested(t *testing.T) {
	t.Parallel()
	rec := recordJSON(t, projInput, projRows)
	defer rec.Release()
	sliced := rec.NewSlice(1, 3)
	defer sliced.Release()
	out, err := NewProjection([]string{"meta.zone"}, nil, "").Apply(sliced)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	want := `{"meta":null}` + "\n" + `{"meta":{"zone":"z3"}}`
	if got := strings.TrimSpace(recordRows(t, out)); got != want {
		t.Fatalf("rows\n%s\nwant\n%s", got, want)
	}
}

func TestProjectionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		keep, drop []string
		only       string
		want       string
	}{
		{"keep missing", []string{"id", "nope"}, nil, "", `keep: field "nope" does not exist in the input; the input has id, name, meta, n`},
		{"drop missing nested", nil, []string{"meta.nope"}, "", `drop: field "meta.nope" does not exist in the input; struct meta has region, zone`},
		{"keep through a non-struct", []string{"id.x"}, nil, "", `keep: field id is long, not a struct, so "id.x" does not exist`},
		{"only not a struct", nil, nil, "id", `only: field id is long, not a struct; only writes the fields of a struct column as the row`},
		{"only missing", nil, nil, "payload", `only: field "payload" does not exist in the input; the input has id, name, meta, n`},
		{"drop everything", nil, []string{"id", "name", "meta", "n"}, "", "leaves no column to write"},
		{"drop a whole struct's fields", nil, []string{"meta.region", "meta.zone"}, "", "leaves it empty; drop meta itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProjection(tc.keep, tc.drop, tc.only).Schema(projInput)
			if !errors.Is(err, ingest.ErrSchemaMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ingest.ErrSchemaMismatch containing %q", err, tc.want)
			}
		})
	}
}

func TestProjectionConcurrent(t *testing.T) {
	t.Parallel()
	rec := recordJSON(t, projInput, projRows)
	defer rec.Release()
	p := NewProjection(nil, []string{"name"}, "")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				// A schema equal to but not the same as the input's also hits
				// the cache.
				s := arrow.NewSchema(projInput.Fields(), nil)
				r := array.NewRecordBatch(s, rec.Columns(), rec.NumRows())
				out, err := p.Apply(r)
				r.Release()
				if err != nil {
					errs <- err
					return
				}
				out.Release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(p.plans) != 1 {
		t.Fatalf("%d cached plans, want 1", len(p.plans))
	}
}

// only: over a struct with a dictionary field and a null struct row panics.
func TestOnlyDictionaryUnderNullStruct(t *testing.T) {
	t.Parallel()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	st := arrow.StructOf(arrow.Field{Name: "d", Type: dt, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	sb := b.Field(0).(*array.StructBuilder)
	db := sb.FieldBuilder(0).(*array.BinaryDictionaryBuilder)
	sb.Append(true)
	db.AppendString("x")
	sb.AppendNull()
	db.AppendNull()
	sb.Append(true)
	db.AppendString("y")
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := NewProjection(nil, nil, "s")
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	out, err := p.Apply(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	t.Log(out)
}
