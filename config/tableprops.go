package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
)

// parquetCodecs are the write.parquet.compression-codec values floe's
// encoders write, in lower case (values are matched case-insensitively,
// as Iceberg does).
var parquetCodecs = []string{"zstd", "snappy", "gzip", "lz4", "lz4_raw", "brotli", "uncompressed", "none"}

// CheckTableProperty checks the value of a table property that floe, or
// iceberg-go writing for it, reads when writing data files; it returns nil
// for every other property. sink.table-properties are checked with it
// before a table is created, since a table created with a value the writer
// then refuses would be left behind in the catalog, and the writer checks
// an existing table's properties with it before writing a file.
func CheckTableProperty(key, value string) error {
	v := value
	switch key {
	case "write.format.default":
		if !strings.EqualFold(v, "parquet") {
			return fmt.Errorf("%q is not supported: floe writes Parquet data files only; remove the property or set it to parquet", value)
		}
	case "write.parquet.compression-codec":
		if l := strings.ToLower(v); !slices.Contains(parquetCodecs, l) {
			known := "zstd, snappy, gzip, lz4, brotli or uncompressed"
			if hint := Closest(l, parquetCodecs); hint != "" {
				return fmt.Errorf("%q is not a Parquet codec floe writes; did you mean %q? (use %s)", value, hint, known)
			}
			return fmt.Errorf("%q is not a Parquet codec floe writes; use %s", value, known)
		}
	case "write.parquet.compression-level":
		if _, err := strconv.Atoi(v); v != "" && err != nil {
			return fmt.Errorf("%q is not a whole number; give the codec's level, e.g. 3 for zstd, or remove the property for floe's default", value)
		}
	case "write.target-file-size-bytes", "write.parquet.row-group-size-bytes", "write.max-open-files", "floe.write.buffer-bytes":
		if n, err := strconv.ParseInt(v, 10, 64); v != "" && (err != nil || n <= 0) {
			example := "134217728 (128 MiB)"
			if key == "write.max-open-files" {
				example = "100"
			}
			return fmt.Errorf("%q is not a positive whole number; give a number such as %s", value, example)
		}
	case "floe.write.copy-parquet-chunks":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("%q is not true or false; set false to encode Parquet inputs again instead of copying their column chunks", value)
		}
	case "floe.write.parquet-encoder":
		if v != "parquet-go" && v != "arrow" {
			return fmt.Errorf("%q is not a Parquet encoder of floe's; use parquet-go (the default) or arrow", value)
		}
	case BloomFilterMaxBytesKey:
		// Parquet writers refuse filters outside these sizes.
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 32 || n > 128<<20 {
			return fmt.Errorf("%q is not a size from 32 bytes to 128 MiB; give a number of bytes such as 1048576 (1 MiB, the default)", value)
		}
	default:
		if key == "write.metadata.metrics.default" || strings.HasPrefix(key, "write.metadata.metrics.column.") {
			return checkMetricsMode(value)
		}
		if prefix, col, ok := bloomFilterProperty(key); ok {
			return checkBloomFilter(prefix, col, value)
		}
	}
	return nil
}

// Iceberg's table properties for Parquet bloom filters: enabled and fpp
// are prefixes of one property per column, named by the suffix.
const (
	BloomFilterEnabledPrefix = "write.parquet.bloom-filter-enabled.column."
	BloomFilterFPPPrefix     = "write.parquet.bloom-filter-fpp.column."
	BloomFilterMaxBytesKey   = "write.parquet.bloom-filter-max-bytes"
)

// bloomFilterProperty splits a per-column bloom filter property into its
// prefix and column.
func bloomFilterProperty(key string) (prefix, column string, ok bool) {
	for _, p := range []string{BloomFilterEnabledPrefix, BloomFilterFPPPrefix} {
		if c, ok := strings.CutPrefix(key, p); ok {
			return p, c, true
		}
	}
	return "", "", false
}

func checkBloomFilter(prefix, column, value string) error {
	if column == "" {
		return fmt.Errorf("names no column; append the column's name, e.g. %sid", prefix)
	}
	if prefix == BloomFilterEnabledPrefix {
		if !strings.EqualFold(value, "true") && !strings.EqualFold(value, "false") {
			return fmt.Errorf("%q is not true or false; use true to write a bloom filter on column %s", value, column)
		}
		return nil
	}
	if p, err := strconv.ParseFloat(value, 64); err != nil || math.IsNaN(p) || p <= 0 || p >= 1 {
		return fmt.Errorf("%q is not a probability between 0 and 1 (exclusive); give the false-positive rate wanted, such as 0.01 (the default)", value)
	}
	return nil
}

// CheckTablePropertyColumns checks that the per-column bloom filter
// properties in props name a primitive column of sc: a column nested in
// structs by its dotted path, none inside a list or map, whose Parquet path
// differs from its Iceberg name. A misspelt column would silently get no
// filter. It runs where the table's schema is known, before the table is
// created or written.
func CheckTablePropertyColumns(props map[string]string, sc *iceberg.Schema) error {
	columns := primitiveColumns("", sc.Fields())
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(props)) {
		_, col, ok := bloomFilterProperty(key)
		if !ok || col == "" || slices.Contains(columns, col) {
			continue
		}
		hint := ""
		if c := Closest(col, columns); c != "" {
			hint = fmt.Sprintf("did you mean %q? ", c)
		}
		errs = append(errs, fmt.Errorf("table property %s names column %q, which is not a primitive column of the table; %s(its primitive columns: %s); fix the name or remove the property",
			key, col, hint, strings.Join(columns, ", ")))
	}
	return errors.Join(errs...)
}

// primitiveColumns lists the primitive columns of fields, through structs
// only, with their dotted paths.
func primitiveColumns(prefix string, fields []iceberg.NestedField) []string {
	var cols []string
	for _, f := range fields {
		switch t := f.Type.(type) {
		case iceberg.PrimitiveType:
			cols = append(cols, prefix+f.Name)
		case *iceberg.StructType:
			cols = append(cols, primitiveColumns(prefix+f.Name+".", t.FieldList)...)
		}
	}
	return cols
}

// checkMetricsMode accepts Iceberg's metrics modes: none, counts, full and
// truncate(N) with N ≥ 1.
func checkMetricsMode(value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch v {
	case "none", "counts", "full":
		return nil
	}
	if inner, ok := strings.CutPrefix(v, "truncate("); ok {
		if n, err := strconv.Atoi(strings.TrimSuffix(inner, ")")); err == nil && n >= 1 && strings.HasSuffix(inner, ")") {
			return nil
		}
	}
	return fmt.Errorf("%q is not an Iceberg metrics mode; use none, counts, full or truncate(N) with N ≥ 1, such as truncate(16), Iceberg's default", value)
}
