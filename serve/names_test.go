package serve_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// Names that are not names (empty, path steps, separators, control
// characters, over 255 bytes) are refused with 400 wherever a client gives
// one, and the answer never holds a path of the server's; nor does any
// error the catalog raises.
func TestNamesValidated(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.createTable("db", "t")
	bad := map[string]string{
		"empty":        "",
		"dot":          ".",
		"dot-dot":      "..",
		"slash":        "a/b",
		"backslash":    `a\b`,
		"NUL":          "a\x00b",
		"control":      "a\x01b",
		"DEL":          "a\x7fb",
		"unit sep":     "a\x1fb",
		"newline":      "a\nb",
		"5000 bytes":   strings.Repeat("x", 5000),
		"256 bytes":    strings.Repeat("y", 256),
		"dot-dot path": "../../etc",
	}
	check := func(what string, code int, out map[string]any) {
		t.Helper()
		if code != 400 {
			t.Errorf("%s: %d %v, want 400", what, code, out)
			return
		}
		if msg := errorOf(t, out); strings.Contains(msg, w.warehouse) || strings.Contains(msg, os.TempDir()) {
			t.Errorf("%s: the answer holds a server path: %s", what, msg)
		}
	}
	for what, name := range bad {
		code, _, out := w.do("POST", "/v1/namespaces/db/tables", map[string]any{"name": name, "schema": eventSchema})
		check("create table "+what, code, out)
		code, _, out = w.do("POST", "/v1/namespaces/db/tables", map[string]any{"name": name, "schema": eventSchema, "stage-create": true})
		check("stage table "+what, code, out)
		code, _, out = w.do("POST", "/v1/namespaces", map[string]any{"namespace": []string{name}})
		check("create namespace "+what, code, out)
		code, _, out = w.do("POST", "/v1/namespaces", map[string]any{"namespace": []string{"db", name}})
		check("create nested namespace "+what, code, out)
		code, _, out = w.do("POST", "/v1/tables/rename", map[string]any{
			"source": map[string]any{"namespace": []string{"db"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"db"}, "name": name}})
		check("rename to "+what, code, out)
		code, _, out = w.do("POST", "/v1/namespaces/db/register", map[string]any{"name": name, "metadata-location": w.metadataLocation("db", "t")})
		check("register "+what, code, out)
		if name == "" || strings.ContainsAny(name, "/\x1f") {
			continue // not one path segment
		}
		esc := url.PathEscape(name)
		paths := []string{"/v1/namespaces/db%1F" + esc, "/v1/namespaces/db%1F" + esc + "/tables/t"}
		if name != "." && name != ".." {
			// The router itself resolves a path step in a path.
			paths = append(paths, "/v1/namespaces/"+esc, "/v1/namespaces/"+esc+"/tables", "/v1/namespaces/db/tables/"+esc)
		}
		for _, p := range paths {
			code, _, out = w.do("GET", p, nil)
			check("GET "+p[:min(len(p), 60)], code, out)
		}
	}
	// JSON carries no invalid UTF-8; a path does.
	code, _, out := w.do("GET", "/v1/namespaces/a%FFb", nil)
	check("GET a namespace that is not UTF-8", code, out)
	// A namespace whose directory name would be too long.
	long := []string{strings.Repeat("a", 200), strings.Repeat("b", 200)}
	code, _, out = w.do("POST", "/v1/namespaces", map[string]any{"namespace": long})
	check("two 200-byte levels", code, out)
	for _, ns := range []table.Identifier{{".."}, {"db", ".."}, long} {
		if ok, _ := w.direct.CheckNamespaceExists(ctx, ns); ok {
			t.Errorf("namespace %q was created", ns)
		}
	}
	if ok, _ := w.direct.CheckTableExists(ctx, table.Identifier{"db", ".."}); ok {
		t.Error("table db.. was created")
	}
	if entries, _ := os.ReadDir(filepath.Join(w.warehouse, "db.db")); len(entries) != 1 {
		t.Errorf("db.db holds %d entries, want only t", len(entries))
	}

	// A catalog error that names a file reaches the client without it.
	if err := os.Remove(strings.TrimPrefix(w.metadataLocation("db", "t"), "file://")); err != nil {
		t.Fatal(err)
	}
	for _, req := range [][2]string{{"GET", "/v1/namespaces/db/tables/t"}, {"DELETE", "/v1/namespaces/db/tables/t?purgeRequested=true"}} {
		code, _, out := w.do(req[0], req[1], nil)
		if code < 400 {
			t.Fatalf("%s %s of a table whose metadata file is gone: %d", req[0], req[1], code)
		}
		if msg := errorOf(t, out); strings.Contains(msg, w.warehouse) || strings.Contains(msg, "metadata.json") || !strings.Contains(msg, "ref=") {
			t.Fatalf("%s %s: the answer holds a server path, or no reference to the log: %s", req[0], req[1], msg)
		}
	}
}
