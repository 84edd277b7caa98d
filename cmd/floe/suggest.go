package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// shownTables is how many of a namespace's tables a missing table's error
// lists; `floe table list` shows them all.
const shownTables = 10

// noSuchTable is the error of a table name the catalog does not have: the
// table most likely meant, looked for in its namespace or, when that is
// missing too, in every namespace, and the namespace's other tables. Like
// any name on the command line that names nothing, it is a usage error.
func noSuchTable(ctx context.Context, cat catalog.Catalog, cf catalogFlags, ident table.Identifier) error {
	name := strings.Join(ident, ".")
	wh := "(the configured catalog)"
	if cfg, err := cf.config(); err == nil {
		wh, _ = floe.ResolveWarehouse(cfg.Warehouse)
	}
	ns := catalog.NamespaceFromIdent(ident)
	siblings, err := tableNames(ctx, cat, ns)
	candidates := siblings
	if err != nil || len(siblings) == 0 {
		candidates = nil
		namespaces, _ := cat.ListNamespaces(ctx, nil)
		for _, other := range namespaces {
			names, _ := tableNames(ctx, cat, other)
			candidates = append(candidates, names...)
		}
	}
	msg := fmt.Sprintf("table %s does not exist in the catalog of warehouse %s", name, wh)
	hint := config.Closest(name, candidates)
	if hint != "" {
		msg += fmt.Sprintf("; did you mean %s?", hint)
	}
	// The table meant is named once, in the question.
	others := slices.DeleteFunc(slices.Clone(siblings), func(s string) bool { return s == hint })
	there := ""
	if len(others) > 0 {
		shown := others[:min(len(others), shownTables)]
		more := ""
		if len(others) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(others)-len(shown))
		}
		also := ""
		if hint != "" {
			also = "also "
		}
		there = fmt.Sprintf("namespace %s %shas %s%s; ", strings.Join(ns, "."), also, strings.Join(shown, ", "), more)
	}
	return usagef("%s (%s`floe table list` shows them all, --warehouse picks another)", msg, there)
}

// requireTable checks that the catalog has the table a command acts on,
// for commands that hand the name to a library whose error suggests
// nothing.
func requireTable(ctx context.Context, cat catalog.Catalog, cf catalogFlags, ident table.Identifier) error {
	ok, err := cat.CheckTableExists(ctx, ident)
	if err != nil || ok {
		// An unreachable catalog is reported by the command's own load.
		return nil
	}
	return noSuchTable(ctx, cat, cf, ident)
}

// tableNames are a namespace's tables as NS.TABLE, sorted.
func tableNames(ctx context.Context, cat catalog.Catalog, ns table.Identifier) ([]string, error) {
	var names []string
	for id, err := range cat.ListTables(ctx, ns) {
		if err != nil {
			return nil, err
		}
		names = append(names, strings.Join(id, "."))
	}
	slices.Sort(names)
	return names, nil
}
