package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ManagedRead is a Managed I/O Iceberg read config: the table, its catalog
// and what to read of it.
type ManagedRead struct {
	Catalog Catalog
	Table   string
	// Filter is the SQL-like row filter (package filter's syntax).
	Filter     string
	Keep, Drop []string
	// Warnings name settings floe ignores (Hadoop properties).
	Warnings []string
	// Options are the floe Iceberg-source options of Beam's read keys:
	// from_snapshot is start-snapshot-id, from_timestamp is
	// stream-from-timestamp, and starting_strategy latest (the default of
	// a streaming read) is starting-strategy
	// INCREMENTAL_FROM_LATEST_SNAPSHOT.
	Options map[string]string
	// Incremental names the key that makes the read Beam's incremental
	// read of the appends from a start snapshot (streaming,
	// starting_strategy, from_snapshot or from_timestamp), empty for a
	// read of the table as of one snapshot.
	Incremental string
	// Streaming, with PollInterval, is Beam's streaming read: a floe
	// query under a processing-time trigger of that interval.
	Streaming    bool
	PollInterval time.Duration
	// ToSnapshot and ToTimestampMs bound a read, as floe scan's
	// --snapshot-id and --as-of-timestamp do; a streaming query has no end, so a
	// pipeline refuses them.
	ToSnapshot    int64
	ToTimestampMs *int64
	// origins are the floe keys the read's keys became, with the keys and
	// their lines; bound is the key that bounds the read, if any.
	origins map[string]KeyOrigin
	bound   KeyOrigin
}

// managedReadKeys are the keys of Beam's read config alone; any one of them
// at the top level marks a file as one.
var managedReadKeys = []string{"filter", "streaming", "starting_strategy", "from_snapshot", "to_snapshot",
	"from_timestamp", "to_timestamp", "poll_interval_seconds"}

// managedReadFile holds the keys of Beam's Iceberg read config.
type managedReadFile struct {
	Table             string            `yaml:"table"`
	CatalogName       string            `yaml:"catalog_name"`
	CatalogProperties map[string]string `yaml:"catalog_properties"`
	ConfigProperties  map[string]string `yaml:"config_properties"`
	Drop              []string          `yaml:"drop"`
	Keep              []string          `yaml:"keep"`
	Filter            string            `yaml:"filter"`
	Streaming         bool              `yaml:"streaming"`
	StartingStrategy  string            `yaml:"starting_strategy"`
	FromSnapshot      *int64            `yaml:"from_snapshot"`
	ToSnapshot        *int64            `yaml:"to_snapshot"`
	FromTimestamp     *int64            `yaml:"from_timestamp"`
	ToTimestamp       *int64            `yaml:"to_timestamp"`
	PollSeconds       *int64            `yaml:"poll_interval_seconds"`
}

// LoadManagedRead reads a Managed I/O Iceberg read config (keys table,
// catalog_name, catalog_properties, config_properties, filter, keep, drop,
// and Beam's streaming, starting_strategy, from_snapshot, from_timestamp,
// to_snapshot, to_timestamp and poll_interval_seconds),
// with the catalog translated as for a write config. Errors are an *Error
// naming the file.
func LoadManagedRead(path string) (*ManagedRead, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	r, err := ParseManagedRead(data)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = path
	}
	return r, err
}

// ParseManagedRead is LoadManagedRead on the file's text.
func ParseManagedRead(data []byte) (*ManagedRead, error) {
	expanded, probs := expandEnv(data, os.LookupEnv)
	if len(probs) > 0 {
		return nil, probs.err()
	}
	root, probs := parseYAML(expanded)
	if len(probs) > 0 {
		return nil, probs.err()
	}
	if root == nil || root.Kind != yaml.MappingNode {
		probs.add("", 0, "a Managed I/O read config is a mapping with the keys table, catalog_name, catalog_properties, config_properties, filter, keep and drop")
		return nil, probs.err()
	}
	t := &managedTranslation{w: newWalker(), config: root}
	r := t.read(root)
	all := append(t.w.probs, t.probs...)
	if len(all) > 0 {
		return nil, all.err()
	}
	r.Warnings = t.warnings
	return r, nil
}

// read decodes the Managed read config at node, under t.prefix.
func (t *managedTranslation) read(node *yaml.Node) *ManagedRead {
	m := new(managedReadFile)
	t.w.listKeysOf = "a Managed I/O read config"
	t.w.walk(node, t.prefix, reflect.ValueOf(m).Elem())
	t.w.listKeysOf = ""
	r := &ManagedRead{
		Catalog: t.catalog(&managedFile{CatalogName: m.CatalogName, CatalogProperties: m.CatalogProperties, ConfigProperties: m.ConfigProperties}),
		Table:   m.Table,
		Filter:  m.Filter,
		Keep:    m.Keep,
		Drop:    m.Drop,
	}
	r.origins = map[string]KeyOrigin{"source.table": t.origin("table")}
	if m.Table == "" && !t.w.broken(t.path("table")) {
		t.fail("table", "required: the table to read, e.g. db.events")
	}
	if len(m.Keep) > 0 && len(m.Drop) > 0 {
		t.fail("drop", "keep and drop are mutually exclusive; keep one of them")
	}
	t.readRange(m, r)
	return r
}

