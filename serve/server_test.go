package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/serve"
)

// world is a server over an embedded catalog in a temporary warehouse; the
// catalog is also opened directly, so that tests check what the server did
// without going through it.
type world struct {
	t         *testing.T
	url       string
	direct    catalog.Catalog
	catalog   config.Catalog
	warehouse string // a local directory
	token     string
}

// loadAuth is serve.LoadAuth of a tokens file and a clients file holding
// the given lines.
func loadAuth(t *testing.T, tokens, clients string) *serve.Auth {
	t.Helper()
	dir := t.TempDir()
	tp, cp := filepath.Join(dir, "tokens"), filepath.Join(dir, "clients")
	if err := os.WriteFile(tp, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, []byte(clients), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := serve.LoadAuth(tp, cp)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

func newWorld(t *testing.T, auth *serve.Auth) *world {
	return newWorldWith(t, func(c *serve.Config) { c.Auth = auth })
}

// newWorldWith is newWorld with the server's configuration changed by set.
func newWorldWith(t *testing.T, set func(*serve.Config)) *world {
	t.Helper()
	cfg := config.Catalog{Warehouse: t.TempDir()}
	ctx := context.Background()
	backing, err := catalogs.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := catalogs.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := serve.Config{
		Catalog: backing, Warehouse: catalogs.Warehouse(cfg),
		Register: func(ctx context.Context, ident table.Identifier, loc string) (*table.Table, error) {
			return catalogs.RegisterIn(ctx, backing, cfg, ident, loc)
		},
	}
	set(&sc)
	server, err := serve.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.Handler())
	t.Cleanup(func() {
		srv.Close()
		for _, c := range []catalog.Catalog{backing, direct} {
			_ = c.(catalog.Closer).Close()
		}
	})
	return &world{t: t, url: srv.URL, direct: direct, catalog: cfg, warehouse: cfg.Warehouse}
}

// do sends one request and decodes a JSON answer.
func (w *world) do(method, path string, body any, header ...string) (int, http.Header, map[string]any) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			w.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.url+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			w.t.Fatalf("%s %s: %d with a body that is not JSON: %s", method, path, res.StatusCode, raw)
		}
	}
	return res.StatusCode, res.Header, out
}

func (w *world) must(want int, method, path string, body any, header ...string) map[string]any {
	w.t.Helper()
	got, _, out := w.do(method, path, body, header...)
	if got != want {
		w.t.Fatalf("%s %s: status %d, want %d: %v", method, path, got, want, out)
	}
	return out
}

var eventSchema = map[string]any{
	"type": "struct", "schema-id": 0,
	"fields": []any{
		map[string]any{"id": 1, "name": "id", "type": "long", "required": true},
		map[string]any{"id": 2, "name": "v", "type": "string", "required": false},
	},
}

func (w *world) createTable(ns, name string) map[string]any {
	w.t.Helper()
	w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{ns}})
	return w.must(200, "POST", "/v1/namespaces/"+ns+"/tables", map[string]any{"name": name, "schema": eventSchema})
}

func (w *world) metadataLocation(ident ...string) string {
	w.t.Helper()
	tbl, err := w.direct.LoadTable(context.Background(), ident)
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl.MetadataLocation()
}

// A commit whose requirement does not hold is refused with 409 and changes
// nothing; one whose requirements hold goes through.
func TestFailedRequirementIs409(t *testing.T) {
	w := newWorld(t, nil)
	created := w.createTable("db", "t")
	meta := created["metadata"].(map[string]any)
	before := w.metadataLocation("db", "t")
	setProp := []any{map[string]any{"action": "set-properties", "updates": map[string]string{"owner": "floe"}}}
	for _, req := range []any{
		map[string]any{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000001"},
		map[string]any{"type": "assert-current-schema-id", "current-schema-id": 7},
		map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 42},
		map[string]any{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 99},
		map[string]any{"type": "assert-default-spec-id", "default-spec-id": 3},
		map[string]any{"type": "assert-create"},
	} {
		_, _, out := w.do("POST", "/v1/namespaces/db/tables/t", map[string]any{"requirements": []any{req}, "updates": setProp})
		e, _ := out["error"].(map[string]any)
		if e == nil || e["code"] != float64(409) || e["type"] != "CommitFailedException" {
			t.Fatalf("requirement %v: got %v, want a 409 CommitFailedException", req, out)
		}
		if after := w.metadataLocation("db", "t"); after != before {
			t.Fatalf("requirement %v failed but the table moved from %s to %s", req, before, after)
		}
	}
	w.must(200, "POST", "/v1/namespaces/db/tables/t", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": meta["table-uuid"]}},
		"updates":      setProp,
	})
	tbl, err := w.direct.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Properties()["owner"] != "floe" {
		t.Fatalf("the committed property is missing: %v", tbl.Properties())
	}
	// A commit to a table that does not exist is a 404, not a create.
	w.must(404, "POST", "/v1/namespaces/db/tables/nope", map[string]any{"requirements": []any{}, "updates": setProp})
	if ok, _ := w.direct.CheckTableExists(context.Background(), table.Identifier{"db", "nope"}); ok {
		t.Fatal("a commit to a missing table created it")
	}
}

