package scan_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// TestFileReaderFilterOnAbsentPartitionColumn: the file reader filters the
// rows of a file that lacks an identity-partition column by the value the
// manifest records for it, as a scan does. Spark's Hive migration writes
// such files; iceberg-go reads the column as NULL, which no equality
// matches.
func TestFileReaderFilterOnAbsentPartitionColumn(t *testing.T) {
	t.Parallel()
	dir := fixture.Shared(t, "fixtures/peer-tables/tables/hive_partitioned_table")
	ctx := context.Background()
	tbl, err := catalogs.LoadTableAt(ctx, dir, nil, []catalogs.PathPrefix{{From: "data/persistent/hive_partitioned_table/", To: dir + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Of the two clicks, user 24680's file is partitioned by event_type
	// and lacks the column; user 12345's holds it.
	fr, err := scan.NewFileReader(ctx, tbl, scan.Options{Filter: "event_type = 'click'", Columns: []string{"user_id"}})
	if err != nil {
		t.Fatal(err)
	}
	rdr := fr.Open(ctx, tasks)
	defer rdr.Release()
	var users []int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		users = append(users, rec.Column(0).(*array.Int64).Int64Values()...)
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(users)
	if !slices.Equal(users, []int64{12345, 24680}) {
		t.Fatalf("users %v clicked, want [12345 24680]", users)
	}
}
