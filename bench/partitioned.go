package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
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

// eventsPartitionSpec is PartitionFields as an iceberg-go spec.
func eventsPartitionSpec(sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	return iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldByName("ts", "ts_day", iceberg.DayTransform{}, sc, nil),
		iceberg.AddPartitionFieldByName("category", "category", iceberg.IdentityTransform{}, sc, nil),
	)
}

// errNoPartitionedWrites is the start of the message of a floe that does
// not write partitioned tables yet (writer.go's check).
const errNoPartitionedWrites = "floe does not write partitioned tables yet"

// FloeWritesPartitioned reports whether this floe writes partitioned
// tables, from a floe run under work into an existing table partitioned by
// PartitionFields: a floe without partitioned writes ignores the field when
// it creates a table, and refuses to write one that is partitioned.
func FloeWritesPartitioned(ctx context.Context, work string) (bool, error) {
	ds, err := Ensure(filepath.Join(work, "data"), Spec{Name: "probe", Files: 1, RowsPerFile: 100, Seed: 1})
	if err != nil {
		return false, err
	}
	cfg, err := floeConfig(ds, work, 0)
	if err != nil {
		return false, err
	}
	cfg.Sink.PartitionFields = PartitionFields
	cat, err := floe.OpenCatalog(ctx, cfg.Catalog)
	if err != nil {
		return false, err
	}
	err = createPartitioned(ctx, cat)
	closeCatalog(cat)
	if err != nil {
		return false, err
	}
	cat, _, err = runFloe(ctx, cfg, nil)
	if errors.Is(err, floe.ErrConfig) && strings.Contains(err.Error(), errNoPartitionedWrites) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("floe into a partitioned table: %w", err)
	}
	closeCatalog(cat)
	return true, nil
}

// createPartitioned creates the bench table in cat, partitioned by
// PartitionFields.
func createPartitioned(ctx context.Context, cat catalog.Catalog) error {
	if err := cat.CreateNamespace(ctx, benchTable[:1], nil); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(Schema, true)
	if err != nil {
		return err
	}
	spec, err := eventsPartitionSpec(sc)
	if err != nil {
		return err
	}
	if _, err := cat.CreateTable(ctx, benchTable, sc, catalog.WithPartitionSpec(&spec)); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	return nil
}
