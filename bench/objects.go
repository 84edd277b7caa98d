package bench

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync/atomic"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/internal/write"
)

// FloeFrom ingests the Parquet files of a landing zone, a local directory
// or an object-store prefix reached with the catalog properties props,
// into a new table under work; reencode turns the column-chunk copy off.
func FloeFrom(ctx context.Context, landing string, props map[string]string, reencode bool, work string) (Result, error) {
	cfg, err := sourceConfig(landing, work, 0)
	if err != nil {
		return Result{}, err
	}
	cfg.Catalog.Properties = props
	if reencode {
		cfg.Sink.TableProperties = map[string]string{write.CopyChunksKey: "false"}
	}
	var cat catalog.Catalog
	cost, err := measure(func() (err error) {
		cat, _, err = runFloe(ctx, cfg, nil)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("floe from %s: %w", landing, err)
	}
	defer closeCatalog(cat)
	return tableResult(ctx, "floe", cat, cost)
}

// GetObjects reads every object under an object-store prefix whole, two at
// a time, and drops the bytes: the least reading a landing zone costs.
func GetObjects(ctx context.Context, prefix string, props map[string]string) (Result, error) {
	fsys, err := icebergio.LoadFS(ctx, props, prefix)
	if err != nil {
		return Result{}, err
	}
	bfs, ok := fsys.(*blobfs.FileIO)
	if !ok {
		return Result{}, fmt.Errorf("%s is not an object store", prefix)
	}
	defer bfs.Close()
	u, err := url.Parse(prefix)
	if err != nil {
		return Result{}, err
	}
	var keys []string
	it := bfs.List(&blob.ListOptions{Prefix: strings.TrimPrefix(u.Path, "/") + "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, err
		}
		keys = append(keys, obj.Key)
	}
	var total atomic.Int64
	cost, err := measure(func() error {
		g, ctx := errgroup.WithContext(ctx)
		g.SetLimit(2)
		for _, k := range keys {
			g.Go(func() error {
				r, err := bfs.NewReader(ctx, k, nil)
				if err != nil {
					return err
				}
				defer r.Close()
				n, err := io.Copy(io.Discard, r)
				total.Add(n)
				return err
			})
		}
		return g.Wait()
	})
	return Result{Contender: "get", Files: len(keys), Bytes: total.Load(), Cost: cost}, err
}
