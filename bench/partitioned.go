package bench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
)

// PartitionFields is the partition spec of the partitioned ingest, in
// floe's configuration syntax: a day of ts, then category as it is. The
// events datasets span under two hours from midnight, so every row falls
// on one day and the table has one partition per category.
var PartitionFields = []string{"day(ts)", "category"}

// Partitions is the number of partitions PartitionFields gives an events
// dataset: one day × 100 categories (each dataset large enough to draw
// every category; the tiny test one of 6,000 rows does).
const Partitions = 1 * categories

// PartitionedContenders are measured side by side by
// BenchmarkIngestPartitioned, in this order.
var PartitionedContenders = []Contender{
	{Name: "floe", Run: FloePartitioned},
	{Name: "iceberg-go", Run: IcebergGoPartitioned},
	{Name: "iceberg-go-one-append", Run: IcebergGoPartitionedOnce},
}

// FloePartitioned is Floe creating the table with PartitionFields, so that
// it writes one file per partition per batch (its fanout writer, the
// default).
func FloePartitioned(ctx context.Context, ds Dataset, work string) (Result, error) {
	return floeIngest(ctx, "floe", ds, work, func(s *config.Sink) {
		s.PartitionFields = PartitionFields
	})
}

// IcebergGoPartitioned is IcebergGo on a table created with the same spec
// (fields ts_day and category): one Append per input file, each written by
// iceberg-go's default partitioned fanout writer.
func IcebergGoPartitioned(ctx context.Context, ds Dataset, work string) (Result, error) {
	return icebergGoIngest(ctx, "iceberg-go", ds, work, eventsPartitionSpec)
}

// IcebergGoPartitionedOnce is IcebergGoPartitioned with all the input in
// one Append, as floe's single batch takes it: the peer's fewest files and
// commits.
func IcebergGoPartitionedOnce(ctx context.Context, ds Dataset, work string) (Result, error) {
	const name = "iceberg-go-one-append"
	var cat catalog.Catalog
	cost, err := measure(func() error {
		var tbl *table.Table
		var err error
		if cat, tbl, err = createIcebergGoTable(ctx, work, eventsPartitionSpec); err != nil {
			return err
		}
		rdr := &chainReader{ctx: ctx, paths: ds.Paths}
		defer rdr.Release()
		if _, err = tbl.Append(ctx, rdr, nil); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		return rdr.Err()
	})
	if cat != nil {
		defer closeCatalog(cat)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	return tableResult(ctx, name, cat, cost)
}

// chainReader reads the input files one after another as one stream.
type chainReader struct {
	ctx   context.Context
	paths []string
	cur   array.RecordReader
	err   error
}

func (c *chainReader) Schema() *arrow.Schema { return Schema }

func (c *chainReader) Next() bool {
	for c.err == nil {
		if c.cur != nil && c.cur.Next() {
			return true
		}
		if c.cur != nil {
			if err := c.cur.Err(); err != nil && !errors.Is(err, io.EOF) {
				c.err = err
				return false
			}
			c.cur.Release()
			c.cur = nil
		}
		if len(c.paths) == 0 {
			return false
		}
		c.cur, c.err = openParquet(c.ctx, c.paths[0])
		c.paths = c.paths[1:]
	}
	return false
}

func (c *chainReader) RecordBatch() arrow.RecordBatch { return c.cur.RecordBatch() }
func (c *chainReader) Record() arrow.RecordBatch      { return c.cur.RecordBatch() }
func (c *chainReader) Err() error                     { return c.err }
func (c *chainReader) Retain()                        {}
func (c *chainReader) Release() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}

// eventsPartitionSpec is PartitionFields as an iceberg-go spec.
func eventsPartitionSpec(sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	return iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldByName("ts", "ts_day", iceberg.DayTransform{}, sc, nil),
		iceberg.AddPartitionFieldByName("category", "category", iceberg.IdentityTransform{}, sc, nil),
	)
}
