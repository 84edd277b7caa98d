package interop_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
)

// Data files with Parquet bloom filters read back the same in icebird and
// DuckDB: every type floe writes through arrow-go, filters on most of its
// columns (one nested in a struct), and a flat table through parquet-go.
func TestBloomFilters(t *testing.T) {
	t.Parallel()
	bloom := func(cols ...string) []string {
		var args []string
		for _, c := range cols {
			args = append(args, "-p", "table-default.write.parquet.bloom-filter-enabled.column."+c+"=true")
		}
		return append(args, "-p", "table-default.write.parquet.bloom-filter-fpp.column."+cols[0]+"=0.001")
	}
	t.Run("arrow", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for i := range 2 {
			rec := allTypesRecord(uint64(i+1), 60)
			err := fixture.WriteParquet(filepath.Join(e.Landing, fmt.Sprintf("all-%d.parquet", i)), rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		e.OK(e.StreamArgs("db.bloom", bloom("l", "b", "i", "f", "d", "dec", "dt", "tm", "ts", "tstz", "s", "u", "bin", "st.x", "st.y")...)...)
		if st := e.checkTable("db.bloom"); st.Rows != 120 {
			t.Fatalf("%d rows, want 120", st.Rows)
		}
	})
	t.Run("parquet-go", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for i := range int64(3) {
			if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("f-%d.parquet", i)), i*5000, 5000); err != nil {
				t.Fatal(err)
			}
		}
		e.OK(e.StreamArgs("db.bloom", append(bloom("id", "v"), "-p", "table-default.write.parquet.row-group-size-bytes=16384")...)...)
		if st := e.checkTable("db.bloom"); st.Rows != 15000 {
			t.Fatalf("%d rows, want 15000", st.Rows)
		}
	})
}
