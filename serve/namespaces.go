package serve

import (
	"encoding/json"
	"errors"
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
	ns := strings.Split(raw, "\x1f")
	if err := checkNamespace(ns); err != nil {
		res := badRequest("%v", err)
		return nil, &res
	}
	return ns, nil
}

// decode reads a JSON request body into v; the body's size was capped by
// limitBodies.
func (s *Server) decode(r *http.Request, v any) *response {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			res := s.tooLarge()
			return &res
		}
		res := badRequest("the request body is not valid JSON for this operation: %v", err)
		return &res
	}
	return nil
}

// checkNamespaceLocation refuses a namespace location outside the places
// the server owns: the namespace's tables would go there by default.
func (s *Server) checkNamespaceLocation(ns []string, props map[string]string) *response {
	loc, ok := props["location"]
	if !ok {
		return nil
	}
	p, err := parsePlace(loc)
	if err != nil {
		res := badRequest("location %q of namespace %s is not a location this server accepts: %v; give an absolute path or URI %s", loc, strings.Join(ns, "."), err, s.where())
		return &res
	}
	if !s.allowed(p) {
		res := badRequest("location %q of namespace %s is outside the places this server owns: it places tables only %s; "+
			"leave the location out, give one there, or start floe serve with --allow-location-prefix naming a prefix of %q", loc, strings.Join(ns, "."), s.where(), loc)
		return &res
	}
	return nil
}

func (s *Server) listNamespaces(r *http.Request) response {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, "\x1f")
		if err := checkNamespace(parent); err != nil {
			return badRequest("parent: %v", err)
		}
	}
	nss, err := s.cfg.Catalog.ListNamespaces(r.Context(), parent)
	if err != nil {
		return s.fromError(err)
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
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if err := checkNamespace(req.Namespace); err != nil {
		return badRequest("%v", err)
	}
	if req.Properties == nil {
		req.Properties = map[string]string{}
	}
	if res := s.checkNamespaceLocation(req.Namespace, req.Properties); res != nil {
		return *res
	}
	if err := s.cfg.Catalog.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		return s.fromError(err)
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
		return s.fromError(err)
	}
	return ok(map[string]any{"namespace": ns, "properties": stringMap(props)})
}

func (s *Server) namespaceExists(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	return s.existence(s.cfg.Catalog.CheckNamespaceExists(r.Context(), ns))
}

// existence answers a HEAD: 204 when the thing exists, else the status a
// GET would have, without a body.
func (s *Server) existence(exists bool, err error) response {
	switch {
	case err != nil:
		return response{status: s.fromError(err).status}
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
		return s.fromError(err)
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
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if res := s.checkNamespaceLocation(ns, req.Updates); res != nil {
		return *res
	}
	for _, k := range req.Removals {
		if _, both := req.Updates[k]; both {
			return fail(http.StatusUnprocessableEntity, "UnprocessableEntityException", "property %q is both removed and updated", k)
		}
	}
	sum, err := s.cfg.Catalog.UpdateNamespaceProperties(r.Context(), ns, req.Removals, iceberg.Properties(req.Updates))
	if err != nil {
		return s.fromError(err)
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
