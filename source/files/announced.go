package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
)

// Announced reads objects that event notifications name (a Kafka topic of
// S3 event notifications), instead of those a landing listing finds: each
// object is read as a landing file of the same format is, pinned to the
// version the notification announced.
type Announced struct {
	cfg         config.Source
	props       map[string]string
	deadLetters bool

	mu     sync.Mutex
	stores map[string]*objectStore // by bucket URL
	table  *arrow.Schema
}

// Object is an object a notification announces: its URL
// (s3://bucket/key) and, when the notification says, its ETag.
type Object struct {
	URL  string
	ETag string
}

// NewAnnounced reads announced objects in cfg.Format, reaching object
// stores with the catalog's properties, as landing prefixes are.
func NewAnnounced(cfg config.Source, props map[string]string) (*Announced, error) {
	switch cfg.Format {
	case "parquet", "csv", "json", "debezium-json", "avro":
	default:
		return nil, fmt.Errorf("%w: the objects that notifications announce are read as source.format, and %q is not a file format; use parquet, csv, json, debezium-json or avro", source.ErrConfig, cfg.Format)
	}
	return &Announced{cfg: cfg, props: props, stores: map[string]*objectStore{}}, nil
}

// SetAsideBadLines makes the objects' parts set the lines they cannot
// read as rows aside (on-bad-record: dead-letter).
func (a *Announced) SetAsideBadLines(on bool) { a.deadLetters = on }

// SetTableSchema is Files.SetTableSchema for announced objects.
func (a *Announced) SetTableSchema(schema *iceberg.Schema) {
	var f Files
	f.SetTableSchema(schema)
	a.mu.Lock()
	a.table = f.table
	a.mu.Unlock()
}

// Parts looks each object up and returns a part reading it, for those
// there as announced; skipped says why each other one is left out: gone,
// or replaced since (a later notification announces the new version).
func (a *Announced) Parts(ctx context.Context, objs []Object) (parts []source.Part, skipped []string, err error) {
	entries := make([]fileEntry, len(objs))
	stores := make([]*objectStore, len(objs))
	why := make([]string, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, o := range objs {
		st, err := a.store(o.URL)
		if err != nil {
			return nil, nil, err
		}
		stores[i] = st
		g.Go(func() error {
			e, err := st.stat(gctx, o.URL)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				why[i] = fmt.Sprintf("object %s, announced, is gone", o.URL)
			case err != nil:
				return fmt.Errorf("look up announced object %s: %w", o.URL, err)
			case o.ETag != "" && strings.Trim(e.ETag, `"`) != strings.Trim(o.ETag, `"`):
				why[i] = fmt.Sprintf("object %s was replaced after it was announced (ETag %s, announced %s); its new version is read when its own notification comes", o.URL, strings.Trim(e.ETag, `"`), strings.Trim(o.ETag, `"`))
			default:
				entries[i] = e
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	table := a.table
	a.mu.Unlock()
	fps := map[*objectStore][]*filePart{}
	for i := range objs {
		if why[i] != "" {
			skipped = append(skipped, why[i])
			continue
		}
		p := &filePart{entry: entries[i], cfg: a.cfg, table: table, store: stores[i], ctx: ctx, deadLetters: a.deadLetters}
		if a.cfg.Format == "parquet" {
			parts = append(parts, &parquetPart{p})
			fps[stores[i]] = append(fps[stores[i]], p)
		} else {
			parts = append(parts, p)
		}
	}
	for st, ps := range fps {
		go prefetchTails(ctx, st, ps)
	}
	return parts, skipped, nil
}

// store is the object store of an object's bucket, opened once.
func (a *Announced) store(objURL string) (*objectStore, error) {
	u, err := url.Parse(objURL)
	if err != nil || u.Host == "" || u.Scheme == "" {
		return nil, fmt.Errorf("announced object %q is not an object-store URL", objURL)
	}
	base := u.Scheme + "://" + u.Host
	a.mu.Lock()
	defer a.mu.Unlock()
	if st, ok := a.stores[base]; ok {
		return st, nil
	}
	st, err := openObjects(base, a.props)
	if err != nil {
		return nil, err
	}
	a.stores[base] = st
	return st, nil
}

// Close closes the stores.
func (a *Announced) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, st := range a.stores {
		_ = st.close()
	}
	clear(a.stores)
	return nil
}