// A staged create writes nothing until the client commits it with
// assert-create.
func TestStagedCreate(t *testing.T) {
	w := newWorld(t, nil)
	w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}})
	staged := w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "s", "schema": eventSchema, "stage-create": true})
	if _, has := staged["metadata-location"]; has {
		t.Fatalf("a staged table has a metadata location: %v", staged)
	}
	if ok, _ := w.direct.CheckTableExists(context.Background(), table.Identifier{"db", "s"}); ok {
		t.Fatal("stage-create created the table")
	}
	meta := staged["metadata"].(map[string]any)
	w.must(200, "POST", "/v1/namespaces/db/tables/s", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-create"}},
		"updates": []any{
			map[string]any{"action": "assign-uuid", "uuid": meta["table-uuid"]},
			map[string]any{"action": "upgrade-format-version", "format-version": 2},
			map[string]any{"action": "add-schema", "schema": eventSchema},
			map[string]any{"action": "set-current-schema", "schema-id": -1},
			map[string]any{"action": "add-spec", "spec": map[string]any{"spec-id": 0, "fields": []any{}}},
			map[string]any{"action": "set-default-spec", "spec-id": -1},
			map[string]any{"action": "add-sort-order", "sort-order": map[string]any{"order-id": 0, "fields": []any{}}},
			map[string]any{"action": "set-default-sort-order", "sort-order-id": -1},
			map[string]any{"action": "set-location", "location": meta["location"]},
		},
	})
	tbl, err := w.direct.LoadTable(context.Background(), table.Identifier{"db", "s"})
	if err != nil {
		t.Fatalf("the committed staged table does not load: %v", err)
	}
	if tbl.Metadata().TableUUID().String() != meta["table-uuid"] || tbl.Schema().NumFields() != 2 {
		t.Fatalf("the staged table committed as %s with %d fields; want uuid %v and 2 fields", tbl.Metadata().TableUUID(), tbl.Schema().NumFields(), meta["table-uuid"])
	}
	// A second assert-create of the same name conflicts.
	w.must(409, "POST", "/v1/namespaces/db/tables/s", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-create"}},
		"updates":      []any{map[string]any{"action": "assign-uuid", "uuid": meta["table-uuid"]}},
	})
}

// A retried mutation with the same Idempotency-Key gets the first answer
// and is not applied twice.
func TestIdempotencyKey(t *testing.T) {
	w := newWorld(t, nil)
	const key = "01890a5d-ac96-774b-bcce-b302099a8057"
	first := w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}, "properties": map[string]string{"a": "1"}}, "Idempotency-Key", key)
	again := w.must(200, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}, "properties": map[string]string{"a": "1"}}, "Idempotency-Key", key)
	if fmt.Sprint(first) != fmt.Sprint(again) {
		t.Fatalf("the replay differs: %v then %v", first, again)
	}
	// Without the key, the same create is the conflict it is.
	w.must(409, "POST", "/v1/namespaces", map[string]any{"namespace": []string{"db"}})

	w.must(200, "POST", "/v1/namespaces/db/tables", map[string]any{"name": "t", "schema": eventSchema})
	commit := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"n": "1"}}}}
	const commitKey = "01890a5d-ac96-774b-bcce-b302099a8058"
	var wg sync.WaitGroup
	locs := make([]string, 4)
	for i := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, out := w.do("POST", "/v1/namespaces/db/tables/t", commit, "Idempotency-Key", commitKey)
			locs[i], _ = out["metadata-location"].(string)
		}()
	}
	wg.Wait()
	for _, l := range locs {
		if l == "" || l != locs[0] {
			t.Fatalf("four sends of one commit answered %v; want one metadata location four times", locs)
		}
	}
	tbl, err := w.direct.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	previous := 0
	for range tbl.Metadata().PreviousFiles() {
		previous++
	}
	if tbl.MetadataLocation() != locs[0] || previous != 1 {
		t.Fatalf("the table is at %s after %d metadata files; want one commit, at %s", tbl.MetadataLocation(), previous+1, locs[0])
	}
	// The key belongs to its operation.
	w.must(400, "DELETE", "/v1/namespaces/db/tables/t", nil, "Idempotency-Key", commitKey)
}

