package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// ErrNoMetadata marks a location where no Iceberg table metadata was found.
var ErrNoMetadata = errors.New("no Iceberg table metadata")

// PathPrefix maps locations recorded in table metadata (s3a://bucket/t,
// relative paths of a copied table) to where the files really are.
type PathPrefix struct{ From, To string }

// ParsePathPrefix reads FROM=TO.
func ParsePathPrefix(s string) (PathPrefix, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" {
		return PathPrefix{}, fmt.Errorf("%w: path prefix %q must be FROM=TO, e.g. s3a://bucket/table=/data/table", ingest.ErrConfig, s)
	}
	return PathPrefix{From: from, To: to}, nil
}

// IsTablePath tells a table given by location (a directory or a metadata
// file) from a catalog name: a location contains a path separator or names
// a metadata file (db.json is the table json of namespace db).
// "./events" names a directory in the current directory.
func IsTablePath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".metadata.json") || strings.HasSuffix(s, ".metadata.json.gz")
}

// LoadTableAt opens a table without a catalog, from its directory (the
// current metadata found as FindMetadata does) or a metadata file. Paths in
// the metadata are mapped by prefixes; paths under the location recorded in
// the metadata are also mapped to the directory given, so a copied or moved
// table reads in place. props configure object storage (s3.*, gcs.*).
func LoadTableAt(ctx context.Context, location string, props iceberg.Properties, prefixes []PathPrefix) (*table.Table, error) {
	metaPath := location
	if st, err := os.Stat(location); err == nil && st.IsDir() {
		if metaPath, err = FindMetadata(location); err != nil {
			return nil, err
		}
	} else if err != nil && !IsURL(location) {
		return nil, fmt.Errorf("table location %s: %w", location, err)
	}
	pio := &prefixIO{rules: prefixes, props: props, remote: map[string]icebergio.IO{}}
	fsF := func(context.Context) (icebergio.IO, error) { return pio, nil }
	// A metadata file lives in <table>/metadata/.
	root := filepath.Dir(filepath.Dir(metaPath))
	tbl, err := table.NewFromLocation(ctx, table.Identifier{filepath.Base(root)}, metaPath, fsF, nil)
	if err != nil {
		if data, rerr := pio.ReadFile(metaPath); rerr == nil && strings.Contains(string(data), `"view-uuid"`) {
			return nil, fmt.Errorf("%w: %s is Iceberg view metadata, not table metadata", ErrNoMetadata, metaPath)
		}
		return nil, fmt.Errorf("read table metadata %s: %w", metaPath, err)
	}
	if !IsURL(metaPath) {
		// Last resort: the table as recorded is the table as found.
		pio.rules = append(pio.rules, PathPrefix{From: tbl.Location(), To: root})
	}
	return tbl, nil
}

var (
	versionName = regexp.MustCompile(`^v(\d+)(\.gz)?\.metadata\.json(\.gz)?$`)
	uuidName    = regexp.MustCompile(`^(\d+)-[0-9a-fA-F-]{36}(\.gz)?\.metadata\.json(\.gz)?$`)
)

