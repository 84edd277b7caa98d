package serve

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// namespace is the {namespace} path parameter: its levels are joined by the
// unit separator (0x1F), which the path carries escaped as %1F.
func namespace(r *http.Request) (table.Identifier, *response) {
	raw := r.PathValue("namespace")
	if raw == "" {
		res := badRequest("the namespace in the path is empty")
		return nil, &res
	}
	return strings.Split(raw, "\x1f"), nil
}

// decode reads a JSON request body into v.
func decode(r *http.Request, v any) *response {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<20))
	if err := dec.Decode(v); err != nil {
		res := badRequest("the request body is not valid JSON for this operation: %v", err)
		return &res
	}
	return nil
}

func (s *Server) listNamespaces(r *http.Request) response {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, "\x1f")
	}
	nss, err := s.cfg.Catalog.ListNamespaces(r.Context(), parent)
	if err != nil {
		return fromError(err)
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, ns)
	}
	return ok(map[string]any{"namespaces": out})
}

func (s *Server) createNamespace(r *http.Request) response {
	var req struct {
		Namespace  []string          `json:"namespace"`
		Properties map[string]string `json:"properties"`
	}
	if res := decode(r, &req); res != nil {
		return *res
	}
	if len(req.Namespace) == 0 {
		return badRequest("the namespace to create is empty")
	}
	if req.Properties == nil {
		req.Properties = map[string]string{}
	}
	if err := s.cfg.Catalog.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		return fromError(err)
	}
	props, err := s.cfg.Catalog.LoadNamespaceProperties(r.Context(), req.Namespace)
	if err != nil {
		props = req.Properties
	}
	return ok(map[string]any{"namespace": req.Namespace, "properties": stringMap(props)})
}

func (s *Server) loadNamespace(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	props, err := s.cfg.Catalog.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		return fromError(err)
	}
	return ok(map[string]any{"namespace": ns, "properties": stringMap(props)})
}

func (s *Server) namespaceExists(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	return existence(s.cfg.Catalog.CheckNamespaceExists(r.Context(), ns))
}

// existence answers a HEAD: 204 when the thing exists, else the status a
// GET would have, without a body.
func existence(exists bool, err error) response {
	switch {
	case err != nil:
		return response{status: fromError(err).status}
	case !exists:
		return response{status: http.StatusNotFound}
	}
	return noContent()
}

func (s *Server) dropNamespace(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	if err := s.cfg.Catalog.DropNamespace(r.Context(), ns); err != nil {
		return fromError(err)
	}
	return noContent()
}

func (s *Server) updateNamespaceProperties(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	var req struct {
		Removals []string          `json:"removals"`
		Updates  map[string]string `json:"updates"`
	}
	if res := decode(r, &req); res != nil {
		return *res
	}
	for _, k := range req.Removals {
		if _, both := req.Updates[k]; both {
			return fail(http.StatusUnprocessableEntity, "UnprocessableEntityException", "property %q is both removed and updated", k)
		}
	}
	sum, err := s.cfg.Catalog.UpdateNamespaceProperties(r.Context(), ns, req.Removals, iceberg.Properties(req.Updates))
	if err != nil {
		return fromError(err)
	}
	return ok(map[string]any{"updated": nonNil(sum.Updated), "removed": nonNil(sum.Removed), "missing": nonNil(sum.Missing)})
}

func stringMap(p iceberg.Properties) map[string]string {
	if p == nil {
		return map[string]string{}
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
