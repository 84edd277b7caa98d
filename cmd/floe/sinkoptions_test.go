package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

type describe struct {
	FormatVersion int `json:"format_version"`
	Schema        struct {
		Fields []struct {
			Name     string          `json:"name"`
			Type     json.RawMessage `json:"type"`
			Required bool            `json:"required"`
		} `json:"fields"`
		IdentifierFieldIDs []int `json:"identifier-field-ids"`
	} `json:"schema"`
	PartitionSpec any               `json:"partition_spec"`
	Properties    map[string]string `json:"properties"`
}

func (e *env) describe(table string) describe {
	e.T.Helper()
	out := e.OK("table", "describe", table, "--json").Stdout
	var d describe
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		e.T.Fatalf("describe --json: %v\n%s", err, out)
	}
	return d
}

func (d describe) columns() []string {
	var out []string
	for _, f := range d.Schema.Fields {
		var typ string
		if json.Unmarshal(f.Type, &typ) != nil {
			typ = "struct"
		}
		out = append(out, f.Name+":"+typ)
	}
	return out
}

func TestKeepDropOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 100, nil)
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--keep", "id,meta"}, []string{"id:long", "meta:struct"}},
		{[]string{"--drop", "meta"}, []string{"id:long", "region:string"}},
		{[]string{"--keep", "region,meta.kind"}, []string{"region:string", "meta:struct"}},
		{[]string{"--only", "meta"}, []string{"kind:string"}},
	} {
		name := "db.sel_" + strings.NewReplacer("-", "", ",", "_", ".", "_").Replace(strings.Join(c.flags, "_"))
		e.OK(append([]string{"stream", "--source", e.Landing, "--format", "parquet", "--table", name, "--checkpoint", filepath.Join(e.Dir, name)}, c.flags...)...)
		if got := e.describe(name).columns(); !slices.Equal(got, c.want) {
			t.Errorf("%v: table columns %v, want %v", c.flags, got, c.want)
		}
		if n := e.Count(name); n != 100 {
			t.Errorf("%v: %d rows, want 100", c.flags, n)
		}
	}
	if out := e.OK("scan", "db.sel_only_meta", "--output-format", "jsonl", "--limit", "2").Stdout; !strings.Contains(out, `{"kind":"k0"}`) || !strings.Contains(out, `{"kind":"k1"}`) {
		t.Errorf("only meta wrote %s", out)
	}
	r := e.Run("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.bad", "--checkpoint", filepath.Join(e.Dir, "bad"), "--keep", "id", "--drop", "meta")
	if r.Code != 2 || !strings.Contains(r.Stderr, "mutually exclusive") {
		t.Errorf("keep with drop: want a usage error, got %s", r)
	}
	r = e.Run("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.bad", "--checkpoint", filepath.Join(e.Dir, "bad"), "--keep", "id,nope")
	if r.Code != 1 || !strings.Contains(r.Stderr, "nope") {
		t.Errorf("keep of a missing field: want an error naming it, got %s", r)
	}
}

func TestSnapshotAndTableProperties(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.props", "--checkpoint", e.Ckpt,
		"-o", "snapshot-property.job=nightly", "-o", "snapshot-property.owner=data-eng",
		"-p", "table-default.write.parquet.compression-codec=snappy", "-p", "table-default.custom.key=v")
	e.WriteIDs("b.parquet", 10, 10)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.props", "--checkpoint", e.Ckpt,
		"-o", "snapshot-property.job=nightly", "-o", "snapshot-property.owner=data-eng")
	snaps := e.Snapshots("db.props")
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots, want 2", len(snaps))
	}
	for _, s := range snaps {
		if s.Summary["job"] != "nightly" || s.Summary["owner"] != "data-eng" {
			t.Errorf("snapshot %d summary lacks the snapshot properties: %v", s.SnapshotID, s.Summary)
		}
	}
	d := e.describe("db.props")
	if d.Properties["write.parquet.compression-codec"] != "snappy" || d.Properties["custom.key"] != "v" || d.FormatVersion != 2 {
		t.Errorf("created table has properties %v, format %d", d.Properties, d.FormatVersion)
	}
}

func TestCreateWithPipelineOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	pipeline := `source: {path: ` + e.Landing + `, format: parquet}
sink:
  table: db.created
  partition-fields: ["bucket(id, 4)"]
  identifier-fields: [id]
  format-version: 3
  check-nullability: false
checkpoint: ` + e.Ckpt + "\n"
	path := filepath.Join(e.Dir, "p.yaml")
	if err := os.WriteFile(path, []byte(pipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("run", path)
	d := e.describe("db.created")
	if d.FormatVersion != 3 || len(d.Schema.IdentifierFieldIDs) != 1 || !d.Schema.Fields[0].Required {
		t.Fatalf("created table: format %d, identifier fields %v, id required %v", d.FormatVersion, d.Schema.IdentifierFieldIDs, d.Schema.Fields[0].Required)
	}
	if n := e.Count("db.created"); n != 10 {
		t.Fatalf("%d rows, want 10", n)
	}
	if files := e.files("db.created"); len(files) < 2 {
		t.Fatalf("%d files for 4 buckets", len(files))
	}
}

// writeTyped writes one file with an int32 or int64 id, a float32 or
// float64 v and, optionally, an extra string column.
func writeTyped(t *testing.T, path string, wide, extra bool, first int) {
	t.Helper()
	idType, vType := arrow.DataType(arrow.PrimitiveTypes.Int32), arrow.DataType(arrow.PrimitiveTypes.Float32)
	if wide {
		idType, vType = arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	}
	fields := []arrow.Field{{Name: "id", Type: idType, Nullable: true}, {Name: "v", Type: vType, Nullable: true}}
	if extra {
		fields = append(fields, arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := first; i < first+10; i++ {
		if wide {
			b.Field(0).(*array.Int64Builder).Append(int64(i) + 1<<40)
			b.Field(1).(*array.Float64Builder).Append(float64(i) + 0.1)
		} else {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
			b.Field(1).(*array.Float32Builder).Append(float32(i))
		}
		if extra {
			b.Field(2).(*array.StringBuilder).Append("x")
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaEvolution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeTyped(t, filepath.Join(e.Landing, "a.parquet"), false, false, 0)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.evolve", "--checkpoint", e.Ckpt}
	e.OK(args...)
	if got := e.describe("db.evolve").columns(); !slices.Equal(got, []string{"id:int", "v:float"}) {
		t.Fatalf("created with %v", got)
	}
	writeTyped(t, filepath.Join(e.Landing, "b.parquet"), true, true, 10)
	r := e.Run(args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, `column "v" has type double in the input but float in table db.evolve`) {
		t.Fatalf("a wider input without schema evolution: want an error naming the column and both types, got %s", r)
	}
	if n := e.Count("db.evolve"); n != 10 {
		t.Fatalf("the refused batch changed the table: %d rows", n)
	}
	e.OK(append(args, "--schema-evolution", "add-columns")...)
	if got := e.describe("db.evolve").columns(); !slices.Equal(got, []string{"id:long", "v:double", "extra:string"}) {
		t.Fatalf("evolved to %v, want id long, v double, extra string", got)
	}
	out := e.OK("scan", "db.evolve", "--output-format", "jsonl").Stdout
	if n := strings.Count(out, "\n"); n != 20 {
		t.Fatalf("%d rows after evolution, want 20", n)
	}
	if !strings.Contains(out, `{"extra":"x","id":1099511627786,"v":10.1}`) || !strings.Contains(out, `{"extra":null,"id":0,"v":0}`) {
		t.Fatalf("evolved rows wrong:\n%s", out)
	}
}

// The first batch of a query evolves an existing table too: each table is
// evolved once in every batch, batch 0 included.
func TestSchemaEvolutionOnFirstBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeTyped(t, filepath.Join(e.Landing, "a.parquet"), false, false, 0)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.evolve", "--checkpoint", e.Ckpt)
	// A second query, from another landing directory, starts at batch 0.
	landing := filepath.Join(e.Dir, "landing2")
	writeTyped(t, filepath.Join(landing, "b.parquet"), true, true, 10)
	e.OK("stream", "--source", landing, "--format", "parquet", "--table", "db.evolve",
		"--checkpoint", filepath.Join(e.Dir, "ckpt2"), "--schema-evolution", "add-columns")
	if got := e.describe("db.evolve").columns(); !slices.Equal(got, []string{"id:long", "v:double", "extra:string"}) {
		t.Fatalf("evolved to %v, want id long, v double, extra string", got)
	}
	if n := e.Count("db.evolve"); n != 20 {
		t.Fatalf("%d rows, want 20", n)
	}
}

// A nullable input column for a required table column: refused at once with
// check-nullability (the default); with it off, only rows with nulls fail.
func TestCheckNullability(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	required := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, required)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	if err := fixture.WriteParquet(filepath.Join(e.Landing, "a.parquet"), rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	pipeline := func(check bool) string {
		p := filepath.Join(e.Dir, "p.yaml")
		c := "true"
		if !check {
			c = "false"
		}
		text := `source: {path: ` + e.Landing + `, format: parquet}
sink: {table: db.req, identifier-fields: [id], check-nullability: ` + c + `}
checkpoint: ` + e.Ckpt + "\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e.OK("run", pipeline(true))
	// A nullable column without nulls.
	idSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	writeIDOnly := func(name string, ids []int64, valid []bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema)
		b.Field(0).(*array.Int64Builder).AppendValues(ids, valid)
		rec := b.NewRecordBatch()
		b.Release()
		defer rec.Release()
		if err := fixture.WriteParquet(filepath.Join(e.Landing, name), rec); err != nil {
			t.Fatal(err)
		}
	}
	writeIDOnly("b.parquet", []int64{10, 11, 12, 13, 14}, nil)
	r := e.Run("run", pipeline(true))
	if r.Code != 1 || !strings.Contains(r.Stderr, "id") || !strings.Contains(r.Stderr, "check-nullability") {
		t.Fatalf("nullable input for a required column: want a refusal naming check-nullability, got %s", r)
	}
	e.OK("run", pipeline(false))
	if n := e.Count("db.req"); n != 8 {
		t.Fatalf("%d rows, want 8", n)
	}
	// And a real null fails its file even then.
	writeIDOnly("c.parquet", []int64{20, 0, 22}, []bool{true, false, true})
	r = e.Run("run", pipeline(false))
	if r.Code != 1 || !strings.Contains(r.Stderr, "c.parquet") || !strings.Contains(r.Stderr, "null") {
		t.Fatalf("a null in a required column: want an error naming the file, got %s", r)
	}
	if n := e.Count("db.req"); n != 8 {
		t.Fatalf("the failed batch changed the table: %d rows", n)
	}
}
