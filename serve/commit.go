package serve

import (
	"net/http"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// commitRequest is the specification's CommitTableRequest.
type commitRequest struct {
	Identifier   *identifier        `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

func (c commitRequest) creates() bool {
	for _, r := range c.Requirements {
		if r.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

// commitTable hands the requirements and updates to the backing catalog,
// which checks the requirements against the metadata it replaces and
// replaces it only if nobody else did meanwhile: a requirement that does
// not hold, or a commit that lost the race, is a 409 and changes nothing.
func (s *Server) commitTable(r *http.Request) response {
	ident, res := tableIdent(r)
	if res != nil {
		return *res
	}
	var req commitRequest
	if res := decode(r, &req); res != nil {
		return *res
	}
	if req.Identifier != nil && strings.Join(req.Identifier.ident(), "\x1f") != strings.Join(ident, "\x1f") {
		return badRequest("the commit's identifier %s is not the table of the path, %s", strings.Join(req.Identifier.ident(), "."), strings.Join(ident, "."))
	}
	ctx := r.Context()
	if !req.creates() {
		// Without assert-create, a catalog would create a missing table
		// from the updates alone.
		if exists, err := s.cfg.Catalog.CheckTableExists(ctx, ident); err != nil {
			return fromError(err)
		} else if !exists {
			return fail(http.StatusNotFound, "NoSuchTableException", "table %s does not exist", strings.Join(ident, "."))
		}
	}
	meta, loc, err := s.cfg.Catalog.CommitTable(ctx, ident, req.Requirements, req.Updates)
	if err != nil {
		return fromError(err)
	}
	return ok(map[string]any{"metadata-location": loc, "metadata": meta})
}

// commitTransaction commits several tables at once; it is routed only when
// the backing catalog commits them atomically.
func (s *Server) commitTransaction(r *http.Request) response {
	var req struct {
		TableChanges []commitRequest `json:"table-changes"`
	}
	if res := decode(r, &req); res != nil {
		return *res
	}
	if len(req.TableChanges) == 0 {
		return badRequest("a transaction needs at least one table change")
	}
	commits := make([]table.TableCommit, 0, len(req.TableChanges))
	for i, c := range req.TableChanges {
		if c.Identifier == nil || c.Identifier.Name == "" {
			return badRequest("table change %d has no identifier", i)
		}
		commits = append(commits, table.TableCommit{Identifier: c.Identifier.ident(), Requirements: c.Requirements, Updates: c.Updates})
	}
	if err := s.cfg.Catalog.(catalog.TransactionalCatalog).CommitTransaction(r.Context(), commits); err != nil {
		return fromError(err)
	}
	return noContent()
}