// readRange maps Beam's streaming and range keys onto floe's Iceberg
// source, refusing the ones it cannot honour exactly.
func (t *managedTranslation) readRange(m *managedReadFile, r *ManagedRead) {
	r.Streaming = m.Streaming
	r.PollInterval = 60 * time.Second // Beam's default
	if s := m.PollSeconds; s != nil {
		if *s <= 0 {
			t.fail("poll_interval_seconds", "%d is not a positive number of seconds", *s)
		}
		r.PollInterval = time.Duration(*s) * time.Second
	}
	// Beam's rules (IcebergScanConfig.validate): one start at most, and
	// a poll interval only for a streaming read.
	if m.StartingStrategy != "" {
		for _, k := range []struct {
			key string
			set bool
		}{{"from_snapshot", m.FromSnapshot != nil}, {"from_timestamp", m.FromTimestamp != nil}} {
			if k.set {
				t.fail(k.key, "set with starting_strategy, which Beam refuses; give one of them")
			}
		}
	}
	if m.FromSnapshot != nil && m.FromTimestamp != nil {
		t.fail("from_timestamp", "set with from_snapshot; give one of them")
	}
	if m.PollSeconds != nil && !m.Streaming {
		t.fail("poll_interval_seconds", "set, but streaming is not true; Beam polls only a streaming read: set streaming: true, or remove the key")
	}
	r.Options = map[string]string{}
	switch strings.ToLower(m.StartingStrategy) {
	case "earliest":
		r.Incremental = "starting_strategy"
	case "latest":
		r.Options["starting-strategy"] = "INCREMENTAL_FROM_LATEST_SNAPSHOT"
		r.Incremental = "starting_strategy"
	case "":
		// Beam starts a streaming read at the latest snapshot, a batch
		// read at the earliest.
		if m.Streaming && m.FromSnapshot == nil && m.FromTimestamp == nil {
			r.Options["starting-strategy"] = "INCREMENTAL_FROM_LATEST_SNAPSHOT"
		}
	default:
		t.fail("starting_strategy", "%q is not a starting strategy; use earliest or latest", m.StartingStrategy)
	}
	if m.FromSnapshot != nil {
		r.Options["start-snapshot-id"] = strconv.FormatInt(*m.FromSnapshot, 10)
		r.Incremental = "from_snapshot"
		r.origins["source.options.start-snapshot-id"] = t.origin("from_snapshot")
	}
	if m.FromTimestamp != nil {
		r.Options["stream-from-timestamp"] = strconv.FormatInt(*m.FromTimestamp, 10)
		r.Incremental = "from_timestamp"
		r.origins["source.options.stream-from-timestamp"] = t.origin("from_timestamp")
	}
	if m.Streaming {
		r.Incremental = "streaming"
	}
	if len(r.Options) == 0 {
		r.Options = nil
	}
	if m.ToSnapshot != nil {
		r.ToSnapshot = *m.ToSnapshot
	}
	r.ToTimestampMs = m.ToTimestamp
	switch {
	case m.ToSnapshot != nil && m.ToTimestamp != nil:
		t.fail("to_timestamp", "set with to_snapshot; give one of them")
	case m.ToSnapshot != nil:
		r.bound = t.origin("to_snapshot")
	case m.ToTimestamp != nil:
		r.bound = t.origin("to_timestamp")
	}
}

// origin is key of the read config, placed in the file.
func (t *managedTranslation) origin(key string) KeyOrigin {
	path := t.path(key)
	return KeyOrigin{Key: path, Line: t.w.lineOf(path)}
}

// source is the read as a floe source: the table's appends, streamed.
func (r *ManagedRead) source() Source {
	return Source{Type: "iceberg", Table: r.Table, Filter: r.Filter, Keep: r.Keep, Drop: r.Drop, Options: r.Options}
}

// stream makes p, which runs the read as a query, a streaming one when the
// read is; a query reads the table's appends without end, so a bounded
// read is refused.
func (t *managedTranslation) stream(r *ManagedRead, p *Pipeline) {
	if r.bound.Key != "" {
		// The read was decoded by a translation of its own (of a
		// ReadFromIceberg transform, say): its key is placed already.
		t.probs.add(r.bound.Key, r.bound.Line, "a floe query reads the table's appends without end, so to_snapshot and to_timestamp cannot bound it; "+
			"read up to a snapshot with floe scan FILE, or remove the key")
	}
	if p.Origins == nil {
		p.Origins = map[string]KeyOrigin{}
	}
	maps.Copy(p.Origins, r.origins)
	if r.Streaming {
		p.Trigger = Trigger{Kind: TriggerProcessingTime, Interval: r.PollInterval}
	}
}