// A load carries an ETag; the same ETag in If-None-Match gets 304 until
// the table changes.
func TestETag(t *testing.T) {
	w := newWorld(t, nil)
	w.createTable("db", "t")
	code, h, _ := w.do("GET", "/v1/namespaces/db/tables/t", nil)
	tag := h.Get("ETag")
	if code != 200 || tag == "" {
		t.Fatalf("load: %d, ETag %q", code, tag)
	}
	if code, _, _ := w.do("GET", "/v1/namespaces/db/tables/t", nil, "If-None-Match", tag); code != http.StatusNotModified {
		t.Fatalf("load with the current ETag: %d, want 304", code)
	}
	w.must(200, "POST", "/v1/namespaces/db/tables/t", map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"n": "1"}}}})
	code, h, _ = w.do("GET", "/v1/namespaces/db/tables/t", nil, "If-None-Match", tag)
	if code != 200 || h.Get("ETag") == tag {
		t.Fatalf("load after a commit: %d with ETag %q (was %q); want 200 and a new ETag", code, h.Get("ETag"), tag)
	}
}

// Namespaces, tables, rename, register and drop, each checked in the
// catalog directly.
func TestCatalogOperations(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.createTable("db", "t")
	if code, _, _ := w.do("HEAD", "/v1/namespaces/db", nil); code != 204 {
		t.Fatalf("HEAD namespace: %d", code)
	}
	if code, _, _ := w.do("HEAD", "/v1/namespaces/nope", nil); code != 404 {
		t.Fatalf("HEAD missing namespace: %d", code)
	}
	if code, _, _ := w.do("HEAD", "/v1/namespaces/db/tables/t", nil); code != 204 {
		t.Fatalf("HEAD table: %d", code)
	}
	out := w.must(404, "GET", "/v1/namespaces/db/tables/nope", nil)
	if out["error"].(map[string]any)["type"] != "NoSuchTableException" {
		t.Fatalf("missing table: %v", out)
	}
	out = w.must(200, "POST", "/v1/namespaces/db/properties", map[string]any{"removals": []string{"gone"}, "updates": map[string]string{"owner": "me"}})
	if fmt.Sprint(out["updated"]) != "[owner]" || fmt.Sprint(out["missing"]) != "[gone]" {
		t.Fatalf("properties: %v", out)
	}
	if props, _ := w.direct.LoadNamespaceProperties(ctx, table.Identifier{"db"}); props["owner"] != "me" {
		t.Fatalf("namespace properties in the catalog: %v", props)
	}
	out = w.must(200, "GET", "/v1/namespaces/db/tables", nil)
	if fmt.Sprint(out["identifiers"]) != "[map[name:t namespace:[db]]]" {
		t.Fatalf("list tables: %v", out)
	}
	w.must(204, "POST", "/v1/tables/rename", map[string]any{"source": map[string]any{"namespace": []string{"db"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"db"}, "name": "u"}})
	loc := w.metadataLocation("db", "u")
	w.must(409, "POST", "/v1/namespaces/db/register", map[string]any{"name": "u", "metadata-location": loc})
	w.must(404, "POST", "/v1/namespaces/elsewhere/register", map[string]any{"name": "u", "metadata-location": loc})
	// A second table over u's files is refused: purging either would
	// delete the other's.
	w.must(400, "POST", "/v1/namespaces/db/register", map[string]any{"name": "copy", "metadata-location": loc})
	w.must(409, "DELETE", "/v1/namespaces/db", nil)
	w.must(204, "DELETE", "/v1/namespaces/db/tables/u", nil)
	if _, err := os.Stat(strings.TrimPrefix(loc, "file://")); err != nil {
		t.Fatalf("a drop without purge deleted the metadata file: %v", err)
	}
	w.must(200, "POST", "/v1/namespaces/db/register", map[string]any{"name": "copy", "metadata-location": loc})
	if w.metadataLocation("db", "copy") != loc {
		t.Fatal("the registered table does not point at the metadata file given")
	}
	dataDir := filepath.Dir(filepath.Dir(strings.TrimPrefix(loc, "file://")))
	w.must(204, "DELETE", "/v1/namespaces/db/tables/copy?purgeRequested=true", nil)
	if _, err := os.Stat(dataDir); err == nil {
		if entries, _ := os.ReadDir(filepath.Join(dataDir, "metadata")); len(entries) > 0 {
			t.Fatalf("purge left %d metadata files in %s", len(entries), dataDir)
		}
	}
	w.must(204, "DELETE", "/v1/namespaces/db", nil)
	if ok, _ := w.direct.CheckNamespaceExists(ctx, table.Identifier{"db"}); ok {
		t.Fatal("the dropped namespace is still in the catalog")
	}
}

