package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// The server owns its warehouse and nothing else: a client may place a
// table only inside the warehouse (or under a prefix the operator allowed),
// and never where another table keeps its files, since dropping either
// with purgeRequested=true would delete the other's.

// located is one place a table keeps files: its location, or a
// write.*.path property.
type located struct {
	what, loc string
}

// writePathKey tells the properties that put a table's files elsewhere
// than its location: write.data.path, write.metadata.path and the
// deprecated write.object-storage.path and write.folder-storage.path.
func writePathKey(k string) bool {
	return strings.HasPrefix(k, "write.") && strings.HasSuffix(k, ".path")
}

// placesOf is where a table with this location and these properties keeps
// its files.
func placesOf(location string, props map[string]string) []located {
	out := []located{{"location", location}}
	keys := make([]string, 0, len(props))
	for k := range props {
		if writePathKey(k) && props[k] != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, located{k, props[k]})
	}
	return out
}

// placedBy is what a commit's updates move: set-location and write.*.path
// properties. The update types are iceberg-go's unexported ones, so they
// are read back from their JSON.
func placedBy(updates table.Updates) ([]located, error) {
	var out []located
	for _, u := range updates {
		if a := u.Action(); a != table.UpdateSetLocation && a != table.UpdateSetProperties {
			continue
		}
		b, err := json.Marshal(u)
		if err != nil {
			return nil, err
		}
		var f struct {
			Location *string           `json:"location"`
			Updates  map[string]string `json:"updates"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		if f.Location != nil {
			out = append(out, located{"location", *f.Location})
		}
		out = append(out, placesOf("", f.Updates)[1:]...)
	}
	return out, nil
}

// allowed tells p lies where the server may place tables: strictly inside
// the warehouse (the warehouse itself holds every table), or under an
// allowed prefix.
func (s *Server) allowed(p place) bool {
	if s.warehouse != nil && p.inside(*s.warehouse) {
		return true
	}
	for _, a := range s.prefixes {
		if p.within(a) {
			return true
		}
	}
	return false
}

// where says where the server places tables, for messages.
func (s *Server) where() string {
	var parts []string
	if s.warehouse != nil {
		parts = append(parts, "inside the warehouse "+s.cfg.Warehouse)
	}
	if len(s.cfg.AllowedLocationPrefixes) > 0 {
		parts = append(parts, "under the allowed prefixes "+strings.Join(s.cfg.AllowedLocationPrefixes, ", "))
	}
	if len(parts) == 0 {
		return "nowhere of a client's choosing (it has no warehouse and no allowed prefix; the catalog places tables itself)"
	}
	return strings.Join(parts, " or ")
}

// checkPlaces refuses, with 400, a table ident whose files would go to a
// place the server does not own or that overlaps another table's. The
// caller holds s.placing until the table is created or moved, so that two
// requests cannot both pass for overlapping places.
func (s *Server) checkPlaces(ctx context.Context, ident table.Identifier, locs []located) *response {
	if len(locs) == 0 {
		return nil
	}
	name := strings.Join(ident, ".")
	places := make([]place, len(locs))
	for i, l := range locs {
		p, err := parsePlace(l.loc)
		if err != nil {
			res := badRequest("%s %q of table %s is not a location this server accepts: %v; give an absolute path or URI %s", l.what, l.loc, name, err, s.where())
			return &res
		}
		if !s.allowed(p) {
			res := badRequest("%s %q of table %s is outside the places this server owns: it places tables only %s. "+
				"Leave the location out (the table then goes under the warehouse), give one there, "+
				"or start floe serve with --allow-location-prefix naming a prefix of %q", l.what, l.loc, name, s.where(), l.loc)
			return &res
		}
		places[i] = p
	}
	areas, err := s.tableAreas(ctx, ident)
	if err != nil {
		res := s.fromError(err)
		return &res
	}
	for i, p := range places {
		for _, a := range areas {
			if p.overlaps(a.at) {
				res := badRequest("%s %q of table %s overlaps table %s, whose files are at %s: two tables there would share files, and purging either would delete the other's; "+
					"give a place of its own, or leave the location out", locs[i].what, locs[i].loc, name, a.table, a.at)
				return &res
			}
		}
	}
	return nil
}

// area is a place where a table keeps files.
type area struct {
	table string
	at    place
}

// tableAreas lists where every table of the catalog but except keeps its
// files. A table whose metadata does not load is taken to be at its
// default location. It reads every table's metadata, which is what
// creating or moving a table costs; loads and commits do not call it.
func (s *Server) tableAreas(ctx context.Context, except table.Identifier) ([]area, error) {
	nss, err := s.allNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []area
	for _, ns := range nss {
		for id, err := range s.cfg.Catalog.ListTables(ctx, ns) {
			if errors.Is(err, catalog.ErrNoSuchNamespace) {
				break // dropped meanwhile
			}
			if err != nil {
				return nil, err
			}
			if slices.Equal(id, except) {
				continue
			}
			var locs []located
			if tbl, err := s.cfg.Catalog.LoadTable(ctx, id); err == nil {
				locs = placesOf(tbl.Location(), tbl.Properties())
			} else if def, derr := s.defaultLocation(ctx, id); derr == nil {
				s.logger().Warn("a table's metadata does not load; taking it to be at its default location", "table", strings.Join(id, "."), "location", def, "error", err)
				locs = []located{{"location", def}}
			} else {
				s.logger().Warn("a table's metadata does not load and it has no default location; its files are not known", "table", strings.Join(id, "."), "error", err)
			}
			for _, l := range locs {
				if p, err := parsePlace(l.loc); err == nil {
					out = append(out, area{table: strings.Join(id, "."), at: p})
				}
			}
		}
	}
	return out, nil
}

// allNamespaces lists every namespace, nested ones included: some
// catalogs list all of them at once, others only a parent's children.
func (s *Server) allNamespaces(ctx context.Context) ([]table.Identifier, error) {
	var out []table.Identifier
	seen := map[string]bool{}
	queue := []table.Identifier{nil}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		nss, err := s.cfg.Catalog.ListNamespaces(ctx, parent)
		if errors.Is(err, catalog.ErrNoSuchNamespace) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		for _, ns := range nss {
			key := strings.Join(ns, "\x1f")
			if seen[key] || len(ns) <= len(parent) {
				continue
			}
			seen[key] = true
			out = append(out, ns)
			queue = append(queue, ns)
		}
	}
	return out, nil
}
