package upsert

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// recPart is a part of records built in the test.
type recPart struct {
	name string
	recs []arrow.RecordBatch
}

func (p recPart) Name() string     { return p.name }
func (p recPart) SizeBytes() int64 { return -1 }
func (p recPart) Open(context.Context) (array.RecordReader, error) {
	for _, r := range p.recs {
		r.Retain()
	}
	return array.NewRecordReader(p.recs[0].Schema(), p.recs)
}

// changesRec builds a record of (id int64, v string, op string, seq
// int64) rows; seq < 0 is null.
func changesRec(t *testing.T, rows ...[4]any) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		if r[0] == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(r[0].(int)))
		}
		b.Field(1).(*array.StringBuilder).Append(r[1].(string))
		b.Field(2).(*array.StringBuilder).Append(r[2].(string))
		if s := r[3].(int); s < 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(int64(s))
		}
	}
	return b.NewRecordBatch()
}

// written collects the rows Upserts hands the writer, as id -> v.
func written(t *testing.T, c *Changes) map[int64]string {
	t.Helper()
	parts, err := c.Upserts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ReleaseParts(parts)
	out := map[int64]string{}
	for _, p := range parts {
		rdr, err := p.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			if rec.Schema().HasField("op") {
				t.Fatalf("the op column is written: %s", rec.Schema())
			}
			if f, _ := rec.Schema().FieldsByName("id"); f[0].Nullable {
				t.Fatal("the key column is still nullable")
			}
			ids := rec.Column(0).(*array.Int64)
			vs := rec.Column(1).(*array.String)
			for i := range ids.Len() {
				if _, dup := out[ids.Value(i)]; dup {
					t.Fatalf("key %d written twice", ids.Value(i))
				}
				out[ids.Value(i)] = vs.Value(i)
			}
		}
		rdr.Release()
	}
	return out
}

func spec(orderBy ...string) Spec {
	return Spec{Keys: []string{"id"}, OrderBy: orderBy, OpColumn: "op", Ops: config.DefaultOps, IntKey: true}
}

func TestCollectLastChangeWins(t *testing.T) {
	ctx := context.Background()
	p1 := recPart{"a", []arrow.RecordBatch{
		changesRec(t, [4]any{1, "one", "c", 3}, [4]any{2, "two", "c", 1}),
		changesRec(t, [4]any{1, "uno", "u", 1}, [4]any{3, "three", "c", 5}),
	}}
	p2 := recPart{"b", []arrow.RecordBatch{
		changesRec(t, [4]any{2, "", "d", 2}, [4]any{3, "drei", "u", 4}, [4]any{4, "", "d", 9}),
	}}
	parts := []ingest.Part{p1, p2}

	// Input order: the later file's changes win, rows in file order.
	c, err := Collect(ctx, parts, nil, spec())
	if err != nil {
		t.Fatal(err)
	}
	got := written(t, c)
	if len(got) != 2 || got[1] != "uno" || got[3] != "drei" {
		t.Errorf("input order: wrote %v, want 1=uno 3=drei", got)
	}
	if c.Keys() != 4 || c.Deletes != 2 || c.Rows != 7 {
		t.Errorf("keys %d, deletes %d, rows %d; want 4, 2, 7", c.Keys(), c.Deletes, c.Rows)
	}
	c.Release()

	// By seq: the greatest wins wherever it is.
	c, err = Collect(ctx, parts, nil, spec("seq"))
	if err != nil {
		t.Fatal(err)
	}
	got = written(t, c)
	if len(got) != 2 || got[1] != "one" || got[3] != "three" {
		t.Errorf("by seq: wrote %v, want 1=one 3=three", got)
	}
	c.Release()
}

func TestCollectNullOrderSortsFirst(t *testing.T) {
	p := recPart{"a", []arrow.RecordBatch{changesRec(t, [4]any{1, "b", "u", 1}, [4]any{1, "a", "c", -1})}}
	c, err := Collect(context.Background(), []ingest.Part{p}, nil, spec("seq"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if got := written(t, c); got[1] != "b" {
		t.Fatalf("a null seq won over 1: %v", got)
	}
}

func TestCollectBadChanges(t *testing.T) {
	for _, c := range []struct {
		name string
		rows [][4]any
		want string
	}{
		{"null key", [][4]any{{1, "a", "c", 1}, {nil, "b", "c", 2}}, "row 2: key column id is null"},
		{"unknown op", [][4]any{{1, "a", "x", 1}}, `row 1: operation code "x" in column op is not one of D, I, U, c, d, r, u`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := recPart{"f.csv", []arrow.RecordBatch{changesRec(t, c.rows...)}}
			_, err := Collect(context.Background(), []ingest.Part{p}, nil, spec())
			var bf *ingest.BadFileError
			if !errors.As(err, &bf) || bf.Path != "f.csv" || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a bad file f.csv: %s, got %v", c.want, err)
			}
		})
	}
}

// Keys compare by value whatever their width or unit: an int32 key of the
// input and an int64 key of a data file, a timestamp in milliseconds and
// one in microseconds.
func TestKeysCompareAcrossWidths(t *testing.T) {
	mem := memory.DefaultAllocator
	i32 := array.NewInt32Builder(mem)
	i32.AppendValues([]int32{7, -3}, nil)
	a32 := i32.NewArray()
	i64 := array.NewInt64Builder(mem)
	i64.AppendValues([]int64{7, -3}, nil)
	a64 := i64.NewArray()
	r32, err := newKeyReader([]arrow.Array{a32}, true)
	if err != nil {
		t.Fatal(err)
	}
	r64, _ := newKeyReader([]arrow.Array{a64}, true)
	for i := range 2 {
		if r32.int(i) != r64.int(i) {
			t.Errorf("row %d: int32 key %d, int64 key %d", i, r32.int(i), r64.int(i))
		}
	}

	at := time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	ms := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Millisecond})
	ms.Append(arrow.Timestamp(at.UnixMilli()))
	us := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	us.Append(arrow.Timestamp(at.UnixMicro()))
	rms, _ := newKeyReader([]arrow.Array{ms.NewArray()}, false)
	rus, _ := newKeyReader([]arrow.Array{us.NewArray()}, false)
	if a, b := string(rms.appendBytes(nil, 0)), string(rus.appendBytes(nil, 0)); a != b {
		t.Errorf("a timestamp in ms and in us encode differently: %x, %x", a, b)
	}
}

// A key of several columns cannot run two values into one: ("ab", "c")
// and ("a", "bc") are different keys.
func TestCompositeKeysDoNotRunTogether(t *testing.T) {
	mem := memory.DefaultAllocator
	str := func(vs ...string) arrow.Array {
		b := array.NewStringBuilder(mem)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	r, err := newKeyReader([]arrow.Array{str("ab", "a"), str("c", "bc")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := string(r.appendBytes(nil, 0)), string(r.appendBytes(nil, 1)); a == b {
		t.Fatalf("(ab, c) and (a, bc) encode alike: %x", a)
	}
}

func TestFloatKeysRefused(t *testing.T) {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.Append(1.5)
	if _, err := newKeyReader([]arrow.Array{b.NewArray()}, false); err == nil {
		t.Fatal("a float64 key column was accepted")
	}
}
