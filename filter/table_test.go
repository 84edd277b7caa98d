package filter_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// testSchema is the table every evaluation test filters; all columns are
// optional so every predicate meets nulls.
var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
	iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
	iceberg.NestedField{ID: 5, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	iceberg.NestedField{ID: 6, Name: "d", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 7, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
	iceberg.NestedField{ID: 8, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 9, Name: "a", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.Int32},
		{ID: 15, Name: "c", Type: iceberg.PrimitiveTypes.String},
	}}},
	iceberg.NestedField{ID: 10, Name: "odd name", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 12, Name: "tz", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 13, Name: "t", Type: iceberg.PrimitiveTypes.Time},
	iceberg.NestedField{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	iceberg.NestedField{ID: 16, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
	iceberg.NestedField{ID: 17, Name: "fx", Type: iceberg.FixedTypeOf(3)},
)

// row holds one row as plain Go values; nil is NULL. a is nil when the
// struct itself is null and holds nils when only its fields are.
type row map[string]any

var statuses = []string{"ACTIVE", "INACTIVE", "active", "PENDING", "A_B", "100%", "it's", "", "ACT", "état", "¿qué?"}

// testRows generates rows deterministically, each column null now and then
// at its own rhythm so nulls combine in every way.
func testRows() []row {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []row
	for i := range 240 {
		r := row{
			"id":       int64(i - 20),
			"n":        int32(i%17 - 8),
			"status":   statuses[i%len(statuses)],
			"price":    big.NewRat(int64(i*37%2000), 100),
			"ts":       base.Add(time.Duration(i*7) * time.Hour).Add(time.Duration(i%3) * 1500 * time.Millisecond),
			"d":        base.AddDate(0, 0, i%45-10),
			"flag":     i%3 == 0,
			"score":    float64(i%13) * 0.25,
			"a":        map[string]any{"b": int32(i % 7), "c": statuses[i%5]},
			"odd name": fmt.Sprintf("x%d", i%4),
			"tz":       base.Add(time.Duration(i) * 30 * time.Minute),
			"t":        time.Duration(i*47%1440) * time.Minute,
			"u":        uuid.UUID{byte(i * 53), byte(i), 0x40, 0, 0x80, 15: byte(i % 5)},
			"bin":      []byte{byte(i % 4), byte(i % 3 * 0x7f)}[:i%3],
			"fx":       []byte{byte(i % 5), byte(i % 2 * 0xff), byte(i % 7)},
		}
		for j, name := range []string{"id", "n", "status", "price", "ts", "d", "flag", "score", "a", "odd name", "tz", "t", "u", "bin", "fx"} {
			if (i+3*j)%(7+j) == 0 {
				r[name] = nil
			}
		}
		if i%11 == 0 && r["a"] != nil {
			r["a"] = map[string]any{"b": nil, "c": nil}
		}
		rows = append(rows, r)
	}
	return rows
}

// record builds the Arrow record of rows with iceberg-go's Arrow schema
// for testSchema, as a scan would return it.
func record(t testing.TB, rows []row) arrow.RecordBatch {
	t.Helper()
	asc, err := table.SchemaToArrowSchema(testSchema, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for _, r := range rows {
		for i, f := range asc.Fields() {
			v := r[f.Name]
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.Int32Builder:
				fb.Append(v.(int32))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromBigInt(new(big.Int).Quo(new(big.Int).Mul(v.(*big.Rat).Num(), big.NewInt(100)), v.(*big.Rat).Denom())))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(v.(time.Duration).Microseconds()))
			case *extensions.UUIDBuilder:
				fb.Append(v.(uuid.UUID))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
			case *array.Date32Builder:
				fb.Append(arrow.Date32FromTime(v.(time.Time)))
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.BinaryBuilder:
				fb.Append(v.([]byte))
			case *array.FixedSizeBinaryBuilder:
				fb.Append(v.([]byte))
			case *array.StructBuilder:
				fb.Append(true)
				a := v.(map[string]any)
				bb, cb := fb.FieldBuilder(0).(*array.Int32Builder), fb.FieldBuilder(1).(*array.StringBuilder)
				if a["b"] == nil {
					bb.AppendNull()
				} else {
					bb.Append(a["b"].(int32))
				}
				if a["c"] == nil {
					cb.AppendNull()
				} else {
					cb.Append(a["c"].(string))
				}
			default:
				t.Fatalf("no builder for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// structRow adapts a row to iceberg-go's StructLike, for evaluating Pushed
// with iceberg.ExpressionEvaluator.
type structRow []any

func (s structRow) Size() int          { return len(s) }
func (s structRow) Get(pos int) any    { return s[pos] }
func (s structRow) Set(pos int, v any) { s[pos] = v }

func icebergRow(r row) structRow {
	var out structRow
	for _, f := range testSchema.Fields() {
		v := r[f.Name]
		switch x := v.(type) {
		case *big.Rat:
			n := new(big.Int).Quo(new(big.Int).Mul(x.Num(), big.NewInt(100)), x.Denom())
			v = iceberg.Decimal{Val: decimal128.FromBigInt(n), Scale: 2}
		case time.Time:
			if f.Name == "d" {
				v = iceberg.Date(x.Unix() / 86400)
			} else {
				v = iceberg.Timestamp(x.UnixMicro())
			}
		case time.Duration:
			v = iceberg.Time(x.Microseconds())
		case map[string]any:
			v = structRow{x["b"], x["c"]}
		}
		out = append(out, v)
	}
	return out
}

func lower(s string) string { return strings.ToLower(s) }

func icebergSchemaIdAndID() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ID", Type: iceberg.PrimitiveTypes.Int64},
	)
}
