package scan_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/scan"
)

// read is one way of reading a table: rows, a count, or a plan.
type read struct {
	name string
	do   func(ctx context.Context, tbl *table.Table, o scan.Options) error
}

var reads = []read{
	{"rows", func(ctx context.Context, tbl *table.Table, o scan.Options) error {
		_, recs, err := scan.Table(ctx, tbl, o)
		if err != nil {
			return err
		}
		for rec, err := range recs {
			if err != nil {
				return err
			}
			rec.Release()
		}
		return nil
	}},
	{"count", func(ctx context.Context, tbl *table.Table, o scan.Options) error {
		_, err := scan.Count(ctx, tbl, o)
		return err
	}},
	{"explain", func(ctx context.Context, tbl *table.Table, o scan.Options) error {
		_, err := scan.Explain(ctx, tbl, o)
		return err
	}},
}

// configError fails unless err is a configuration error (exit 2 in the
// binary) whose message holds each of want.
func configError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	ok := errors.Is(err, ingest.ErrConfig)
	for _, w := range want {
		ok = ok && strings.Contains(err.Error(), w)
	}
	if !ok {
		t.Errorf("%s: got %v, want a configuration error naming %q", what, err, want)
	}
}

// A binary literal that does not fit the column is a configuration error
// naming the column and the fix, on tables Spark wrote with a binary and a
// fixed(11) identity-partition column.
func TestBinaryLiteralErrors(t *testing.T) {
	t.Parallel()
	peer := fixture.Shared(t, "fixtures/peer-tables/tables")
	ctx := context.Background()
	load := func(name, loc string) *table.Table {
		t.Helper()
		tbl, err := catalogs.LoadTableAt(ctx, filepath.Join(peer, loc), nil,
			[]catalogs.PathPrefix{{From: "data/persistent/" + name + "/", To: filepath.Join(peer, name) + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	binary := load("partition_binary", "partition_binary")
	fixed := load("partition_fixed_length_binary", "partition_fixed_length_binary/default.db/partition_fixed_length_binary/metadata/00001-b4b3d6d2-cac2-4480-952e-0e4b3b88b5d7.metadata.json")
	for _, c := range []struct {
		tbl          *table.Table
		filter, want string
	}{
		{binary, "partition_col = '010203'", "write bytes in hex, as X'0102'"},
		{binary, "partition_col = X'123'", "odd number of hex digits"},
		{fixed, "partition_col = X'0102'", "X'0102' is 2 bytes; the column holds exactly 11 bytes"},
	} {
		for _, r := range reads {
			configError(t, r.name+" with filter "+c.filter, r.do(ctx, c.tbl, scan.Options{Filter: c.filter}), c.want)
		}
	}
}

// A read as of a time before the table's first snapshot (0 included) is an
// error naming when its history starts, as in Spark; an unknown kept or
// dropped column and a negative limit are configuration errors naming what
// is wrong, also for a count, which reads no column.
func TestOptionErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := fixture.CreateTable(t, fixture.Catalog(t), table.Identifier{"db", "t"}, fixture.IDSchema)
	rec := fixture.IDRecord(0, 10)
	rdr, err := array.NewRecordReader(fixture.IDSchema, []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = tbl.Append(ctx, rdr, nil)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	firstMs := tbl.CurrentSnapshot().TimestampMs
	first := time.UnixMilli(firstMs).UTC().Format(time.RFC3339Nano)
	zero, before := int64(0), firstMs-1
	for _, c := range []struct {
		name string
		o    scan.Options
		want []string
	}{
		{"as of 0", scan.Options{AsOfMs: &zero}, []string{"its history starts at " + first}},
		{"as of just before", scan.Options{AsOfMs: &before}, []string{"its history starts at " + first}},
		{"keep nope", scan.Options{Columns: []string{"nope"}}, []string{"keep", `no column "nope"`, "it has: id, v"}},
		{"keep id and nope", scan.Options{Columns: []string{"id", "nope"}}, []string{`no column "nope"`}},
		{"drop nope", scan.Options{Drop: []string{"nope"}}, []string{"drop", `no column "nope"`}},
		{"limit -1", scan.Options{Limit: -1}, []string{"limit -1", "0 for all"}},
	} {
		for _, r := range reads {
			configError(t, c.name+" ("+r.name+")", r.do(ctx, tbl, c.o), c.want...)
		}
	}
	n, err := scan.Count(ctx, tbl, scan.Options{AsOfMs: &firstMs})
	if err != nil || n != 10 {
		t.Errorf("as of the first snapshot: %d rows, %v; want 10", n, err)
	}
}
