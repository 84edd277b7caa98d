package iceberg_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
	icebergsource "github.com/floe-io/floe/source/iceberg"
	"github.com/floe-io/floe/source/sourcetest"
)

// sourceTable is a table in a catalog of its own; each Append is one
// append snapshot adding one data file.
type sourceTable struct {
	cat   catalog.Catalog
	ident table.Identifier
}

func (s *sourceTable) Open(t *testing.T, stateDir string) source.Source {
	t.Helper()
	src, err := icebergsource.New(config.Source{Type: "iceberg", Table: "db.t"}, source.Env{StateDir: stateDir, Catalog: s.cat})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (s *sourceTable) Append(t *testing.T, first int64, n int) {
	t.Helper()
	ctx := t.Context()
	tbl, err := s.cat.LoadTable(ctx, s.ident)
	if err != nil {
		t.Fatal(err)
	}
	rec := fixture.IDRecord(first, int64(n))
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if _, err := tbl.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
}

func TestContract(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{
		New: func(t *testing.T) sourcetest.Input {
			ctx := t.Context()
			cat := fixture.Catalog(t)
			if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
				t.Fatal(err)
			}
			schema := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
				iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String})
			ident := table.Identifier{"db", "t"}
			if _, err := cat.CreateTable(ctx, ident, schema); err != nil {
				t.Fatal(err)
			}
			return &sourceTable{cat: cat, ident: ident}
		},
		Limits: sourcetest.Limits{MaxFiles: true, MaxBytes: true, MaxRows: true},
		Claims: sourcetest.Capabilities{Resumable: true, QueryAware: true},
	})
}
