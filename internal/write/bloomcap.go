package write

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// BloomSizedFor returns tbl as iceberg-go's writer is to see it for files
// of at most rows rows (equality deletes, compaction of format v3 tables):
// with write.parquet.bloom-filter-max-bytes cut to what a filter of rows
// values needs at the table's false-positive rate. That writer (arrow-go's,
// without adaptive filters) makes every bloom filter the maximum size
// whatever the file holds: 1 MiB for an equality delete of 3 keys. floe's
// own writer sizes its filters from the rows it writes (fileOptions).
// tbl itself is returned when it has no bloom filter or the maximum is
// already no larger; the copy only writes files, never commits.
func BloomSizedFor(tbl *table.Table, rows int64) (*table.Table, error) {
	p := tbl.Properties()
	maxBytes, err := intProp(p, table.ParquetBloomFilterMaxBytesKey, table.ParquetBloomFilterMaxBytesDefault)
	if err != nil {
		return nil, err
	}
	fpp, found := 0.0, false
	for key, v := range p {
		name, ok := strings.CutPrefix(key, config.BloomFilterEnabledPrefix)
		if !ok || !strings.EqualFold(v, "true") {
			continue
		}
		f := bloomFPPDefault
		if s, ok := p[config.BloomFilterFPPPrefix+name]; ok {
			if x, err := strconv.ParseFloat(s, 64); err == nil && x > 0 && x < 1 {
				f = x
			}
		}
		if !found || f < fpp {
			fpp, found = f, true
		}
	}
	if !found {
		return tbl, nil
	}
	// arrow-go rounds the size up to a power of two, at least 32 bytes.
	need := max(32, int64(math.Ceil(float64(max(rows, 1))*math.Ceil(bloomBitsPerValue(fpp))/8)))
	if need >= maxBytes {
		return tbl, nil
	}
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := b.SetProperties(iceberg.Properties{table.ParquetBloomFilterMaxBytesKey: strconv.FormatInt(need, 10)}); err != nil {
		return nil, err
	}
	md, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("size the bloom filters of table %s: %w", ingest.JoinIdent(tbl.Identifier()), err)
	}
	return table.New(tbl.Identifier(), md, tbl.MetadataLocation(), tbl.FS, nil), nil
}
