package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"

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
}

// managedReadFile holds the keys of Beam's Iceberg read config.
type managedReadFile struct {
	Table             string            `yaml:"table"`
	CatalogName       string            `yaml:"catalog_name"`
	CatalogProperties map[string]string `yaml:"catalog_properties"`
	ConfigProperties  map[string]string `yaml:"config_properties"`
	Drop              []string          `yaml:"drop"`
	Keep              []string          `yaml:"keep"`
	Filter            string            `yaml:"filter"`
}

// LoadManagedRead reads a Managed I/O Iceberg read config (keys table,
// catalog_name, catalog_properties, config_properties, filter, keep, drop),
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
	t.w.walk(node, t.prefix, reflect.ValueOf(m).Elem())
	r := &ManagedRead{
		Catalog: t.catalog(&managedFile{CatalogName: m.CatalogName, CatalogProperties: m.CatalogProperties, ConfigProperties: m.ConfigProperties}),
		Table:   m.Table,
		Filter:  m.Filter,
		Keep:    m.Keep,
		Drop:    m.Drop,
	}
	if m.Table == "" && !t.w.broken(t.path("table")) {
		t.fail("table", "required: the table to read, e.g. db.events")
	}
	if len(m.Keep) > 0 && len(m.Drop) > 0 {
		t.fail("drop", "keep and drop are mutually exclusive; keep one of them")
	}
	return r
}

// source is the read as a floe source: the table's appends, streamed.
func (r *ManagedRead) source() Source {
	return Source{Type: "iceberg", Table: r.Table, Filter: r.Filter, Keep: r.Keep, Drop: r.Drop}
}
