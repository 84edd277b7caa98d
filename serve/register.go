package serve

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// registerTable adds a table by its metadata file. The server reads only
// metadata files in the places it owns, and tells nothing of a file
// elsewhere: a metadata-location outside gets one answer whether or not a
// file is there, and no answer echoes what a file holds.
func (s *Server) registerTable(r *http.Request) response {
	ns, res := namespace(r)
	if res != nil {
		return *res
	}
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	if res := s.decode(r, &req); res != nil {
		return *res
	}
	if req.MetadataLocation == "" {
		return badRequest("a table to register needs a name and a metadata-location")
	}
	if err := checkName("table name", req.Name); err != nil {
		return badRequest("%v", err)
	}
	if req.Overwrite {
		return badRequest("overwrite is not supported: drop the table first, then register it")
	}
	ctx := r.Context()
	// floe's register creates a missing namespace; a REST client expects
	// the 404 that creating a table in one gets.
	if res := s.needNamespace(ctx, ns); res != nil {
		return *res
	}
	ident := append(ns, req.Name)
	if res := s.needNoTable(ctx, ident); res != nil {
		return *res
	}
	if s.cfg.Register == nil {
		return badRequest("this server registers no tables")
	}
	loc := req.MetadataLocation
	if p, err := parsePlace(loc); err != nil || !s.allowed(p) {
		return badRequest("metadata-location %q is not a file this server reads: it reads metadata files only %s; "+
			"copy the table's files there, or start floe serve with --allow-location-prefix naming the table's folder", loc, s.where())
	}
	if !strings.HasSuffix(loc, ".metadata.json") && !strings.HasSuffix(loc, ".metadata.json.gz") {
		return badRequest("metadata-location %q does not name a table metadata file (NNNNN-UUID.metadata.json)", loc)
	}
	meta, err := s.readMetadata(ctx, ident, loc)
	if errors.Is(err, fs.ErrNotExist) {
		return badRequest("there is no metadata file at %q; give the location of the table's current metadata file", loc)
	} else if err != nil {
		// The cause could quote the file; the log has it.
		ref := errorRef()
		s.logger().Warn("register: the metadata file does not read", "ref", ref, "metadata-location", loc, "error", err)
		return badRequest("%q is not Iceberg table metadata that this server can read (ref=%s in the server's log)", loc, ref)
	}
	s.placing.Lock()
	defer s.placing.Unlock()
	if res := s.checkPlaces(ctx, ident, placesOf(meta.Location(), meta.Properties())); res != nil {
		return *res
	}
	tbl, err := s.cfg.Register(ctx, ident, loc)
	if err != nil {
		return s.fromError(err)
	}
	return loaded(tbl)
}

// readMetadata reads and parses a metadata file.
func (s *Server) readMetadata(ctx context.Context, ident table.Identifier, loc string) (table.Metadata, error) {
	tbl, err := table.NewFromLocation(ctx, ident, loc, icebergio.LoadFSFunc(s.cfg.Properties, loc), nil)
	if err != nil {
		return nil, err
	}
	return tbl.Metadata(), nil
}
