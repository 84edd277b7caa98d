package config_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/config"
)

// Iceberg's bloom filter properties are checked as the writer reads them:
// true or false, a probability, a size Parquet writers accept, and a
// column named.
func TestCheckBloomFilterProperties(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key, value string
		want       string // "" when the value is accepted
	}{
		{"write.parquet.bloom-filter-enabled.column.id", "true", ""},
		{"write.parquet.bloom-filter-enabled.column.id", "FALSE", ""},
		{"write.parquet.bloom-filter-enabled.column.id", "yes", "not true or false"},
		{"write.parquet.bloom-filter-enabled.column.", "true", "names no column"},
		{"write.parquet.bloom-filter-fpp.column.id", "0.001", ""},
		{"write.parquet.bloom-filter-fpp.column.id", "1", "between 0 and 1"},
		{"write.parquet.bloom-filter-fpp.column.id", "0", "between 0 and 1"},
		{"write.parquet.bloom-filter-fpp.column.id", "NaN", "between 0 and 1"},
		{"write.parquet.bloom-filter-fpp.column.id", "1%", "between 0 and 1"},
		{"write.parquet.bloom-filter-max-bytes", "1048576", ""},
		{"write.parquet.bloom-filter-max-bytes", "32", ""},
		{"write.parquet.bloom-filter-max-bytes", "16", "from 32 bytes to 128 MiB"},
		{"write.parquet.bloom-filter-max-bytes", "268435456", "from 32 bytes to 128 MiB"},
		{"write.parquet.bloom-filter-max-bytes", "1MB", "from 32 bytes to 128 MiB"},
	} {
		err := config.CheckTableProperty(c.key, c.value)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s=%q: %v, want it accepted", c.key, c.value, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s=%q: error %v, want one saying %q", c.key, c.value, err, c.want)
		}
	}
}

// A per-column bloom filter property must name a primitive column of the
// table, nested in structs by its dotted path, never inside a list; the
// error says which property, the likely name and the columns.
func TestCheckTablePropertyColumns(t *testing.T) {
	t.Parallel()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 5, Name: "tags", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.String}},
	)
	ok := map[string]string{
		"write.parquet.bloom-filter-enabled.column.id":          "true",
		"write.parquet.bloom-filter-fpp.column.addr.city":       "0.02",
		"write.parquet.compression-codec":                       "zstd",
		"write.metadata.metrics.column.not_checked_here_at_all": "none",
	}
	if err := config.CheckTablePropertyColumns(ok, sc); err != nil {
		t.Fatal(err)
	}
	err := config.CheckTablePropertyColumns(map[string]string{
		"write.parquet.bloom-filter-enabled.column.nme":          "true",
		"write.parquet.bloom-filter-fpp.column.addr":             "0.02",
		"write.parquet.bloom-filter-enabled.column.tags.element": "true",
	}, sc)
	for _, want := range []string{
		`write.parquet.bloom-filter-enabled.column.nme names column "nme"`, `did you mean "name"?`,
		`write.parquet.bloom-filter-fpp.column.addr names column "addr"`, "(its primitive columns: id, name, addr.city)",
		`write.parquet.bloom-filter-enabled.column.tags.element names column "tags.element"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
}
