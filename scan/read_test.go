package scan

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Initial defaults in the spec's single-value JSON forms, which iceberg-go
// rejects for several types, parse to the values floe fills columns with.
func TestParseDefault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		typ  iceberg.Type
		want string
	}{
		{`342342`, iceberg.PrimitiveTypes.Int32, "342342"},
		{`-9223372036854775808`, iceberg.PrimitiveTypes.Int64, "-9223372036854775808"},
		{`"12345.00"`, iceberg.DecimalTypeOf(16, 2), "1234500"},
		{`"2003-10-20"`, iceberg.PrimitiveTypes.Date, "12345"},
		{`"00:00:00.012345"`, iceberg.PrimitiveTypes.Time, "12345"},
		{`"1970-01-01T00:00:00.012345+00:00"`, iceberg.PrimitiveTypes.TimestampTz, "12345"},
		{`"0102"`, iceberg.PrimitiveTypes.Binary, "[1 2]"},
	} {
		v, err := parseDefault(json.RawMessage(c.raw), c.typ)
		if err != nil {
			t.Errorf("%s as %s: %v", c.raw, c.typ, err)
			continue
		}
		got := ""
		switch x := v.(type) {
		case int64:
			got = jsonNum(x)
		case iceberg.Date:
			got = jsonNum(int64(x))
		case iceberg.Time:
			got = jsonNum(int64(x))
		case iceberg.Timestamp:
			got = jsonNum(int64(x))
		default:
			got = fmtAny(v)
		}
		if got != c.want {
			t.Errorf("%s as %s = %s, want %s", c.raw, c.typ, got, c.want)
		}
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

func fmtAny(v any) string {
	if d, ok := v.(interface{ BigInt() *big.Int }); ok {
		return d.BigInt().String()
	}
	return fmt.Sprint(v)
}

// A struct column read with uuid as fixed[16] is relabelled as the uuid
// extension type over the same bytes, nulls kept.
func TestRelabelUUIDInStruct(t *testing.T) {
	t.Parallel()
	fixedT := arrow.StructOf(arrow.Field{Name: "u", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true})
	uuidT := arrow.StructOf(arrow.Field{Name: "u", Type: extensions.NewUUIDType(), Nullable: true})
	b := array.NewStructBuilder(memory.DefaultAllocator, fixedT)
	defer b.Release()
	fb := b.FieldBuilder(0).(*array.FixedSizeBinaryBuilder)
	u := uuid.MustParse("020d4fc7-acd6-45ac-b216-7873f4038e1f")
	b.Append(true)
	fb.Append(u[:])
	b.Append(true)
	fb.AppendNull()
	arr := b.NewArray()
	defer arr.Release()
	d, err := relabelData(arr.Data(), uuidT)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	got := array.MakeFromData(d)
	defer got.Release()
	child := got.(*array.Struct).Field(0)
	ua, ok := child.(*extensions.UUIDArray)
	if !ok {
		t.Fatalf("child is %T, want a uuid array", child)
	}
	if ua.Value(0) != u || !ua.IsNull(1) {
		t.Fatalf("got %v, null=%v", ua.Value(0), ua.IsNull(1))
	}
	if _, err := relabelData(arr.Data(), arrow.PrimitiveTypes.Int64); err == nil {
		t.Fatal("relabelling a struct as int64 must fail")
	}
}

// A field of a struct column that the file lacks is filled with its
// initial default in every row; the struct's own nulls are kept.
func TestReplaceNestedDefault(t *testing.T) {
	t.Parallel()
	st := arrow.StructOf(
		arrow.Field{Name: "col1", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	b := array.NewStructBuilder(memory.DefaultAllocator, st)
	defer b.Release()
	for i, valid := range []bool{true, false, true} {
		if !valid {
			b.AppendNull() // appends a null to each field too
			continue
		}
		b.Append(true)
		b.FieldBuilder(0).(*array.StringBuilder).Append(fmt.Sprint(i))
		b.FieldBuilder(1).(*array.Int64Builder).AppendNull()
	}
	arr := b.NewArray()
	defer arr.Release()
	sliced := array.NewSlice(arr, 1, 3) // exercise the struct offset
	defer sliced.Release()
	fx := fix{path: []int{0, 1}, field: iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int64}, value: json.RawMessage(`-9223372036854775808`)}
	d, err := replaceNested(sliced.Data(), fx.path[1:], fx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	got := array.MakeFromData(d).(*array.Struct)
	defer got.Release()
	n := got.Field(1).(*array.Int64)
	if !got.IsNull(0) || got.IsNull(1) || n.Value(1) != -9223372036854775808 || got.Field(0).(*array.String).Value(1) != "2" {
		t.Fatalf("got %v", got)
	}
}

// Avro resolution errors of a manifest list written with nullable unions for
// required fields name the field.
func TestAvroMismatchMessage(t *testing.T) {
	t.Parallel()
	m := avroMismatch.FindStringSubmatch("ocf: resolving reader schema: avro: incompatible at manifest_path: reader string vs writer null: incompatible types")
	if m == nil || m[1] != "manifest_path" || m[2] != "string" || m[3] != "null" {
		t.Fatalf("got %q", m)
	}
}
