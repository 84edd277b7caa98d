package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// tableIdent is the {namespace}/{table} of the path.
func tableIdent(r *http.Request) (table.Identifier, *response) {
	ns, res := namespace(r)
	if res != nil {
		return nil, res
	}
	name := r.PathValue("table")
	if err := checkName("table name", name); err != nil {
		res := badRequest("%v", err)
		return nil, &res
	}
	return append(ns, name), nil
}

// identifier is the specification's TableIdentifier.
type identifier struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func (id identifier) ident() table.Identifier {
	return append(append(table.Identifier{}, id.Namespace...), id.Name)
}

// loadResult is the specification's LoadTableResult; a staged table has
// no metadata location yet.
type loadResult struct {
	MetadataLocation string            `json:"metadata-location,omitempty"`
	Metadata         table.Metadata    `json:"metadata"`
	Config           map[string]string `json:"config"`
}

func loaded(tbl *table.Table) response {
	return response{
		status: http.StatusOK,
		header: http.Header{"Etag": {etag(tbl.MetadataLocation())}},
		body:   loadResult{MetadataLocation: tbl.MetadataLocation(), Metadata: tbl.Metadata(), Config: map[string]string{}},
	}
}

// etag names one version of a table: its metadata file, which a commit
// always replaces.
func etag(metadataLocation string) string {
	sum := sha256.Sum256([]byte(metadataLocation))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func (s *Server) listTables(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	if res := s.needNamespace(r.Context(), ns); res != nil {
		return *res
	}
	ids := []identifier{}
	for id, err := range s.cfg.Catalog.ListTables(r.Context(), ns) {
		if err != nil {
			return s.fromError(err)
		}
		ids = append(ids, identifier{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	return ok(map[string]any{"identifiers": ids})
}

func (s *Server) createTable(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	var body struct {
		Name          string            `json:"name"`
		Location      string            `json:"location"`
		Schema        json.RawMessage   `json:"schema"`
		PartitionSpec json.RawMessage   `json:"partition-spec"`
		WriteOrder    json.RawMessage   `json:"write-order"`
		StageCreate   bool              `json:"stage-create"`
		Properties    map[string]string `json:"properties"`
	}
	if res := s.decode(r, &body); res != nil {
		return *res
	}
	req, err := parseCreate(body.Schema, body.PartitionSpec, body.WriteOrder)
	if err != nil {
		return badRequest("the request body is not valid JSON for this operation: %v", err)
	}
	req.Name, req.Location, req.StageCreate, req.Properties = body.Name, body.Location, body.StageCreate, body.Properties
	if req.Schema == nil {
		return badRequest("a table to create needs a name and a schema")
	}
	if err := checkName("table name", req.Name); err != nil {
		return badRequest("%v", err)
	}
	ident := append(ns, req.Name)
	spec, order := iceberg.UnpartitionedSpec, table.UnsortedSortOrder
	if req.PartitionSpec != nil {
		spec = req.PartitionSpec
	}
	if req.WriteOrder != nil {
		order = *req.WriteOrder
	}
	ctx := r.Context()
	if req.StageCreate {
		return s.stageCreate(r, ident, req.Location, req.Schema, spec, order, req.Properties)
	}
	s.placing.Lock()
	defer s.placing.Unlock()
	location := req.Location
	if location == "" && s.warehouse != nil {
		// Checked where the catalog will put it, which it computes the
		// same way.
		var err error
		if location, err = s.defaultLocation(ctx, ident); err != nil {
			return s.fromError(err)
		}
	}
	if res := s.checkPlaces(ctx, ident, tablePlaces(location, req.Properties)); res != nil {
		return *res
	}
	opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(spec), catalog.WithSortOrder(order), catalog.WithProperties(req.Properties)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	tbl, err := s.cfg.Catalog.CreateTable(ctx, ident, req.Schema, opts...)
	if err != nil {
		return s.fromError(err)
	}
	return loaded(tbl)
}

// createRequest is a parsed create-table request.
type createRequest struct {
	Name          string
	Location      string
	Schema        *iceberg.Schema
	PartitionSpec *iceberg.PartitionSpec
	WriteOrder    *table.SortOrder
	StageCreate   bool
	Properties    map[string]string
}

// parseCreate parses a create request's schema, partition spec and write
// order, with ids numbered from 0 raised first (requestids.go).
func parseCreate(schema, spec, order json.RawMessage) (createRequest, error) {
	parts, err := raiseZeroIDs(createParts{Schema: schema, Spec: spec, Order: order})
	if err != nil {
		return createRequest{}, err
	}
	var req createRequest
	for _, p := range []struct {
		raw json.RawMessage
		v   any
	}{{parts.Schema, &req.Schema}, {parts.Spec, &req.PartitionSpec}, {parts.Order, &req.WriteOrder}} {
		if len(p.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(p.raw, p.v); err != nil {
			return createRequest{}, err
		}
	}
	return req, nil
}

// tablePlaces is placesOf, without the location when the catalog picks it.
func tablePlaces(location string, props map[string]string) []located {
	locs := placesOf(location, props)
	if location == "" {
		return locs[1:]
	}
	return locs
}

// stageCreate answers a create with stage-create: the table's first
// metadata, which the client commits later with an assert-create
// requirement; nothing is written now. Its places are checked now, so that
// the client learns early, and again when the create is committed.
func (s *Server) stageCreate(r *http.Request, ident table.Identifier, location string, sc *iceberg.Schema, spec *iceberg.PartitionSpec, order table.SortOrder, props map[string]string) response {
	ctx := r.Context()
	if res := s.needNamespace(ctx, ident[:len(ident)-1]); res != nil {
		return *res
	}
	if res := s.needNoTable(ctx, ident); res != nil {
		return *res
	}
	if location == "" {
		var err error
		if location, err = s.defaultLocation(ctx, ident); errors.Is(err, errNoLocation) {
			return badRequest("%v", err)
		} else if err != nil {
			return s.fromError(err)
		}
	}
	if res := s.checkPlaces(ctx, ident, placesOf(location, props)); res != nil {
		return *res
	}
	meta, err := table.NewMetadata(sc, spec, order, strings.TrimSuffix(location, "/"), props)
	if err != nil {
		return badRequest("the table to create is not valid: %v", err)
	}
	return ok(loadResult{Metadata: meta, Config: map[string]string{}})
}

// defaultLocation places a table as the catalogs do: under its
// namespace's location, else <warehouse>/<namespace>.db/<table>.
func (s *Server) defaultLocation(ctx context.Context, ident table.Identifier) (string, error) {
	ns, name := ident[:len(ident)-1], ident[len(ident)-1]
	nsProps, err := s.cfg.Catalog.LoadNamespaceProperties(ctx, ns)
	if err != nil {
		return "", err
	}
	if loc := nsProps.Get("location", ""); loc != "" {
		return url.JoinPath(loc, name)
	}
	if s.cfg.Warehouse == "" {
		return "", errNoLocation
	}
	return url.JoinPath(s.cfg.Warehouse, strings.Join(ns, ".")+".db", name)
}

func (s *Server) loadTable(r *http.Request) response {
	ident, res := tableIdent(r)
	if res != nil {
		return *res
	}
	tbl, err := s.cfg.Catalog.LoadTable(r.Context(), ident)
	if err != nil {
		return s.fromError(err)
	}
	tag := etag(tbl.MetadataLocation())
	for _, m := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if m = strings.TrimSpace(m); m == tag || m == "*" {
			return response{status: http.StatusNotModified, header: http.Header{"Etag": {tag}}}
		}
	}
	return loaded(tbl)
}

func (s *Server) tableExists(r *http.Request) response {
	ident, res := tableIdent(r)
	if res != nil {
		return *res
	}
	return s.existence(s.cfg.Catalog.CheckTableExists(r.Context(), ident))
}

func (s *Server) dropTable(r *http.Request) response {
	ident, res := tableIdent(r)
	if res != nil {
		return *res
	}
	// A boolean in any case, as Java's servers read it: Python clients send
	// "True". Anything else is refused, not read as false, so that a purge
	// asked for is never silently skipped.
	switch v := r.URL.Query().Get("purgeRequested"); {
	case strings.EqualFold(v, "true"):
		return s.purgeTable(r.Context(), ident)
	case v != "" && !strings.EqualFold(v, "false"):
		return badRequest("purgeRequested=%q is not a boolean; send true or false", v)
	}
	if err := s.cfg.Catalog.DropTable(r.Context(), ident); err != nil {
		return s.fromError(err)
	}
	return noContent()
}

func (s *Server) renameTable(r *http.Request) response {
	var req struct {
		Source      *identifier `json:"source"`
		Destination *identifier `json:"destination"`
	}
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if req.Source == nil || req.Destination == nil {
		return badRequest("a rename needs a source and a destination table identifier")
	}
	for _, id := range []table.Identifier{req.Source.ident(), req.Destination.ident()} {
		if err := checkIdent(id); err != nil {
			return badRequest("%v", err)
		}
	}
	if _, err := s.cfg.Catalog.RenameTable(r.Context(), req.Source.ident(), req.Destination.ident()); err != nil {
		return s.fromError(err)
	}
	return noContent()
}

// needNamespace is the 404 of a namespace that does not exist, or nil.
func (s *Server) needNamespace(ctx context.Context, ns table.Identifier) *response {
	exists, err := s.cfg.Catalog.CheckNamespaceExists(ctx, ns)
	if err == nil && exists {
		return nil
	}
	res := fail(http.StatusNotFound, "NoSuchNamespaceException", "namespace %s does not exist", strings.Join(ns, "."))
	if err != nil {
		res = s.fromError(err)
	}
	return &res
}

// needNoTable is the 409 of a table name already taken, or nil.
func (s *Server) needNoTable(ctx context.Context, ident table.Identifier) *response {
	exists, err := s.cfg.Catalog.CheckTableExists(ctx, ident)
	if err == nil && !exists {
		return nil
	}
	res := fail(http.StatusConflict, "AlreadyExistsException", "table %s already exists", strings.Join(ident, "."))
	if err != nil {
		res = s.fromError(err)
	}
	return &res
}

var errNoLocation = errors.New("the server has no warehouse and the namespace no location; give the table a location")

// reportMetrics takes a client's scan and commit reports; the server
// keeps none of them.
func (s *Server) reportMetrics(*http.Request) response { return noContent() }
