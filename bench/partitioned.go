package bench

import (
	"context"

	"github.com/apache/iceberg-go"

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
	return icebergGoAppend(ctx, "iceberg-go-one-append", ds, work, eventsPartitionSpec)
}

// eventsPartitionSpec is PartitionFields as an iceberg-go spec.
func eventsPartitionSpec(sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	return iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldByName("ts", "ts_day", iceberg.DayTransform{}, sc, nil),
		iceberg.AddPartitionFieldByName("category", "category", iceberg.IdentityTransform{}, sc, nil),
	)
}
