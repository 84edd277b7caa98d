package main_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/internal/fixture"
)

// upsertTable streams n ids from 0 into db.t, a table of the format
// version, and opens the env's catalog to delete rows as an upsert writer
// would.
func (e *env) upsertTable(version int, files int, rows int64) catalog.Catalog {
	e.T.Helper()
	for i := range int64(files) {
		e.WriteIDs("f"+strconv.FormatInt(i, 10)+".parquet", i*rows, rows)
	}
	if r := e.Stream("db.t", "--format-version", strconv.Itoa(version), "--max-files-per-trigger", "1", "--maintenance=false"); r.Code != 0 {
		e.T.Fatalf("stream: %s", r)
	}
	cat, _ := fixture.CatalogAt(e.T, e.Warehouse)
	return cat
}

// checkIDs compares the table, read by iceberg-go, with [0, n) less gone.
func (e *env) checkIDs(n int64, gone ...int64) {
	e.T.Helper()
	ids := e.TableIDs("db.t")
	for _, id := range gone {
		if ids[id] != 0 {
			e.T.Errorf("deleted id %d is back", id)
		}
		ids[id] = 1
	}
	if d := fixture.Exact(ids, 0, n); d != "" {
		e.T.Errorf("table ids: %s", d)
	}
}

type deleteReport struct {
	DeleteFiles         int     `json:"delete_files"`
	EqualityDeleteFiles int     `json:"equality_delete_files"`
	DeletionVectors     int     `json:"deletion_vectors"`
	DeletedRows         int64   `json:"deleted_rows"`
	EqualityDeleteRows  int64   `json:"equality_delete_rows"`
	RowsReadPerLiveRow  float64 `json:"rows_read_per_live_row"`
	Recommendations     []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"recommendations"`
}

func (e *env) deleteHealth() deleteReport {
	e.T.Helper()
	var h deleteReport
	if err := json.Unmarshal([]byte(e.OK("table", "health", "db.t", "--json", "--plan-runs", "0").Stdout), &h); err != nil {
		e.T.Fatal(err)
	}
	return h
}

// A rewrite whose commit meets deletes committed after it read the files
// keeps them: deletion vectors (v3) are carried over to the new files,
// equality deletes (v2, v3) still apply to them.
func TestMaintainRewriteKeepsDeletesCommittedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		version int
		del     func(context.Context, catalog.Catalog, ...int64) error
	}{
		{"v3 deletion vectors", 3, func(ctx context.Context, cat catalog.Catalog, ids ...int64) error {
			_, err := fixture.DeleteByDV(ctx, cat, "db.t", ids...)
			return err
		}},
		{"v2 equality deletes", 2, func(ctx context.Context, cat catalog.Catalog, ids ...int64) error {
			return fixture.DeleteByEquality(ctx, cat, "db.t", ids...)
		}},
		{"v3 equality deletes", 3, func(ctx context.Context, cat catalog.Catalog, ids ...int64) error {
			return fixture.DeleteByEquality(ctx, cat, "db.t", ids...)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := context.Background()
			cat := e.upsertTable(c.version, 3, 100)
			if err := c.del(ctx, cat, 7); err != nil {
				t.Fatal(err)
			}
			run := e.startPaused("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
			// One row of each file, written and read by the rewrite.
			if err := c.del(ctx, cat, 5, 150, 299); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(run.resume(t)); code != 0 {
				t.Fatalf("rewrite exit %d\n%s", code, run.out.String())
			}
			if c.version == 3 && c.name == "v3 deletion vectors" && !strings.Contains(run.out.String(), "carried over 3 rows") {
				t.Errorf("rewrite printed %q; want the 3 rows carried over", run.out.String())
			}
			e.checkIDs(300, 5, 7, 150, 299)
			// A second rewrite applies what the first kept.
			e.OK("maintain", "rewrite-data-files", "db.t", "--rewrite-all")
			e.checkIDs(300, 5, 7, 150, 299)
			if h := e.deleteHealth(); h.DeleteFiles != 0 {
				t.Errorf("%d delete files left after rewrite-all", h.DeleteFiles)
			}
		})
	}
}

// A file with many rows deleted is rewritten alone, whatever
// min-input-files says; a ratio that is no fraction is refused (exit 2).
func TestMaintainRewriteByDeleteRatio(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat := e.upsertTable(3, 1, 10)
	if _, err := fixture.DeleteByDV(context.Background(), cat, "db.t", 1, 2, 3, 4); err != nil {
		t.Fatal(err)
	}
	r := e.OK("maintain", "rewrite-data-files", "db.t", "--json")
	var res struct {
		RewrittenDataFiles int `json:"rewritten_data_files"`
		RemovedDeleteFiles int `json:"removed_delete_files"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFiles != 1 || res.RemovedDeleteFiles != 1 {
		t.Errorf("rewrote %d data files and removed %d delete files; want the file 40%% deleted and its vector", res.RewrittenDataFiles, res.RemovedDeleteFiles)
	}
	e.checkIDs(10, 1, 2, 3, 4)
	bad := e.Run("maintain", "rewrite-data-files", "db.t", "--delete-ratio-threshold", "30")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "delete-ratio-threshold 30") || !strings.Contains(bad.Stderr, "from 0 to 1") {
		t.Errorf("--delete-ratio-threshold 30: %s", bad)
	}
}

// Health reports the delete debt and advises the conversion, which turns
// the equality deletes of a v3 table into deletion vectors; a v2 table is
// refused with the command that applies them instead.
func TestMaintainConvertEqualityDeletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cat := e.upsertTable(3, 2, 50)
	for _, id := range []int64{3, 60, 61} {
		if err := fixture.DeleteByEquality(ctx, cat, "db.t", id); err != nil {
			t.Fatal(err)
		}
	}
	h := e.deleteHealth()
	if h.EqualityDeleteFiles != 3 || h.EqualityDeleteRows != 3 || h.RowsReadPerLiveRow <= 1 {
		t.Errorf("health: %+v; want 3 equality delete files of 3 keys, more than a row read per live row", h)
	}
	advised := false
	for _, rec := range h.Recommendations {
		advised = advised || rec.Kind == "convert-equality-deletes" && strings.Contains(rec.Message, "floe maintain convert-equality-deletes db.t")
	}
	if !advised {
		t.Errorf("health does not advise the conversion: %+v", h.Recommendations)
	}
	r := e.OK("maintain", "convert-equality-deletes", "db.t")
	if !strings.Contains(r.Stdout, "converted 3 equality delete files") {
		t.Errorf("convert printed %q", r.Stdout)
	}
	e.checkIDs(100, 3, 60, 61)
	if h := e.deleteHealth(); h.EqualityDeleteFiles != 0 || h.DeletionVectors != 2 || h.DeletedRows != 3 {
		t.Errorf("after the conversion: %+v; want no equality deletes, 2 deletion vectors of 3 rows", h)
	}

	v2 := newEnv(t)
	cat2 := v2.upsertTable(2, 1, 10)
	if err := fixture.DeleteByEquality(ctx, cat2, "db.t", 3); err != nil {
		t.Fatal(err)
	}
	refused := v2.Run("maintain", "convert-equality-deletes", "db.t")
	if refused.Code != 2 || !strings.Contains(refused.Stderr, "format v2") || !strings.Contains(refused.Stderr, "rewrite-data-files db.t --delete-file-threshold 1") {
		t.Errorf("convert on v2: %s", refused)
	}
	v2.checkIDs(10, 3)
}
