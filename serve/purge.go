package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/maintenance"
)

// ErrUnreadableMetadata is a purge refused before the drop because a file
// the table's metadata names cannot be read: the files to delete are not
// known.
var ErrUnreadableMetadata = errors.New("a file the table's metadata names cannot be read")

// PurgeResult is what a purge deleted and kept.
type PurgeResult struct {
	// Location is the table's.
	Location string
	// Deleted counts the files deleted; Kept those its metadata names that
	// were left (outside its own places, inside another table's, or data
	// and delete files under gc.enabled=false); Failed those whose delete
	// failed (the log names each).
	Deleted, Kept, Failed int
	// ByCatalog tells a REST catalog behind the server purged the table
	// itself, and the counts are not known.
	ByCatalog bool
}

// Purge drops a table and deletes the files its metadata names, as
// Iceberg's own catalogs do: every snapshot's manifest list, manifests,
// data and delete files, the statistics files and the metadata files. It
// never lists a directory, and deletes only files inside the table's own
// places (its location, write.*.path) that lie where the server owns
// tables and that are not inside another table's place: a table whose
// metadata names another table's files, or files elsewhere on the server,
// is dropped and those files stay. With gc.enabled=false data and delete
// files stay too, as in Iceberg. A metadata file that cannot be read
// leaves the table undropped (ErrUnreadableMetadata).
//
// A REST catalog behind the server purges its own tables.
func (s *Server) Purge(ctx context.Context, ident table.Identifier) (PurgeResult, error) {
	if p, ok := s.cfg.Catalog.(catalog.PurgeableTable); ok && s.cfg.Catalog.CatalogType() == catalog.REST {
		return PurgeResult{ByCatalog: true}, p.PurgeTable(ctx, ident)
	}
	// No table is placed while the files to delete are chosen.
	s.placing.Lock()
	defer s.placing.Unlock()
	tbl, err := s.cfg.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return PurgeResult{}, err
	}
	res := PurgeResult{Location: tbl.Location()}
	name := strings.Join(ident, ".")
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return res, err
	}
	files, err := referencedFiles(tbl, fsys)
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrUnreadableMetadata, err)
	}
	others, err := s.tableAreas(ctx, ident)
	if err != nil {
		return res, err
	}
	var own []place
	for _, l := range placesOf(tbl.Location(), tbl.Properties()) {
		if p, err := parsePlace(l.loc); err == nil && s.allowed(p) {
			own = append(own, p)
		}
	}
	if err := s.cfg.Catalog.DropTable(ctx, ident); err != nil {
		return res, err
	}
	gc := maintenance.GCEnabled(tbl)
	for _, f := range files {
		if !mayDelete(f.path, own, others) || (f.data && !gc) {
			res.Kept++
			continue
		}
		if err := fsys.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logger().Warn("purge: a file of the dropped table was not deleted", "table", name, "file", f.path, "error", err)
			res.Failed++
			continue
		}
		res.Deleted++
	}
	s.logger().Info("purged table", "table", name, "deleted", res.Deleted, "kept", res.Kept)
	return res, nil
}

// purgeTable is DELETE ...?purgeRequested=true.
func (s *Server) purgeTable(ctx context.Context, ident table.Identifier) response {
	_, err := s.Purge(ctx, ident)
	if errors.Is(err, ErrUnreadableMetadata) {
		name := strings.Join(ident, ".")
		ref := errorRef()
		s.logger().Error("purge: the table's files cannot be listed", "ref", ref, "table", name, "error", err)
		return fail(http.StatusInternalServerError, "InternalServerError",
			"table %s was not dropped: a file its metadata names cannot be read (ref=%s in the server's log); drop it without purgeRequested=true and delete its files yourself", name, ref)
	}
	if err != nil {
		return s.fromError(err)
	}
	return noContent()
}

// mayDelete tells a file lies inside one of the table's own places and
// in no other table's.
func mayDelete(file string, own []place, others []area) bool {
	p, err := parsePlace(file)
	if err != nil {
		return false
	}
	mine := false
	for _, o := range own {
		mine = mine || p.inside(o)
	}
	if !mine {
		return false
	}
	for _, a := range others {
		if p.overlaps(a.at) {
			return false
		}
	}
	return true
}

// named is a file a table's metadata names; data marks data and delete
// files.
type named struct {
	path string
	data bool
}

// referencedFiles lists the files tbl's metadata names, data and delete
// files first and its metadata file last, so that a purge cut short leaves
// files that metadata still names.
func referencedFiles(tbl *table.Table, fsys icebergio.IO) ([]named, error) {
	meta := tbl.Metadata()
	seen := map[string]bool{}
	var data, manifests, lists, other []named
	add := func(to *[]named, path string, isData bool) {
		if path != "" && !seen[path] {
			seen[path] = true
			*to = append(*to, named{path, isData})
		}
	}
	for _, snap := range meta.Snapshots() {
		add(&lists, snap.ManifestList, false)
		mans, err := snap.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("read manifest list %s: %w", snap.ManifestList, err)
		}
		for _, m := range mans {
			if seen[m.FilePath()] {
				continue
			}
			add(&manifests, m.FilePath(), false)
			if err := eachFile(fsys, m, func(p string) { add(&data, p, true) }); err != nil {
				return nil, err
			}
		}
	}
	for sf := range meta.Statistics() {
		add(&other, sf.StatisticsPath, false)
	}
	for sf := range meta.PartitionStatistics() {
		add(&other, sf.StatisticsPath, false)
	}
	for e := range meta.PreviousFiles() {
		add(&other, e.MetadataFile, false)
	}
	add(&other, tbl.MetadataLocation(), false)
	out := append(data, manifests...)
	out = append(out, lists...)
	return append(out, other...), nil
}

func eachFile(fsys icebergio.IO, m iceberg.ManifestFile, f func(string)) error {
	for e, err := range m.Entries(fsys, false) {
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		f(e.DataFile().FilePath())
	}
	return nil
}
