package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/scan"
)

// nameMappingTable loads a metadata version of the name_mapping peer table
// (its data file has no field ids), changed by edit first when set.
func nameMappingTable(t *testing.T, version string, edit func(doc map[string]any)) *table.Table {
	t.Helper()
	dir := fixture.Shared(t, "fixtures/peer-tables/tables/name_mapping")
	meta := filepath.Join(dir, "warehouse_1", "mydb", "t1", "metadata", version+".metadata.json")
	if edit != nil {
		raw, err := os.ReadFile(meta)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		// The copy's own directory holds no manifests: its paths must
		// not follow it, as those under a table's location do.
		doc["location"] = "elsewhere/t1"
		if raw, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		meta = filepath.Join(t.TempDir(), "t1", "metadata", "v1.metadata.json")
		if err := os.MkdirAll(filepath.Dir(meta), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(meta, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := catalogs.LoadTableAt(context.Background(), meta, nil, []catalogs.PathPrefix{{From: "data/persistent/name_mapping/", To: dir + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// A data file holding no column of the schema read (no field ids, and no
// name the name mapping gives a field) reads as its rows with every
// column NULL when the columns are optional, as Iceberg Java reads it;
// iceberg-go fails it for having no column to read. A required column is
// refused, naming it, as Iceberg Java refuses it.
func TestFileHoldingNoColumnOfTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Version 3.2's name mapping is empty.
	optional := nameMappingTable(t, "v3.2", func(doc map[string]any) {
		for _, s := range doc["schemas"].([]any) {
			for _, f := range s.(map[string]any)["fields"].([]any) {
				f.(map[string]any)["required"] = false
			}
		}
	})
	_, recs, err := scan.Table(ctx, optional, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rows, nulls int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		for _, c := range rec.Columns() {
			nulls += int64(c.NullN())
		}
		if rec.NumCols() != 2 || rec.ColumnName(0) != "a" || rec.ColumnName(1) != "b" {
			t.Fatalf("read columns %v, want a and b", rec.Schema())
		}
		rec.Release()
	}
	if rows != 10_000 || nulls != 2*rows {
		t.Fatalf("read %d rows with %d nulls, want 10000 rows of NULLs", rows, nulls)
	}
	for filter, want := range map[string]int64{"a IS NULL AND b IS NULL": 10_000, "b = 5": 0, "a IS NOT NULL": 0} {
		if n, err := scan.Count(ctx, optional, scan.Options{Filter: filter}); err != nil || n != want {
			t.Errorf("count %q = %d (%v), want %d", filter, n, err, want)
		}
	}

	required := nameMappingTable(t, "v3.2", nil)
	_, recs, err = scan.Table(ctx, required, scan.Options{})
	if err == nil {
		for _, err = range recs {
			if err != nil {
				break
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), "required column a of table t1 is missing from the data file") {
		t.Fatalf("reading a required column the file lacks: %v", err)
	}
}

// A name mapping that is not the spec's JSON list fails a read of the
// table's data files, naming the property and the fix; a table without a
// snapshot still reads as empty.
func TestNameMappingNotAList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, recs, err := scan.Table(ctx, nameMappingTable(t, "v2", nil), scan.Options{})
	if err == nil {
		for _, err = range recs {
			if err != nil {
				break
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), "its property schema.name-mapping.default is not a name mapping") || !strings.Contains(err.Error(), "correct or remove the property") {
		t.Fatalf("reading a table whose name mapping is an object: %v", err)
	}
	if n, err := scan.Count(ctx, nameMappingTable(t, "v1", nil), scan.Options{}); err != nil || n != 0 {
		t.Fatalf("count of the table without a snapshot: %d, %v", n, err)
	}
}

// The file reader of the Iceberg streaming source binds its filter and
// columns to the table's current schema: the renamed column is read by its
// new name.
func TestFileReaderCurrentSchema(t *testing.T) {
	t.Parallel()
	dir := fixture.Shared(t, "fixtures/peer-tables/tables/hyperparam-iceberg/spark/rename_column")
	ctx := context.Background()
	tbl, err := catalogs.LoadTableAt(ctx, dir, nil, []catalogs.PathPrefix{{From: "s3a://hyperparam-iceberg/spark/rename_column", To: dir}})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := scan.NewFileReader(ctx, tbl, scan.Options{Filter: "event_date IS NULL", Columns: []string{"id", "event_date"}})
	if err != nil {
		t.Fatal(err)
	}
	rdr := fr.Open(ctx, tasks)
	defer rdr.Release()
	var rows []string
	for rdr.Next() {
		b, err := json.Marshal(rdr.RecordBatch())
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, string(b))
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows, ""); got != `[{"event_date":null,"id":3}]` {
		t.Fatalf("read %s, want the row of id 3", got)
	}
}
