package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/serve"
)

// errorOf is the message of an error body.
func errorOf(t *testing.T, out map[string]any) string {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if msg == "" {
		t.Fatalf("no error message in %v", out)
	}
	return msg
}

// A table's location, given at create, staged create, commit or through a
// namespace's location, must lie inside the warehouse and apart from every
// other table's; the paths are compared as the file system sees them, not
// as strings. A prefix the operator allowed is usable, and a sibling that
// merely starts with the same characters is not.
func TestLocationConfinedToWarehouse(t *testing.T) {
	outside := t.TempDir()
	allowed := filepath.Join(outside, "lake")
	w := newWorldWith(t, func(c *serve.Config) { c.AllowedLocationPrefixes = []string{allowed} })
	ctx := context.Background()
	w.createTable("db", "a")
	aLoc := filepath.Join(w.warehouse, "db.db", "a")
	if got := strings.TrimPrefix(w.loadLocation("db", "a"), "file://"); got != aLoc {
		t.Fatalf("db.a is at %s, want %s", got, aLoc)
	}

	refused := map[string]string{
		"outside":                 filepath.Join(outside, "t"),
		"outside as URI":          "file://" + filepath.Join(outside, "t"),
		"the warehouse itself":    w.warehouse,
		"dot-dot out":             "file://" + w.warehouse + "/db.db/../../" + filepath.Base(outside) + "/t",
		"dot-dot in":              w.warehouse + "/x/../db.db/a/in",
		"inside db.a":             aLoc + "/inner",
		"inside db.a, URI":        "file://" + aLoc + "/data/x",
		"db.a with a slash":       aLoc + "/",
		"db.a, double slashes":    strings.Replace(aLoc, "/db.db/", "//db.db//", 1),
		"db.a, localhost URI":     "file://localhost" + aLoc,
		"holding db.a":            filepath.Join(w.warehouse, "db.db"),
		"a sibling of the prefix": allowed + "-2/t",
		"relative":                "db.db/rel",
		"other host":              "file://elsewhere" + w.warehouse + "/t",
		"object store":            "s3://bucket/t",
		"the warehouse's case":    strings.ToUpper(w.warehouse) + "/t",
	}
	for what, loc := range refused {
		out := w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "location": loc})
		msg := errorOf(t, out)
		if !strings.Contains(msg, loc) || !(strings.Contains(msg, w.warehouse) || strings.Contains(msg, "db.a")) {
			t.Errorf("%s: the refusal names neither the location and the warehouse nor the table in the way: %s", what, msg)
		}
		if ok, _ := w.direct.CheckTableExists(ctx, table.Identifier{"db", "n"}); ok {
			t.Fatalf("%s: the table was created at %s", what, loc)
		}
		w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "location": loc, "stage-create": true})
	}
	out := w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "location": filepath.Join(outside, "t")})
	if msg := errorOf(t, out); !strings.Contains(msg, "--allow-location-prefix") {
		t.Errorf("the refusal does not name the fix: %s", msg)
	}
	// write.data.path and write.metadata.path are places too.
	for _, key := range []string{"write.data.path", "write.metadata.path", "write.object-storage.path"} {
		w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "properties": map[string]string{key: aLoc + "/data"}})
		w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "properties": map[string]string{key: outside}})
	}

	// Places of their own, inside the warehouse or under the prefix, are fine.
	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "b", "schema": eventSchema, "location": "file://" + w.warehouse + "/custom/b"})
	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "c", "schema": eventSchema, "location": allowed + "/c",
		"properties": map[string]string{"write.data.path": allowed + "/c-data"}})
	w.must(400, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "n", "schema": eventSchema, "location": allowed + "/c-data/n"})

	// A commit may not move a table, or its data, outside or onto another.
	before := w.metadataLocation("db", "b")
	for _, u := range []map[string]any{
		{"action": "set-location", "location": outside + "/b"},
		{"action": "set-location", "location": aLoc},
		{"action": "set-properties", "updates": map[string]string{"write.data.path": aLoc + "/data"}},
		{"action": "set-properties", "updates": map[string]string{"write.metadata.path": "file://" + outside}},
	} {
		w.must(400, "POST", "/v1/namespaces/db/tables/b", map[string]any{"requirements": []any{}, "updates": []any{u}})
	}
	if after := w.metadataLocation("db", "b"); after != before {
		t.Fatalf("a refused commit moved db.b from %s to %s", before, after)
	}
	w.must(200, "POST", "/v1/namespaces/db/tables/b", map[string]any{"requirements": []any{}, "updates": []any{
		map[string]any{"action": "set-properties", "updates": map[string]string{"write.data.path": w.warehouse + "/custom/b/data2"}},
	}})
	// A staged create's commit is checked as a create.
	staged := w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "s", "schema": eventSchema, "stage-create": true})
	meta := staged["metadata"].(map[string]any)
	for _, loc := range []string{aLoc + "/s", outside + "/s", ""} {
		updates := []any{
			map[string]any{"action": "assign-uuid", "uuid": meta["table-uuid"]},
			map[string]any{"action": "upgrade-format-version", "format-version": 2},
			map[string]any{"action": "add-schema", "schema": eventSchema},
			map[string]any{"action": "set-current-schema", "schema-id": -1},
		}
		if loc != "" {
			updates = append(updates, map[string]any{"action": "set-location", "location": loc})
		}
		w.must(400, "POST", "/v1/namespaces/db/tables/s", map[string]any{"requirements": []any{map[string]any{"type": "assert-create"}}, "updates": updates})
		if ok, _ := w.direct.CheckTableExists(ctx, table.Identifier{"db", "s"}); ok {
			t.Fatalf("a staged create committed at %q", loc)
		}
	}

	// A namespace's location decides its tables' default: it is held to
	// the same rule.
	w.must(400, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"elsewhere"}, "properties": map[string]string{"location": outside}})
	w.must(400, "POST", "/v1/namespaces/db/properties", map[string]any{"updates": map[string]string{"location": "file://" + outside}})
	w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"ns2"}, "properties": map[string]string{"location": allowed + "/ns2"}})
	w.must(200, "POST", "/v1/namespaces/ns2/tables", map[string]any{"name": "t", "schema": eventSchema})
	if got := w.loadLocation("ns2", "t"); got != allowed+"/ns2/t" {
		t.Fatalf("ns2.t is at %s, want %s/ns2/t", got, allowed)
	}
	// A namespace whose location holds a table's gets no table at its
	// default place there.
	w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"ns3"}, "properties": map[string]string{"location": aLoc}})
	w.must(400, "POST", "/v1/namespaces/ns3/tables", map[string]any{"name": "t", "schema": eventSchema})
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("the server wrote outside the warehouse and the allowed prefix: %v", entries)
	}
}

// loadLocation is a table's location as the catalog holds it.
func (w *world) loadLocation(ident ...string) string {
	w.t.Helper()
	tbl, err := w.direct.LoadTable(context.Background(), ident)
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl.Location()
}

// An operator's prefix must name a folder.
func TestAllowedPrefixValidated(t *testing.T) {
	for _, prefix := range []string{"relative/dir", "/", "s3://bucket", "file:///a/../b"} {
		if _, err := serve.New(serve.Config{AllowedLocationPrefixes: []string{prefix}}); err == nil || !strings.Contains(err.Error(), prefix) {
			t.Errorf("prefix %q: %v, want an error naming it", prefix, err)
		}
	}
}
