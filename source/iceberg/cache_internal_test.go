package iceberg

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
	_ "github.com/floe-io/floe/source/files"
)

// TestCommitForgetsReadSnapshots: the cache of added files keeps the
// snapshots batches may still read, not every snapshot the query read. A
// v1 table has no sequence numbers to tell the older ones.
func TestCommitForgetsReadSnapshots(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cat, _ := fixture.CatalogAt(t, filepath.Join(dir, "warehouse"))
			// One append per file, each in a later millisecond.
			const files = 6
			for i := range int64(files) {
				if err := fixture.WriteIDFile(filepath.Join(dir, "landing", fmt.Sprintf("f-%d.parquet", i)), i*10, 10); err != nil {
					t.Fatal(err)
				}
				cfg := &config.Pipeline{
					Source:     config.Source{Path: filepath.Join(dir, "landing"), Format: "parquet"},
					Sink:       config.Sink{Table: "db.a", FormatVersion: version},
					Checkpoint: filepath.Join(dir, "ck-a"),
				}
				cfg.SetDefaults()
				p, err := floe.Open(ctx, cfg, floe.Options{Catalog: cat})
				if err != nil {
					t.Fatal(err)
				}
				_, err = p.Run(ctx)
				p.Close()
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}

			s, err := New(config.Source{Type: "iceberg", Table: "db.a"}, source.Env{Catalog: cat})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			start := s.InitialOffset()
			for range files {
				end, err := s.LatestOffset(ctx, start, source.ReadLimit{MaxFiles: 1})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Read(ctx, start, end); err != nil {
					t.Fatal(err)
				}
				if err := s.Commit(ctx, end); err != nil {
					t.Fatal(err)
				}
				start = end
			}
			if n := len(s.added); n > 1 {
				t.Fatalf("after %d one-file batches the cache holds the files of %d snapshots, want those of the last one", files, n)
			}
		})
	}
}
