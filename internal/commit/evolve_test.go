package commit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/write"
)

var (
	field = fixture.Field
	i64   = arrow.PrimitiveTypes.Int64
	str   = arrow.BinaryTypes.String
)

func createEvolveTable(t *testing.T, cat catalog.Catalog, s *arrow.Schema) *table.Table {
	t.Helper()
	c := &commit.Committer{Catalog: cat, Ident: table.Identifier{"db", "evolve"}}
	tbl, err := c.Create(context.Background(), s, commit.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func tableArrow(t *testing.T, tbl *table.Table) *arrow.Schema {
	t.Helper()
	s, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reload reads the table back from the catalog, to check what was committed.
func reload(t *testing.T, cat catalog.Catalog, tbl *table.Table) *table.Table {
	t.Helper()
	out, err := cat.LoadTable(context.Background(), tbl.Identifier())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEvolveAddColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	tbl := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{
		field("id", i64, false),
		field("meta", arrow.StructOf(field("region", str, true)), true),
	}, nil))
	in := arrow.NewSchema([]arrow.Field{
		field("new_first", str, true),
		field("id", i64, false),
		field("name", str, false),
		field("meta", arrow.StructOf(field("region", str, true), field("zone", str, true)), true),
		field("tags", arrow.ListOf(arrow.StructOf(field("k", str, false))), true),
	}, nil)
	out, err := commit.EvolveSchema(ctx, cat, tbl, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := reload(t, cat, out).Schema()
	want := "table {\n" +
		"\t4: new_first: optional string\n" +
		"\t1: id: required long\n" +
		"\t5: name: optional string\n" +
		"\t2: meta: optional struct<3: region: optional string, 6: zone: optional string>\n" +
		"\t7: tags: optional list<struct<9: k: optional string>>\n" +
		"}"
	if got.String() != want {
		t.Fatalf("evolved schema\n%s\nwant\n%s", got, want)
	}
	if got.ID == tbl.Schema().ID {
		t.Fatalf("schema id %d unchanged", got.ID)
	}
	// The conformer now accepts the input, with Spark's checks on.
	if _, err := conform.NewConformer("db.evolve", in, tableArrow(t, out), conform.Options{}); err != nil {
		t.Fatalf("conformer after evolution: %v", err)
	}
	// Evolving again is a no-op.
	again, err := commit.EvolveSchema(ctx, cat, out, in, nil)
	if err != nil || again != out {
		t.Fatalf("second evolution: %v, same table %v", err, again == out)
	}
}

func TestEvolveAddNestedInList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	tbl := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{
		field("tags", arrow.ListOf(arrow.StructOf(field("k", str, true))), true),
		field("m", arrow.MapOf(str, arrow.StructOf(field("a", i64, true))), true),
	}, nil))
	in := arrow.NewSchema([]arrow.Field{
		field("tags", arrow.ListOf(arrow.StructOf(field("k", str, true), field("v", str, true))), true),
		field("m", arrow.MapOf(str, arrow.StructOf(field("a", i64, true), field("b", str, true))), true),
	}, nil)
	out, err := commit.EvolveSchema(ctx, cat, tbl, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := reload(t, cat, out).Schema()
	for _, name := range []string{"tags.element.v", "m.value.b"} {
		if f, ok := s.FindFieldByName(name); !ok || f.Required {
			t.Fatalf("field %s: %+v, %v; want it added, optional\n%s", name, f, ok, s)
		}
	}
	if _, err := conform.NewConformer("db.evolve", in, tableArrow(t, out), conform.Options{}); err != nil {
		t.Fatalf("conformer after evolution: %v", err)
	}
}

func TestEvolveWidens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	old := arrow.NewSchema([]arrow.Field{
		field("i", arrow.PrimitiveTypes.Int32, true),
		field("f", arrow.PrimitiveTypes.Float32, true),
		field("d", &arrow.Decimal128Type{Precision: 10, Scale: 2}, true),
		field("s", arrow.StructOf(field("n", arrow.PrimitiveTypes.Int32, true)), true),
	}, nil)
	tbl := createEvolveTable(t, cat, old)
	in := arrow.NewSchema([]arrow.Field{
		field("i", i64, true),
		field("f", arrow.PrimitiveTypes.Float64, true),
		field("d", &arrow.Decimal128Type{Precision: 12, Scale: 2}, true),
		field("s", arrow.StructOf(field("n", i64, true)), true),
	}, nil)
	out, err := commit.EvolveSchema(ctx, cat, tbl, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := reload(t, cat, out).Schema()
	for name, want := range map[string]iceberg.Type{
		"i":   iceberg.PrimitiveTypes.Int64,
		"f":   iceberg.PrimitiveTypes.Float64,
		"d":   iceberg.DecimalTypeOf(12, 2),
		"s.n": iceberg.PrimitiveTypes.Int64,
	} {
		f, ok := s.FindFieldByName(name)
		if !ok || !f.Type.Equals(want) {
			t.Fatalf("column %s is %v, want %s\n%s", name, f.Type, want, s)
		}
	}
	// New and old inputs both fit the widened table.
	for _, sc := range []*arrow.Schema{in, old} {
		if _, err := conform.NewConformer("db.evolve", sc, tableArrow(t, out), conform.Options{}); err != nil {
			t.Fatalf("conformer for %s after evolution: %v", sc, err)
		}
	}
}

