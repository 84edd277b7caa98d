package floe_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	_ "github.com/floe-io/floe/source/files" // registers the "files" source
)

// Run a pipeline from Go: land the CSV files of a directory in a table of
// the embedded catalog, once, and look at the progress of each batch. The
// table's maintenance (the maintenance: block's defaults) runs between
// batches.
func Example() {
	dir, _ := os.MkdirTemp("", "floe-example-")
	defer os.RemoveAll(dir)
	landing := filepath.Join(dir, "landing")
	if err := os.MkdirAll(landing, 0o755); err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		var b strings.Builder
		b.WriteString("id,name\n")
		for id := i * 1000; id < (i+1)*1000; id++ {
			fmt.Fprintf(&b, "%d,user-%d\n", id, id)
		}
		if err := os.WriteFile(filepath.Join(landing, fmt.Sprintf("part-%d.csv", i)), []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	cfg := &config.Pipeline{
		Catalog:    config.Catalog{Warehouse: filepath.Join(dir, "warehouse")},
		Source:     config.Source{Path: landing, Format: "csv"},
		Sink:       config.Sink{Table: "db.events"},
		Checkpoint: filepath.Join(dir, "checkpoint"),
	}
	cfg.SetDefaults() // available-now, append, create the table

	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{
		OnProgress: func(pr floe.Progress) {
			fmt.Printf("batch %d: %d rows\n", pr.BatchID, pr.NumInputRows)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	sum, err := p.Run(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows in %d snapshot\n", sum.Rows, sum.Snapshots)
	// Output:
	// batch 0: 3000 rows
	// 3000 rows in 1 snapshot
}

// Merge change files into a table by key from Go: mode upsert, the key,
// and the column that says which changes delete their key.
func Example_upsert() {
	dir, _ := os.MkdirTemp("", "floe-example-")
	defer os.RemoveAll(dir)
	landing := filepath.Join(dir, "landing")
	if err := os.MkdirAll(landing, 0o755); err != nil {
		log.Fatal(err)
	}
	changes := "id,name,op\n1,ann,c\n2,bob,c\n1,anne,u\n3,cid,c\n2,,d\n"
	if err := os.WriteFile(filepath.Join(landing, "changes.csv"), []byte(changes), 0o644); err != nil {
		log.Fatal(err)
	}

	cfg := &config.Pipeline{
		Catalog: config.Catalog{Warehouse: filepath.Join(dir, "warehouse")},
		Source:  config.Source{Path: landing, Format: "csv"},
		Sink: config.Sink{Table: "db.customers", Mode: "upsert", IdentifierFields: []string{"id"},
			CDC: config.CDCOptions{OpColumn: "op"}},
		Checkpoint: filepath.Join(dir, "checkpoint"),
	}
	cfg.SetDefaults()

	ctx := context.Background()
	p, err := floe.Open(ctx, cfg, floe.Options{
		OnProgress: func(pr floe.Progress) {
			u := pr.Sink.Upsert
			fmt.Printf("batch %d: %d changes to %d keys, %d deleting, %d rows written\n",
				pr.BatchID, u.NumChanges, u.NumKeys, u.NumDeletedKeys, pr.Sink.NumOutputRows)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// batch 0: 5 changes to 3 keys, 1 deleting, 2 rows written
}
