package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// register reads metadata files only inside the warehouse: for a file
// elsewhere the answer is the same whether it exists, is metadata or is
// something else, and no answer quotes a file. Inside the warehouse, a
// file that is not metadata is refused without its content either, and
// metadata placing a table over another's is refused.
func TestRegisterRevealsNothingOutside(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.createTable("db", "t")
	loc := w.metadataLocation("db", "t")
	metadata, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		t.Fatal(err)
	}

	outside := t.TempDir()
	files := map[string][]byte{
		"secret.metadata.json": []byte("SECRET-CONTENT {\"token\": \"hunter2\"}"),
		"real.metadata.json":   metadata,
		"passwd":               []byte("root:x:0:0:root:/root:/bin/bash\n"),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(outside, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	register := func(name, at string) (int, string, string) {
		code, _, out := w.do("POST", "/v1/namespaces/db/register", map[string]any{"name": name, "metadata-location": at})
		b, _ := out["error"].(map[string]any)
		msg, _ := b["message"].(string)
		typ, _ := b["type"].(string)
		return code, typ, msg
	}
	var first string
	for _, at := range []string{
		filepath.Join(outside, "secret.metadata.json"),
		"file://" + filepath.Join(outside, "real.metadata.json"),
		filepath.Join(outside, "missing.metadata.json"),
		filepath.Join(outside, "passwd"),
		filepath.Join(outside, "nodir", "x.metadata.json"),
		"file://" + w.warehouse + "/../" + filepath.Base(outside) + "/secret.metadata.json",
		w.warehouse + "/db.db/t/../../../" + filepath.Base(outside) + "/real.metadata.json",
	} {
		code, typ, msg := register("r", at)
		if code != 400 || typ != "BadRequestException" {
			t.Fatalf("register %s: %d %s %q, want 400 BadRequestException", at, code, typ, msg)
		}
		for _, leak := range []string{"SECRET", "hunter2", "root:", "invalid character", "no such file", "format-version", "table-uuid"} {
			if strings.Contains(msg, leak) {
				t.Fatalf("register %s tells %q: %s", at, leak, msg)
			}
		}
		// One answer for every file out there, the location aside.
		shape := strings.ReplaceAll(msg, at, "LOCATION")
		if first == "" {
			first = shape
		} else if shape != first {
			t.Fatalf("register %s answers %q; another place outside answered %q", at, shape, first)
		}
		if ok, _ := w.direct.CheckTableExists(ctx, table.Identifier{"db", "r"}); ok {
			t.Fatalf("register %s added the table", at)
		}
	}
	if !strings.Contains(first, w.warehouse) || !strings.Contains(first, "--allow-location-prefix") {
		t.Fatalf("the refusal does not say where the server reads and how to allow more: %s", first)
	}

	// Inside the warehouse: the catalog's database and a file that is not
	// metadata are refused without a byte of them.
	junk := filepath.Join(w.warehouse, "db.db", "junk", "00000-x.metadata.json")
	if err := os.MkdirAll(filepath.Dir(junk), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("SQLite format 3\x00 SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{filepath.Join(w.warehouse, "catalog.db"), junk, "file://" + junk} {
		code, _, msg := register("r", at)
		if code != 400 || strings.Contains(msg, "SQLite") || strings.Contains(msg, "SECRET") || strings.Contains(msg, "invalid character") {
			t.Fatalf("register %s: %d %q", at, code, msg)
		}
	}
	// Metadata placing a table over db.t's files is refused.
	if code, _, msg := register("r", loc); code != 400 || !strings.Contains(msg, "db.t") {
		t.Fatalf("register over db.t: %d %q", code, msg)
	}
	if ok, _ := w.direct.CheckTableExists(ctx, table.Identifier{"db", "r"}); ok {
		t.Fatal("a refused registration added the table")
	}
	// Once db.t is dropped, its metadata registers.
	w.must(204, "DELETE", "/v1/namespaces/db/tables/t", nil)
	w.must(200, "POST", "/v1/namespaces/db/register", map[string]any{"name": "r", "metadata-location": loc})
}
