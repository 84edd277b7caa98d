package bench

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/write"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
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

// PlanObjectLanding is PlanLanding on a prefix of an object store: n
// objects put by put (key relative to the prefix, a day's prefix per
// 1,000 objects when dated), committed in batches of catchUp, then batch
// more planned and recorded; Listing is one listing of every object.
func PlanObjectLanding(ctx context.Context, prefix string, props map[string]string, put func(key string, body []byte) error,
	work string, layout LandingLayout, n, catchUp, batch int) (LandingPlanning, error) {
	out := LandingPlanning{Layout: layout, Files: n, Batch: batch}
	land := func(from, to int) error {
		g, _ := errgroup.WithContext(ctx)
		g.SetLimit(16)
		for i := from; i < to; i++ {
			key := fmt.Sprintf("part-%07d.csv", i)
			if layout == LandingDated {
				key = fmt.Sprintf("day=%04d/%s", i/1000, key)
			}
			g.Go(func() error { return put(key, fmt.Appendf(nil, "id\n%d\n", i)) })
		}
		return g.Wait()
	}
	if err := land(0, n); err != nil {
		return out, err
	}
	cfg := config.Source{Type: "files", Path: prefix, Format: "csv", Recursive: layout == LandingDated, MaxFilesPerTrigger: catchUp}
	state := filepath.Join(work, "state")
	src, err := source.New(cfg, source.Env{StateDir: state, Properties: props})
	if err != nil {
		return out, err
	}
	defer src.Close()
	st := &stepper{src: src.(*files.Files), start: src.InitialOffset(), limit: source.ReadLimit{MaxFiles: catchUp}}
	if err := st.catchUp(ctx); err != nil {
		return out, err
	}
	if err := land(n, n+batch); err != nil {
		return out, err
	}
	st.limit.MaxFiles = batch
	ran, plan, record, err := st.step(ctx)
	if err != nil || !ran {
		return out, fmt.Errorf("the batch of %d new objects was not planned: %v", batch, err)
	}
	out.Plan, out.Record = plan, record
	_, metrics := st.src.Metrics(nil)
	out.Mode = metrics["listing"]
	if out.StateBytes, err = dirBytes(state); err != nil {
		return out, err
	}
	fsys, err := icebergio.LoadFS(ctx, props, prefix)
	if err != nil {
		return out, err
	}
	bfs, ok := fsys.(*blobfs.FileIO)
	if !ok {
		return out, fmt.Errorf("%s is not an object store", prefix)
	}
	defer bfs.Close()
	u, err := url.Parse(prefix)
	if err != nil {
		return out, err
	}
	t := time.Now()
	it := bfs.List(&blob.ListOptions{Prefix: strings.TrimPrefix(u.Path, "/") + "/"})
	for {
		if _, err := it.Next(ctx); err == io.EOF {
			break
		} else if err != nil {
			return out, err
		}
	}
	out.Listing = time.Since(t)
	return out, nil
}