// A table that already accepts the input is not touched: same metadata
// file, snapshot and schema.
func TestEvolveUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	tbl := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{
		field("id", i64, true),
		field("x", arrow.PrimitiveTypes.Float64, true),
		field("name", str, true),
	}, nil))
	// Narrower inputs, other spellings and only-null columns all fit.
	in := arrow.NewSchema([]arrow.Field{
		field("ID", arrow.PrimitiveTypes.Int32, false),
		field("x", i64, true),
		field("name", arrow.Null, true),
	}, nil)
	out, err := commit.EvolveSchema(ctx, cat, tbl, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out != tbl {
		t.Fatal("evolveSchema returned another table for a schema the table accepts")
	}
	after := reload(t, cat, tbl)
	if after.MetadataLocation() != tbl.MetadataLocation() || after.Schema().ID != tbl.Schema().ID || after.CurrentSnapshot() != nil {
		t.Fatalf("table changed: metadata %s -> %s, schema %d -> %d", tbl.MetadataLocation(), after.MetadataLocation(), tbl.Schema().ID, after.Schema().ID)
	}
}

func TestEvolveRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	tbl := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{
		field("id", i64, true),
		field("s", arrow.StructOf(field("v", arrow.PrimitiveTypes.Float64, true)), true),
		field("d", &arrow.Decimal128Type{Precision: 10, Scale: 2}, true),
	}, nil))
	for _, tc := range []struct {
		name string
		in   arrow.Field
		want []string
	}{
		{"string into long", field("id", str, true), []string{`column "id" is string in the input but long in table db.evolve`, "convert the input"}},
		{"struct into long", field("id", arrow.StructOf(field("a", i64, true)), true), []string{`column "id"`, "long in table db.evolve"}},
		{"nested string into double", field("s", arrow.StructOf(field("v", str, true)), true), []string{`column "s.v" is string in the input but double`}},
		{"decimal scale", field("d", &arrow.Decimal128Type{Precision: 12, Scale: 3}, true), []string{`column "d"`, "decimal(10, 2) in table"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := commit.EvolveSchema(ctx, cat, tbl, arrow.NewSchema([]arrow.Field{tc.in}, nil), nil)
			fixture.WantError(t, err, ingest.ErrSchemaMismatch, tc.want...)
			if after := reload(t, cat, tbl); after.MetadataLocation() != tbl.MetadataLocation() {
				t.Fatal("a refused evolution changed the table")
			}
		})
	}
}

// An evolution from stale metadata loses the race, reloads and plans again.
func TestEvolveConflictRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	stale := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{field("id", i64, true)}, nil))
	if _, err := commit.EvolveSchema(ctx, cat, stale, arrow.NewSchema([]arrow.Field{field("id", i64, true), field("a", str, true)}, nil), nil); err != nil {
		t.Fatal(err)
	}
	out, err := commit.EvolveSchema(ctx, cat, stale, arrow.NewSchema([]arrow.Field{field("id", i64, true), field("b", str, true)}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := reload(t, cat, out).Schema()
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ", "); got != "id, b, a" {
		t.Fatalf("columns %s, want id, b, a (b placed after id, as in its input)", got)
	}
}

// After evolution the writer writes and commits records of the new schema
// (added top-level and nested columns, a widened one).
func TestEvolveThenWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := fixture.Catalog(t)
	tbl := createEvolveTable(t, cat, arrow.NewSchema([]arrow.Field{
		field("id", arrow.PrimitiveTypes.Int32, true),
		field("meta", arrow.StructOf(field("region", str, true)), true),
	}, nil))
	in := arrow.NewSchema([]arrow.Field{
		field("id", i64, true),
		field("name", str, true),
		field("meta", arrow.StructOf(field("region", str, true), field("zone", str, true)), true),
	}, nil)
	tbl, err := commit.EvolveSchema(ctx, cat, tbl, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := fixture.Record(t, in, `[{"id": 5000000000, "name": "a", "meta": {"region": "eu", "zone": "z"}}, {"id": 2, "meta": null}]`)
	defer rec.Release()
	w := &write.Writer{Table: tbl, FilePrefix: "evolve"}
	res, err := w.Write(ctx, []ingest.Part{fixture.Part{Records: []arrow.RecordBatch{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &commit.Committer{Catalog: cat, Ident: tbl.Identifier(), QueryID: "q"}
	if _, err := c.Commit(ctx, commit.Request{BatchID: 0, Files: res.Files}); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 2 {
		t.Fatalf("wrote %d rows, want 2", res.Rows)
	}
}
