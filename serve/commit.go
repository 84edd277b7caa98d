package serve

import (
	"context"
	"net/http"
	"slices"
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
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if req.Identifier != nil && strings.Join(req.Identifier.ident(), "\x1f") != strings.Join(ident, "\x1f") {
		return badRequest("the commit's identifier %s is not the table of the path, %s", strings.Join(req.Identifier.ident(), "."), strings.Join(ident, "."))
	}
	ctx := r.Context()
	unlock, res := s.checkCommitPlaces(ctx, []table.Identifier{ident}, []commitRequest{req})
	if res != nil {
		return *res
	}
	defer unlock()
	if !req.creates() {
		// Without assert-create, a catalog would create a missing table
		// from the updates alone.
		if exists, err := s.cfg.Catalog.CheckTableExists(ctx, ident); err != nil {
			return s.fromError(err)
		} else if !exists {
			return fail(http.StatusNotFound, "NoSuchTableException", "table %s does not exist", strings.Join(ident, "."))
		}
	}
	meta, loc, err := s.cfg.Catalog.CommitTable(ctx, ident, req.Requirements, req.Updates)
	if err != nil {
		return s.fromError(err)
	}
	return ok(map[string]any{"metadata-location": loc, "metadata": meta})
}

// commitTransaction commits several tables at once; it is routed only when
// the backing catalog commits them atomically.
func (s *Server) commitTransaction(r *http.Request) response {
	var req struct {
		TableChanges []commitRequest `json:"table-changes"`
	}
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if len(req.TableChanges) == 0 {
		return badRequest("a transaction needs at least one table change")
	}
	commits := make([]table.TableCommit, 0, len(req.TableChanges))
	idents := make([]table.Identifier, 0, len(req.TableChanges))
	for i, c := range req.TableChanges {
		if c.Identifier == nil {
			return badRequest("table change %d has no identifier", i)
		}
		if err := checkIdent(c.Identifier.ident()); err != nil {
			return badRequest("table change %d: %v", i, err)
		}
		commits = append(commits, table.TableCommit{Identifier: c.Identifier.ident(), Requirements: c.Requirements, Updates: c.Updates})
		idents = append(idents, c.Identifier.ident())
	}
	unlock, res := s.checkCommitPlaces(r.Context(), idents, req.TableChanges)
	if res != nil {
		return *res
	}
	defer unlock()
	if err := s.cfg.Catalog.(catalog.TransactionalCatalog).CommitTransaction(r.Context(), commits); err != nil {
		return s.fromError(err)
	}
	return noContent()
}

// commitPlaces is where a commit moves a table's files (its location or a
// write.*.path property). A create must say where: without set-location a
// catalog would write the table's metadata relative to its own working
// directory.
func (s *Server) commitPlaces(ctx context.Context, ident table.Identifier, c commitRequest) ([]located, *response) {
	locs, err := placedBy(c.Updates)
	if err != nil {
		r := badRequest("the commit's updates cannot be read: %v", err)
		return nil, &r
	}
	if c.creates() && !slices.ContainsFunc(locs, func(l located) bool { return l.what == "location" }) {
		// A table that exists fails the assert-create: a 409 from the catalog.
		exists, err := s.cfg.Catalog.CheckTableExists(ctx, ident)
		if err != nil {
			r := s.fromError(err)
			return nil, &r
		}
		if !exists {
			r := badRequest("a commit that creates table %s needs a set-location update: the location stage-create answered", strings.Join(ident, "."))
			return nil, &r
		}
	}
	return locs, nil
}

// checkCommitPlaces refuses commits that would move a table's files where
// the server does not own them or another table has its own. When one
// moves something, the server's placing lock is held until unlock.
func (s *Server) checkCommitPlaces(ctx context.Context, idents []table.Identifier, reqs []commitRequest) (unlock func(), res *response) {
	moves := make([][]located, len(idents))
	moving := false
	for i, ident := range idents {
		locs, res := s.commitPlaces(ctx, ident, reqs[i])
		if res != nil {
			return nil, res
		}
		moves[i], moving = locs, moving || len(locs) > 0
	}
	if !moving {
		return func() {}, nil
	}
	s.placing.Lock()
	for i, ident := range idents {
		if res := s.checkPlaces(ctx, ident, moves[i]); res != nil {
			s.placing.Unlock()
			return nil, res
		}
	}
	return s.placing.Unlock, nil
}
