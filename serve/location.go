package serve

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"runtime"
	"strings"
)

// place is a table location, or a file, in the form that two of them are
// compared in: the store (scheme and bucket) and the path within it,
// spelled as the file IO that reads the location spells it. Comparing raw
// strings would take file:///wh/t and /wh/t for two places, and
// /wh/t/../other for a place inside /wh/t.
type place struct {
	store string // "file" for the local file system, else scheme://authority
	path  string // starts with "/", no trailing "/" but for the root
	fold  bool   // the store ignores case in paths
}

// schemeAliases are the schemes that reach the same store as another.
var schemeAliases = map[string]string{"s3a": "s3", "s3n": "s3", "abfss": "abfs", "wasbs": "wasb"}

// parsePlace reads loc as iceberg-go's file IO does: a path or file: URI is
// on the local file system (a file: URI percent-decoded, a path not), an
// object store URI is scheme://bucket/key with the key kept raw. It refuses
// what could name two places: a relative path, "." and ".." segments
// (which the local file system resolves through symbolic links and object
// stores keep as literal keys), empty segments in an object key, control
// characters, queries and fragments.
func parsePlace(loc string) (place, error) {
	if loc == "" {
		return place{}, errors.New("it is empty")
	}
	if hasControl(loc) {
		return place{}, errors.New("it contains a control character")
	}
	scheme, rest, isURI := strings.Cut(loc, ":")
	if !isURI || strings.ContainsAny(scheme, `/\`) || scheme == "" {
		return localPlace(loc)
	}
	scheme = strings.ToLower(scheme)
	if scheme == "file" {
		u, err := url.Parse(loc)
		if err != nil {
			return place{}, fmt.Errorf("it is not a file: URI (%v)", err)
		}
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return place{}, fmt.Errorf("file: URIs name this machine's files, not those of host %q", u.Host)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			return place{}, errors.New("it has a query or fragment")
		}
		p := u.Path
		if u.Opaque != "" {
			if p, err = url.PathUnescape(u.Opaque); err != nil {
				return place{}, fmt.Errorf("it is not a file: URI (%v)", err)
			}
		}
		return localPlace(p)
	}
	authority, key, ok := strings.Cut(strings.TrimPrefix(rest, "//"), "/")
	if !strings.HasPrefix(rest, "//") || authority == "" {
		return place{}, fmt.Errorf("a %s: location is %s://BUCKET/PATH", scheme, scheme)
	}
	if strings.ContainsAny(authority, "?#") || strings.ContainsAny(key, "?#") {
		return place{}, errors.New("it has a query or fragment")
	}
	if !ok || key == "" {
		return place{store: storeOf(scheme, authority), path: "/"}, nil
	}
	key = strings.TrimSuffix(key, "/")
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return place{}, errors.New(`it has an empty path segment ("//"), which an object store keeps as part of the key`)
		case ".", "..":
			return place{}, fmt.Errorf("it has a %q segment", seg)
		}
	}
	return place{store: storeOf(scheme, authority), path: "/" + key}, nil
}

func storeOf(scheme, authority string) string {
	if s, ok := schemeAliases[scheme]; ok {
		scheme = s
	}
	return scheme + "://" + authority
}

// localPlace is a local path: absolute, repeated and trailing slashes
// dropped as the file system drops them.
func localPlace(p string) (place, error) {
	if !strings.HasPrefix(p, "/") {
		return place{}, errors.New("it is not an absolute path or a URI")
	}
	if hasControl(p) {
		return place{}, errors.New("it contains a control character")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return place{}, fmt.Errorf("it has a %q segment", seg)
		}
	}
	// Clean only drops empty segments here: there are no dot segments.
	return place{store: "file", path: path.Clean(p), fold: localFoldsCase}, nil
}

// localFoldsCase: the default file systems of macOS and Windows ignore
// case, so that /wh/T and /wh/t are one directory there.
var localFoldsCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// within tells p is q or lies inside it, comparing case exactly: a
// location whose case differs from its warehouse's is refused even where
// the file system would take it, which errs on the side of refusing.
func (p place) within(q place) bool {
	if p.store != q.store {
		return false
	}
	return p.path == q.path || q.path == "/" || strings.HasPrefix(p.path, q.path+"/")
}

// inside tells p lies strictly inside q.
func (p place) inside(q place) bool { return p.within(q) && p.path != q.path }

// overlaps tells p and q are one place or one holds the other, ignoring
// case where the store does: two tables there would share files.
func (p place) overlaps(q place) bool {
	if p.fold || q.fold {
		p.path, q.path = strings.ToLower(p.path), strings.ToLower(q.path)
	}
	return p.within(q) || q.within(p)
}

func (p place) String() string {
	if p.store == "file" {
		return p.path
	}
	return p.store + p.path
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f })
}
