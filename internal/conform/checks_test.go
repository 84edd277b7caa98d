package conform

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
)

var (
	field = fixture.Field
	i64   = arrow.PrimitiveTypes.Int64
	str   = arrow.BinaryTypes.String
)

func wantMismatch(t *testing.T, err error, want ...string) {
	t.Helper()
	fixture.WantError(t, err, ingest.ErrSchemaMismatch, want...)
}

func TestConformOrdering(t *testing.T) {
	t.Parallel()
	table := arrow.NewSchema([]arrow.Field{field("a", i64, true), field("b", str, true), field("c", i64, true)}, nil)
	swapped := arrow.NewSchema([]arrow.Field{field("b", str, true), field("a", i64, true)}, nil)

	_, err := NewConformer("db.t", swapped, table, Options{})
	wantMismatch(t, err, `column "b" comes before "a" in the input but after it in table db.t`, "check-ordering: false")

	// Missing optional columns and case differences keep the order.
	gappy := arrow.NewSchema([]arrow.Field{field("A", i64, true), field("c", i64, true)}, nil)
	if _, err := NewConformer("db.t", gappy, table, Options{}); err != nil {
		t.Fatalf("input a, c against table a, b, c: %v", err)
	}

	// Off: by name, as before.
	c, err := NewConformer("db.t", swapped, table, Options{AllowReorder: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := recordJSON(t, swapped, `[{"b": "x", "a": 1}]`)
	defer rec.Release()
	out, err := c.Conform(context.Background(), rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, want := strings.TrimSpace(recordRows(t, out)), `{"a":1,"b":"x","c":null}`; got != want {
		t.Fatalf("conformed %s, want %s", got, want)
	}
}

func TestConformOrderingNested(t *testing.T) {
	t.Parallel()
	table := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, true), field("y", str, true)), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("y", str, true), field("x", i64, true)), true)}, nil)
	_, err := NewConformer("db.t", in, table, Options{})
	wantMismatch(t, err, `column "s.y" comes before "s.x"`)
	if _, err := NewConformer("db.t", in, table, Options{AllowReorder: true}); err != nil {
		t.Fatal(err)
	}
}

func TestConformNullability(t *testing.T) {
	t.Parallel()
	table := arrow.NewSchema([]arrow.Field{field("id", i64, false), field("v", str, true)}, nil)
	optional := arrow.NewSchema([]arrow.Field{field("id", i64, true), field("v", str, true)}, nil)
	required := arrow.NewSchema([]arrow.Field{field("id", i64, false), field("v", str, true)}, nil)

	_, err := NewConformer("db.t", optional, table, Options{})
	wantMismatch(t, err, `column "id" is required in table db.t but optional in the input`, "check-nullability: false")
	if _, err := NewConformer("db.t", required, table, Options{}); err != nil {
		t.Fatalf("required input: %v", err)
	}

	// Off: the values are checked.
	c, err := NewConformer("db.t", optional, table, Options{AllowNullable: true})
	if err != nil {
		t.Fatal(err)
	}
	good := recordJSON(t, optional, `[{"id": 1, "v": null}]`)
	defer good.Release()
	out, err := c.Conform(context.Background(), good, 0)
	if err != nil {
		t.Fatalf("no nulls: %v", err)
	}
	out.Release()
	bad := recordJSON(t, optional, `[{"id": 1}, {"id": null}]`)
	defer bad.Release()
	_, err = c.Conform(context.Background(), bad, 10)
	wantMismatch(t, err, `column "id" is required in table db.t but row 12 is null`)
}

func TestConformNullabilityNested(t *testing.T) {
	t.Parallel()
	table := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, false), field("y", str, true)), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, true), field("y", str, true)), true)}, nil)

	_, err := NewConformer("db.t", in, table, Options{})
	wantMismatch(t, err, `column "s.x" is required in table db.t but optional in the input`)

	c, err := NewConformer("db.t", in, table, Options{AllowNullable: true})
	if err != nil {
		t.Fatal(err)
	}
	// A null x under a null s is fine: the struct is absent, not its field.
	good := recordJSON(t, in, `[{"s": {"x": 1}}, {"s": null}]`)
	defer good.Release()
	out, err := c.Conform(context.Background(), good, 0)
	if err != nil {
		t.Fatalf("null struct: %v", err)
	}
	out.Release()
	bad := recordJSON(t, in, `[{"s": {"x": 1}}, {"s": {"y": "no x"}}]`)
	defer bad.Release()
	_, err = c.Conform(context.Background(), bad, 0)
	wantMismatch(t, err, `column "s.x" is required in table db.t but row 2 is null`)
}

func TestConformNullabilityList(t *testing.T) {
	t.Parallel()
	table := arrow.NewSchema([]arrow.Field{field("l", arrow.ListOfNonNullable(i64), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("l", arrow.ListOf(i64), true)}, nil)
	_, err := NewConformer("db.t", in, table, Options{})
	wantMismatch(t, err, `column "l.element" is required`)
	if _, err := NewConformer("db.t", in, table, Options{AllowNullable: true}); err != nil {
		t.Fatal(err)
	}
}

// The zero options are Spark's defaults, as are a sink's unset settings.
func TestConformOptionsFor(t *testing.T) {
	t.Parallel()
	off := false
	for _, tc := range []struct {
		sink config.Sink
		want Options
	}{
		{config.Sink{}, Options{}},
		{config.Sink{CheckNullability: &off}, Options{AllowNullable: true}},
		{config.Sink{CheckOrdering: &off}, Options{AllowReorder: true}},
	} {
		if got := OptionsFor(&tc.sink); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("conformOptionsFor(%+v) = %+v, want %+v", tc.sink, got, tc.want)
		}
	}
}
