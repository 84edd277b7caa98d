package floe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/config"
)

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

var (
	i64 = arrow.PrimitiveTypes.Int64
	str = arrow.BinaryTypes.String
)

func wantMismatch(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("error %v, want ErrSchemaMismatch", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not contain %q", err, w)
		}
	}
}

func TestConformOrdering(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{field("a", i64, true), field("b", str, true), field("c", i64, true)}, nil)
	swapped := arrow.NewSchema([]arrow.Field{field("b", str, true), field("a", i64, true)}, nil)

	_, err := newConformer("db.t", swapped, table, conformOptions{})
	wantMismatch(t, err, `column "b" comes before "a" in the input but after it in table db.t`, "check-ordering: false")

	// Missing optional columns and case differences keep the order.
	gappy := arrow.NewSchema([]arrow.Field{field("A", i64, true), field("c", i64, true)}, nil)
	if _, err := newConformer("db.t", gappy, table, conformOptions{}); err != nil {
		t.Fatalf("input a, c against table a, b, c: %v", err)
	}

	// Off: by name, as before.
	c, err := newConformer("db.t", swapped, table, conformOptions{AllowReorder: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := recordJSON(t, swapped, `[{"b": "x", "a": 1}]`)
	defer rec.Release()
	out, err := c.conform(context.Background(), rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, want := strings.TrimSpace(recordRows(t, out)), `{"a":1,"b":"x","c":null}`; got != want {
		t.Fatalf("conformed %s, want %s", got, want)
	}
}

func TestConformOrderingNested(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, true), field("y", str, true)), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("y", str, true), field("x", i64, true)), true)}, nil)
	_, err := newConformer("db.t", in, table, conformOptions{})
	wantMismatch(t, err, `column "s.y" comes before "s.x"`)
	if _, err := newConformer("db.t", in, table, conformOptions{AllowReorder: true}); err != nil {
		t.Fatal(err)
	}
}

func TestConformNullability(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{field("id", i64, false), field("v", str, true)}, nil)
	optional := arrow.NewSchema([]arrow.Field{field("id", i64, true), field("v", str, true)}, nil)
	required := arrow.NewSchema([]arrow.Field{field("id", i64, false), field("v", str, true)}, nil)

	_, err := newConformer("db.t", optional, table, conformOptions{})
	wantMismatch(t, err, `column "id" is required in table db.t but optional in the input`, "check-nullability: false")
	if _, err := newConformer("db.t", required, table, conformOptions{}); err != nil {
		t.Fatalf("required input: %v", err)
	}

	// Off: the values are checked.
	c, err := newConformer("db.t", optional, table, conformOptions{AllowNullable: true})
	if err != nil {
		t.Fatal(err)
	}
	good := recordJSON(t, optional, `[{"id": 1, "v": null}]`)
	defer good.Release()
	out, err := c.conform(context.Background(), good, 0)
	if err != nil {
		t.Fatalf("no nulls: %v", err)
	}
	out.Release()
	bad := recordJSON(t, optional, `[{"id": 1}, {"id": null}]`)
	defer bad.Release()
	_, err = c.conform(context.Background(), bad, 10)
	wantMismatch(t, err, `column "id" is required in table db.t but row 12 is null`)
}

func TestConformNullabilityNested(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, false), field("y", str, true)), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("s", arrow.StructOf(field("x", i64, true), field("y", str, true)), true)}, nil)

	_, err := newConformer("db.t", in, table, conformOptions{})
	wantMismatch(t, err, `column "s.x" is required in table db.t but optional in the input`)

	c, err := newConformer("db.t", in, table, conformOptions{AllowNullable: true})
	if err != nil {
		t.Fatal(err)
	}
	// A null x under a null s is fine: the struct is absent, not its field.
	good := recordJSON(t, in, `[{"s": {"x": 1}}, {"s": null}]`)
	defer good.Release()
	out, err := c.conform(context.Background(), good, 0)
	if err != nil {
		t.Fatalf("null struct: %v", err)
	}
	out.Release()
	bad := recordJSON(t, in, `[{"s": {"x": 1}}, {"s": {"y": "no x"}}]`)
	defer bad.Release()
	_, err = c.conform(context.Background(), bad, 0)
	wantMismatch(t, err, `column "s.x" is required in table db.t but row 2 is null`)
}

func TestConformNullabilityList(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{field("l", arrow.ListOfNonNullable(i64), true)}, nil)
	in := arrow.NewSchema([]arrow.Field{field("l", arrow.ListOf(i64), true)}, nil)
	_, err := newConformer("db.t", in, table, conformOptions{})
	wantMismatch(t, err, `column "l.element" is required`)
	if _, err := newConformer("db.t", in, table, conformOptions{AllowNullable: true}); err != nil {
		t.Fatal(err)
	}
}

// The zero options are Spark's defaults, as are a sink's unset settings.
func TestConformOptionsFor(t *testing.T) {
	off := false
	for _, tc := range []struct {
		sink config.Sink
		want conformOptions
	}{
		{config.Sink{}, conformOptions{}},
		{config.Sink{CheckNullability: &off}, conformOptions{AllowNullable: true}},
		{config.Sink{CheckOrdering: &off}, conformOptions{AllowReorder: true}},
	} {
		if got := conformOptionsFor(&tc.sink); got != tc.want {
			t.Errorf("conformOptionsFor(%+v) = %+v, want %+v", tc.sink, got, tc.want)
		}
	}
}