// With tokens configured, a request without one gets 401; a static token
// and a token issued to an OAuth2 client through /v1/oauth/tokens both
// work, including for iceberg-go's REST client given the client's
// credential.
func TestBearerTokens(t *testing.T) {
	w := newWorld(t, loadAuth(t, "# ops\nstatic-token-1\n", "spark:s3cret\n"))
	for _, path := range []string{"/v1/config", "/v1/namespaces"} {
		out := w.must(401, "GET", path, nil)
		if out["error"].(map[string]any)["type"] != "NotAuthorizedException" {
			t.Fatalf("%s without a token: %v", path, out)
		}
	}
	w.token = "wrong"
	w.must(401, "GET", "/v1/namespaces", nil)
	w.token = "static-token-1"
	w.must(200, "GET", "/v1/namespaces", nil)

	w.token = ""
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"spark"}, "client_secret": {"wrong"}, "scope": {"catalog"}}
	res, err := http.PostForm(w.url+"/v1/oauth/tokens", form)
	if err != nil {
		t.Fatalf("a wrong secret: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("a wrong secret: %v", res)
	}
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "served", w.url, rest.WithCredential("spark:s3cret"))
	if err != nil {
		t.Fatalf("iceberg-go's REST client with the client's credential: %v", err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"viaoauth"}, nil); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.direct.CheckNamespaceExists(ctx, table.Identifier{"viaoauth"}); !ok {
		t.Fatal("the namespace created with an issued token is not in the catalog")
	}
}

// Eight committers append to one table through the server at once, each
// retrying its 409s as clients do: every append lands exactly once.
func TestConcurrentCommitters(t *testing.T) {
	w := newWorld(t, nil)
	w.createTable("db", "t")
	ctx := context.Background()
	const committers, appends, rows = 8, 3, 100
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, committers)
	for c := range committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cat, err := rest.NewCatalog(ctx, "served", w.url)
			if err != nil {
				errs <- err
				return
			}
			for a := range appends {
				first := int64((c*appends + a) * rows)
				for {
					tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "t"})
					if err != nil {
						errs <- err
						return
					}
					data := idTable(first, rows)
					_, err = tbl.AppendTable(ctx, data, rows, iceberg.Properties{"committer": fmt.Sprint(c)})
					data.Release()
					if errors.Is(err, table.ErrCommitFailed) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tbl, err := w.direct.LoadTable(ctx, table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != committers*appends {
		t.Fatalf("%d snapshots, want %d", n, committers*appends)
	}
	ids := map[int64]int{}
	_, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := rec.Column(0).(*array.Int64)
		for i := range col.Len() {
			ids[col.Value(i)]++
		}
		rec.Release()
	}
	if len(ids) != committers*appends*rows {
		t.Fatalf("%d distinct ids, want %d", len(ids), committers*appends*rows)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("id %d is in the table %d times", id, n)
		}
	}
	t.Logf("%d commits through the server, %d conflicts retried", committers*appends, conflicts.Load())
}

func idTable(first int64, n int) arrow.Table {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range int64(n) {
		b.Field(0).(*array.Int64Builder).Append(first + i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("v", first+i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}