// FindMetadata returns the current metadata file of a table directory:
// the one metadata/version-hint.text names, else the highest vN.metadata.json,
// else the highest NNNNN-<uuid>.metadata.json (gzip-compressed variants
// included). dir may also be the metadata directory itself.
//
// Names that carry no version (such as a hand-named vfinal.metadata.json)
// are never picked: which file is current cannot be told from them, and the
// spec's file-system tables number their metadata (v<N>.metadata.json, with
// version-hint.text naming the latest). Such a table is read by giving its
// metadata file itself.
func FindMetadata(dir string) (string, error) {
	mdir := filepath.Join(dir, "metadata")
	if st, err := os.Stat(mdir); err != nil || !st.IsDir() {
		mdir = dir
	}
	if hint, err := os.ReadFile(filepath.Join(mdir, "version-hint.text")); err == nil {
		h := strings.TrimSpace(string(hint))
		var cands []string
		if _, err := strconv.Atoi(h); err == nil {
			cands = []string{"v" + h + ".metadata.json", "v" + h + ".gz.metadata.json", "v" + h + ".metadata.json.gz"}
		} else {
			h = filepath.Base(h)
			cands = []string{h, h + ".metadata.json", h + ".gz.metadata.json"}
		}
		for _, c := range cands {
			if st, err := os.Stat(filepath.Join(mdir, c)); err == nil && !st.IsDir() {
				return filepath.Join(mdir, c), nil
			}
		}
	}
	entries, err := os.ReadDir(mdir)
	if err != nil {
		return "", fmt.Errorf("%w in %s: %v", ErrNoMetadata, dir, err)
	}
	best, bestN, bestKind := "", int64(-1), 0
	for _, e := range entries {
		for kind, re := range []*regexp.Regexp{versionName, uuidName} {
			m := re.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			// vN names win over NNNNN-uuid ones: a table with both was
			// written by a Hadoop-style catalog, which only writes vN.
			if best == "" || kind < bestKind || (kind == bestKind && n > bestN) {
				best, bestN, bestKind = e.Name(), n, kind
			}
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w in %s: looked for metadata/version-hint.text, vN.metadata.json and NNNNN-<uuid>.metadata.json; pass the metadata file itself", ErrNoMetadata, dir)
	}
	return filepath.Join(mdir, best), nil
}

// prefixIO reads files through the prefix rules, from local disk or from
// the object store the mapped location names.
type prefixIO struct {
	rules []PathPrefix
	props iceberg.Properties

	mu     sync.Mutex
	remote map[string]icebergio.IO
}

var _ icebergio.ReadFileIO = (*prefixIO)(nil)

// resolve applies the longest matching rule. Leading "./" and "file://"
// with a relative path are normalised first, as writers record them.
func (p *prefixIO) resolve(name string) string {
	norm := func(s string) string {
		s = strings.TrimPrefix(s, "./")
		return strings.TrimSuffix(s, "/")
	}
	n := norm(name)
	best, bestLen := n, -1
	for _, r := range p.rules {
		from := norm(r.From)
		if from == "" {
			continue
		}
		if n == from || strings.HasPrefix(n, from+"/") {
			if len(from) > bestLen {
				best, bestLen = filepath.Join(r.To, strings.TrimPrefix(n, from)), len(from)
			}
		}
	}
	return best
}

func (p *prefixIO) fs(name string) (icebergio.IO, string, error) {
	target := p.resolve(name)
	u, err := url.Parse(target)
	if err != nil || len(u.Scheme) <= 1 || u.Scheme == "file" {
		if strings.HasPrefix(target, "file://") && !strings.HasPrefix(target, "file:///") {
			target = strings.TrimPrefix(target, "file://") // a relative path written as a URI
		}
		return icebergio.LocalFS{}, target, nil
	}
	key := u.Scheme + "://" + u.Host
	p.mu.Lock()
	defer p.mu.Unlock()
	if fsys, ok := p.remote[key]; ok {
		return fsys, target, nil
	}
	fsys, err := icebergio.LoadFS(context.Background(), p.props, target)
	if err != nil {
		return nil, "", fmt.Errorf("open storage for %s (map it to a local copy with --path-prefix FROM=TO): %w", name, err)
	}
	p.remote[key] = fsys
	return fsys, target, nil
}

func (p *prefixIO) Open(name string) (icebergio.File, error) {
	fsys, target, err := p.fs(name)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(target)
	if err != nil && errors.Is(err, fs.ErrNotExist) && target != name {
		return nil, fmt.Errorf("%s (recorded as %s): %w", target, name, err)
	}
	return f, err
}

func (p *prefixIO) ReadFile(name string) ([]byte, error) {
	fsys, target, err := p.fs(name)
	if err != nil {
		return nil, err
	}
	if rf, ok := fsys.(icebergio.ReadFileIO); ok {
		return rf.ReadFile(target)
	}
	f, err := fsys.Open(target)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	_, err = f.ReadAt(buf, 0)
	return buf, err
}

// Remove refuses: a table opened by location is read, never changed.
func (p *prefixIO) Remove(name string) error {
	return fmt.Errorf("table opened by location is read-only: cannot remove %s", name)
}
